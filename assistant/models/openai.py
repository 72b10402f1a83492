"""The server backend: any OpenAI-compatible model server (llama-cpp-python's, llama.cpp's
llama-server, vLLM, Ollama), one constrained step per call, streamed.

Guards what leaves the process and what comes back:
- the API key is a vault secret sent only as an Authorization header, only to a host that
  secret is bound to, only over https or to loopback; the client never follows redirects and
  ignores proxy environment variables, so the header goes to the endpoint and nowhere else;
- the turn structure: for llama-cpp-python's and llama.cpp's servers the prompt is rendered
  here in our own chat format (chat_format.py). llama.cpp's server gets token ids (content
  tokenized by the server with special-token parsing off); llama-cpp-python's server only takes
  text and tokenizes it with special parsing on, so every content segment is neutralised
  (special_tokens.py) and then checked with the server's own tokenizer (a round trip through
  /extras/tokenize and /extras/detokenize, which drops control tokens): content that would still
  become a control token is neutralised harder, and refused if even that fails. Chat-completions
  servers (vLLM, Ollama, others) get every message's content neutralised by shape; where such a
  server also offers its tokenizer (llama.cpp's `/tokenize` with pieces, llama-cpp-python's
  `/extras/tokenize`; asked once per session, each try bounded by PROBE_TIMEOUT), the control
  tokens it finds in the content (the served model's own list, whatever their shape) are broken
  too and the result is checked with it again: refused if it cannot be made safe;
- the action: constrained where the server documents a way (llama.cpp grammars from our own GBNF,
  vLLM's json_schema response format, Ollama's `format`), detected from the server's model list
  (never by sending something that might crash it); otherwise the agent's strict parsing and its
  bounded corrective retries (an invalid step is answered with the reason, up to max_steps);
- failures: an unreachable endpoint fails at once with one line naming the URL and the config
  key; refused auth, an unknown model name, HTTP errors (5xx retried twice, then a clear error),
  a reply that is not JSON are each a ModelError saying what to fix; a malformed or endless
  stream ends the step (an invalid step), bounded by the tool timeout. Every read is bounded in
  bytes and in wall time (not only per read: a server trickling keep-alives or one endless line
  cannot hold the run), and no answer is read whole before its size is checked;
- what comes back about the key: a server that echoes the API key in an error body or stream
  error has it replaced by [redacted:NAME] before the text reaches any message.
"""

from __future__ import annotations

import ipaddress
import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from assistant.models.base import ModelError, StepResult
from assistant.models.chat_format import FORMATS, ChatFormatError, Segment
from assistant.models.grammar import schema_to_gbnf
from assistant.models.special_tokens import aggressive, break_spellings, neutralise
from assistant.display.terminal import escape
from assistant.secrets.vault import split_host

if TYPE_CHECKING:
    import httpx

    from assistant.secrets.vault import Vault

OPENAI_PREFIX = "openai:"

# Server flavours, detected from GET {endpoint}/models ("owned_by" of the models listed).
LLAMA_CPP_PYTHON = "llama-cpp-python"
LLAMA_SERVER = "llama.cpp"
VLLM = "vllm"
OLLAMA = "ollama"
GENERIC = "generic"

CONNECT_TIMEOUT = 5.0
RETRIES = 2              # extra tries after a 5xx / 429
RETRY_PAUSE = 0.5        # seconds, doubled per retry
CHARS_PER_TOKEN = 32     # a stream longer than max_tokens * this is not a step
MAX_BODY_BYTES = 32 << 20    # a non-streamed answer (model list, token ids) larger than this is refused
STREAM_BYTES_PER_TOKEN = 4096  # raw bytes (framing, usage, keep-alives) a stream may spend per token
MAX_DETAIL_BYTES = 4096      # of an error body, kept for the message
_BOS = ("<bos>", "<|begin_of_text|>", "<s>")
PROBE_TIMEOUT = 3.0          # seconds one try at asking a server which tokenizer endpoint it offers
MAX_PROBE_BYTES = 1 << 20    # of a probe's answer
TOKENIZE_PIECES = "llama.cpp /tokenize"            # token ids and pieces, special parsing on or off
TOKENIZE_EXTRAS = "llama-cpp-python /extras/tokenize"   # token ids (special parsing on), detokenize


@dataclass(frozen=True)
class Endpoint:
    """The API base URL, split into what the auth check compares."""

    url: str          # e.g. http://127.0.0.1:8080/v1 (no trailing slash)
    scheme: str
    host: str         # normalized (lowercase, IPv6 compressed)
    port: int

    @property
    def loopback(self) -> bool:
        # "localhost." is not "localhost": /etc/hosts names the latter only, so the former is
        # asked of DNS, which may answer any address (the key would go there over plain http).
        if (urllib.parse.urlsplit(self.url).hostname or "").endswith("."):
            return False
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def root(self) -> str:
        """scheme://host:port (Ollama's and llama-server's native APIs live there)."""
        parts = urllib.parse.urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


def parse_endpoint(url: object) -> Endpoint:
    if not isinstance(url, str) or not url.strip():
        raise ModelError("model.endpoint is empty: set it to the server's API base, e.g. "
                         "endpoint = \"http://127.0.0.1:8080/v1\" (or use --model openai:URL)")
    url = url.strip().rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(f"model.endpoint {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)")
    if parts.username or parts.password:
        raise ModelError("model.endpoint must not carry credentials; name a vault secret in model.api_key")
    if parts.query or parts.fragment:
        raise ModelError(f"model.endpoint {url!r} must not have a query or fragment")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ModelError(f"model.endpoint {url!r} has a bad port") from None
    host = parts.hostname.rstrip(".").lower()
    if ":" in host:
        host = ipaddress.IPv6Address(host).compressed
    return Endpoint(url=url, scheme=parts.scheme, host=host, port=port)


def _bound(hosts: tuple[str, ...], ep: Endpoint) -> bool:
    for binding in hosts:
        try:
            host, port = split_host(binding)
        except (ValueError, IndexError):
            continue
        if host.strip("[]") == ep.host and (port is None or port == ep.port):   # "[::1]" binds ::1
            return True
    return False


def auth_header(name: object, vault: Vault | None, ep: Endpoint) -> dict[str, str]:
    """{"Authorization": "Bearer ..."} for vault secret `name`, or a ModelError saying why it is
    not sent. Empty name: no header."""
    if name in (None, ""):
        return {}
    if not isinstance(name, str):
        raise ModelError("model.api_key must be the NAME of a vault secret")
    if ep.scheme != "https" and not ep.loopback:
        raise ModelError(f"model.api_key is only sent over https or to loopback; {ep.url} is neither "
                         "(use an https:// endpoint)")
    if vault is None:
        raise ModelError(f"model.api_key names vault secret {name!r}, but the vault is locked or missing "
                         "in this session")
    try:
        present = name in vault
        hosts = tuple(vault.hosts(name)) if present else ()
    except Exception:
        raise ModelError(f"model.api_key {name!r}: the vault could not be read") from None
    if not present:
        raise ModelError(f"model.api_key {name!r}: no such secret in the vault (add it with "
                         f"`assistant vault set {name} --host {ep.host}:{ep.port}`)")
    if not _bound(hosts, ep):
        where = ", ".join(hosts) if hosts else "no host"
        raise ModelError(f"model.api_key {name!r} is bound to {where}, not to {ep.host}:{ep.port}; the person "
                         f"can bind it with `assistant vault set {name} --host {ep.host}:{ep.port}`")
    try:
        value = vault.get(name)
    except Exception:
        raise ModelError(f"model.api_key {name!r}: the vault could not be read") from None
    if not value or any(ord(c) < 33 or 127 <= ord(c) < 160 or ord(c) > 255 for c in value):
        raise ModelError(f"model.api_key {name!r}: the secret is empty or has spaces, control or "
                         "non-Latin-1 characters, so it cannot be sent as a bearer token")
    return {"Authorization": f"Bearer {value}"}


def detect_flavour(models: list[dict]) -> str:
    owners = {str(m.get("owned_by", "")).lower() for m in models if isinstance(m, dict)}
    if "me" in owners:
        return LLAMA_CPP_PYTHON
    if "llamacpp" in owners:
        return LLAMA_SERVER
    if "vllm" in owners:
        return VLLM
    if owners & {"library", "ollama"}:
        return OLLAMA
    return GENERIC


@dataclass
class _Stream:
    """What one streamed step produced."""

    parts: list[str]
    finish: str = ""
    prompt_tokens: int = 0
    evaluated: int | None = None
    cached: int | None = None
    completion: int = 0


class OpenAIModel:
    """A model behind an OpenAI-compatible server. `config` is the [model] section."""

    def __init__(self, config: dict, *, vault: Vault | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        try:
            import httpx
        except ImportError:
            raise ModelError("the server backend needs httpx: pip install 'assistant[server]'") from None
        cfg = dict(config or {})
        self.endpoint = parse_endpoint(cfg.get("endpoint"))
        self.chat_format = str(cfg.get("chat_format") or "gemma")
        if self.chat_format not in FORMATS:
            raise ModelError(f"model.chat_format {self.chat_format!r} is not supported with the server backend; "
                             f"use one of {', '.join(repr(f) for f in FORMATS)}")
        try:
            self.temperature = float(cfg.get("temperature", 0.2))
            self.seed = int(cfg.get("seed", 42))
            self.repeat_penalty = float(cfg.get("repeat_penalty", 1.1))
        except (TypeError, ValueError):
            raise ModelError("model.temperature, model.seed and model.repeat_penalty must be numbers") from None
        self.timeout = max(1.0, float(timeout))
        self._headers = auth_header(cfg.get("api_key", ""), vault, self.endpoint)
        self._key_name = str(cfg.get("api_key") or "")
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT, self.timeout)),
            follow_redirects=False, trust_env=False, transport=transport,
            headers={"Accept": "application/json, text/event-stream", "Accept-Encoding": "identity"},
        )
        self._httpx = httpx
        self._checked: dict[str, str] = {}     # content segment -> text safe to send
        self._tokenizer: str | None = None     # what a chat-completions server offers (probed once)
        self._tokenizer_probed = False
        models = self.list_models()
        ids = [str(m.get("id")) for m in models if isinstance(m, dict) and m.get("id")]
        wanted = str(cfg.get("name") or "")
        if wanted:
            if wanted not in ids:
                raise ModelError(f"the server at {self.endpoint.url} has no model {wanted!r} (model.name); "
                                 f"it serves: {_short(', '.join(ids), 300) or 'nothing'}")
            self.model_id = wanted
        elif len(ids) == 1:
            self.model_id = ids[0]
        else:
            raise ModelError(f"the server at {self.endpoint.url} serves {len(ids)} models "
                             f"({_short(', '.join(ids), 300) or 'none'}): set model.name to one of them")
        self.flavour = detect_flavour(models)
        self.name = f"openai:{self.endpoint.url} ({_short(self.model_id, 120)}, {self.flavour})"

    def scrub(self, text: str) -> str:
        """`text` (from the server) with the API key replaced by [redacted:NAME]: a server that
        echoes the Authorization header in an error must not put the key into a message."""
        auth = self._headers.get("Authorization", "")
        value = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        if value and value in text:
            text = text.replace(value, f"[redacted:{self._key_name}]")
        return text

    # -- HTTP
    def _url(self, path: str) -> str:
        return self.endpoint.url + path

    def _fail(self, exc: Exception, url: str) -> ModelError:
        httpx = self._httpx
        if isinstance(exc, httpx.ConnectError):
            return ModelError(f"cannot reach the model server at {url} (model.endpoint): "
                              f"{_reason(exc)}; is it running?")
        if isinstance(exc, httpx.TimeoutException):
            return ModelError(f"the model server at {url} (model.endpoint) did not answer within "
                              f"{self.timeout:g}s")
        return ModelError(f"the model server at {url} (model.endpoint) failed: {type(exc).__name__}: "
                          f"{_reason(exc)}")

    def _check_status(self, resp: httpx.Response, url: str) -> None:
        code = resp.status_code
        if code < 400:
            if 300 <= code < 400:
                raise ModelError(f"the model server at {url} redirected (HTTP {code}); redirects are not followed: "
                                 "set model.endpoint to the final URL")
            return
        try:
            raw = _capped(resp, time.monotonic() + min(self.timeout, 5.0), MAX_DETAIL_BYTES, truncate=True)
            detail = _short(self.scrub(raw.decode("utf-8", "replace")))
        except Exception:
            detail = ""
        if code in (401, 403):
            raise ModelError(f"the model server at {url} refused the request (HTTP {code}): check that "
                             "model.api_key names the right vault secret")
        if code == 404:
            raise ModelError(f"{url}: not found (HTTP 404): is model.endpoint the API base (e.g. "
                             f"http://127.0.0.1:8080/v1) and model.name right? {detail}".rstrip())
        raise ModelError(f"the model server at {url} answered HTTP {code}: {detail or 'no detail'}")

    def _request(self, method: str, path: str, body: dict | None = None, *, url: str | None = None) -> Any:
        """One non-streamed request with bounded retries; the decoded JSON body."""
        url = url or self._url(path)
        pause = RETRY_PAUSE
        for attempt in range(RETRIES + 1):
            deadline = time.monotonic() + self.timeout
            try:
                with self._http.stream(method, url, json=body, headers=self._headers) as resp:
                    if (resp.status_code >= 500 or resp.status_code == 429) and attempt < RETRIES:
                        retry = True
                    else:
                        retry = False
                        self._check_status(resp, url)
                        try:
                            raw = _capped(resp, deadline, MAX_BODY_BYTES)
                        except _Cut as cut:
                            what = (f"more than {MAX_BODY_BYTES >> 20} MiB" if cut.reason == "length"
                                    else f"an answer that did not end within {self.timeout:g}s")
                            raise ModelError(f"the model server at {url} (model.endpoint) sent {what}: is "
                                             "model.endpoint the API base of an OpenAI-compatible server?") from None
                        ctype = resp.headers.get('content-type', 'no content type')
            except self._httpx.HTTPError as exc:
                raise self._fail(exc, url) from None
            if retry:
                time.sleep(pause)
                pause *= 2
                continue
            try:
                return json.loads(raw)
            except (ValueError, RecursionError):    # nested past the parser's depth: not an answer
                raise ModelError(f"the model server at {url} did not answer JSON (got "
                                 f"{_short(ctype, 80)}): is model.endpoint "
                                 "the API base of an OpenAI-compatible server?") from None
        raise AssertionError("unreachable")

    def list_models(self) -> list[dict]:
        data = self._request("GET", "/models")
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise ModelError(f"{self._url('/models')} did not answer a model list: is model.endpoint the API "
                             "base of an OpenAI-compatible server?")
        return models

    # -- prompt safety
    def _server_roundtrip(self, text: str) -> str:
        """What llama-cpp-python's server makes of `text` (tokenized with special parsing on, then
        detokenized without control tokens)."""
        toks = self._request("POST", "", {"input": text, "model": self.model_id},
                             url=self.endpoint.root + "/extras/tokenize").get("tokens")
        if not isinstance(toks, list):
            raise ModelError(f"{self.endpoint.root}/extras/tokenize did not answer tokens")
        out = self._request("POST", "", {"tokens": toks, "model": self.model_id},
                            url=self.endpoint.root + "/extras/detokenize").get("text")
        if not isinstance(out, str):
            raise ModelError(f"{self.endpoint.root}/extras/detokenize did not answer text")
        return out

    def _safe_text(self, content: str) -> str:
        """Content that the server's tokenizer will not turn into any control token."""
        hit = self._checked.get(content)
        if hit is not None:
            return hit
        for candidate in (content, neutralise(content), aggressive(neutralise(content))):
            if not candidate.strip() or _same(self._server_roundtrip(candidate), candidate):
                break
        else:
            raise ModelError("refusing to send a message: the server's tokenizer turns part of it into control "
                             "tokens even after neutralising (its special tokens have an unknown shape)")
        if len(self._checked) > 512:
            self._checked.clear()
        self._checked[content] = candidate
        return candidate

    def render_text(self, messages: list[dict]) -> str:
        """The prompt for llama-cpp-python's server: our chat format, content made safe, without
        the leading BOS (the server adds it)."""
        try:
            segs: list[Segment] = FORMATS[self.chat_format](messages)
        except ChatFormatError as exc:
            raise ModelError(f"cannot render the conversation: {exc}") from None
        out: list[str] = []
        for i, (text, ctrl) in enumerate(segs):
            if ctrl:
                if i == 0:
                    for bos in _BOS:
                        if text.startswith(bos):
                            text = text[len(bos):]
                            break
                out.append(text)
            else:
                out.append(self._safe_text(text))
        return "".join(out)

    def _token_ids(self, messages: list[dict]) -> list[int]:
        """llama-server: control segments tokenized with special parsing, content without."""
        try:
            segs = FORMATS[self.chat_format](messages)
        except ChatFormatError as exc:
            raise ModelError(f"cannot render the conversation: {exc}") from None
        ids: list[int] = []
        for text, ctrl in segs:
            key = ("\x00ctrl" if ctrl else "\x00text") + text
            hit = self._checked.get(key)
            if hit is None:
                data = self._request("POST", "", {"content": text, "add_special": False, "parse_special": ctrl},
                                     url=self.endpoint.root + "/tokenize")
                toks = data.get("tokens") if isinstance(data, dict) else None
                if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
                    raise ModelError(f"{self.endpoint.root}/tokenize did not answer token ids")
                hit = json.dumps(toks)
                self._checked[key] = hit
            ids.extend(json.loads(hit))
        return ids

    def _probe(self, path: str, body: dict) -> Any:
        """One try at POST {root}{path}, bounded by PROBE_TIMEOUT in all: the decoded JSON, or
        None if the server does not offer it (any error, any status but 200, not JSON)."""
        url = self.endpoint.root + path
        deadline = time.monotonic() + PROBE_TIMEOUT
        try:
            with self._http.stream("POST", url, json=body, headers=self._headers, timeout=PROBE_TIMEOUT) as resp:
                if resp.status_code != 200:
                    return None
                raw = _capped(resp, deadline, MAX_PROBE_BYTES)
            return json.loads(raw)
        except (self._httpx.HTTPError, _Cut, ValueError, RecursionError):
            return None

    def served_tokenizer(self) -> str | None:
        """Which tokenizer endpoint this chat-completions server offers (TOKENIZE_PIECES,
        TOKENIZE_EXTRAS) or None; asked once per session (this model object)."""
        if not self._tokenizer_probed:
            self._tokenizer_probed = True
            got = self._probe("/tokenize", {"content": "a", "add_special": False, "parse_special": True,
                                            "with_pieces": True})
            if _pieces(got) is not None:
                self._tokenizer = TOKENIZE_PIECES
            else:
                got = self._probe("/extras/tokenize", {"input": "a", "model": self.model_id})
                if isinstance(got, dict) and isinstance(got.get("tokens"), list):
                    self._tokenizer = TOKENIZE_EXTRAS
        return self._tokenizer

    def _control_spellings(self, text: str) -> list[str] | None:
        """llama.cpp's /tokenize: None when tokenizing `text` with special parsing on and off
        agree (no control token in it); else the spellings of the control tokens it finds."""
        url = self.endpoint.root + "/tokenize"
        special, plain = (_pieces(self._request("POST", "", {"content": text, "add_special": False,
                                                             "parse_special": on, "with_pieces": True}, url=url))
                          for on in (True, False))
        if special is None or plain is None:
            raise ModelError(f"{url} did not answer tokens with pieces")
        if [i for i, _ in special] == [i for i, _ in plain]:
            return None
        plain_ids = {i for i, _ in plain}
        return [piece for i, piece in special if i not in plain_ids and piece]

    def _chat_safe(self, content: str) -> str:
        """A chat-completions message's content: every special-token shape broken; then, where
        the server offers its tokenizer, every control token it still finds broken and the
        result checked again (harder, then refused: never sent with a control token in it)."""
        key = "\x00chat" + content
        hit = self._checked.get(key)
        if hit is not None:
            return hit
        text = neutralise(content)
        offered = self.served_tokenizer() if text.strip() else None
        if offered == TOKENIZE_PIECES:
            spellings = self._control_spellings(text)
            if spellings is not None:
                text = break_spellings(text, spellings)
                if self._control_spellings(text) is not None:
                    text = aggressive(text)
                    if self._control_spellings(text) is not None:
                        raise ModelError("refusing to send a message: the server's tokenizer turns part of it into "
                                         "control tokens even after neutralising")
        elif offered == TOKENIZE_EXTRAS:
            for candidate in (text, aggressive(text)):
                if _same(self._server_roundtrip(candidate), candidate):
                    text = candidate
                    break
            else:
                raise ModelError("refusing to send a message: the server's tokenizer turns part of it into control "
                                 "tokens even after neutralising (its special tokens have an unknown shape)")
        if len(self._checked) > 512:
            self._checked.clear()
        self._checked[key] = text
        return text

    def _chat_messages(self, messages: list[dict]) -> list[dict]:
        out = []
        for m in messages:
            role = m.get("role")
            content = m.get("content")
            if not isinstance(content, str):
                raise ModelError("cannot render the conversation: content must be text")
            out.append({"role": role if role in ("system", "user", "assistant") else "user",
                        "content": self._chat_safe(content)})
        return out

    # -- one step
    def request_for(self, messages: list[dict], schema: dict, max_tokens: int) -> tuple[str, dict]:
        """(url, JSON body) of the streamed request for this flavour."""
        common = {"temperature": self.temperature, "seed": self.seed, "stream": True}
        if self.flavour == LLAMA_CPP_PYTHON:
            return self._url("/completions"), {
                **common, "model": self.model_id, "prompt": self.render_text(messages),
                "max_tokens": max_tokens, "repeat_penalty": self.repeat_penalty,
                "grammar": schema_to_gbnf(schema),
            }
        if self.flavour == LLAMA_SERVER:
            return self.endpoint.root + "/completion", {
                **common, "prompt": self._token_ids(messages), "n_predict": max_tokens,
                "repeat_penalty": self.repeat_penalty, "grammar": schema_to_gbnf(schema),
                "cache_prompt": True,
            }
        if self.flavour == OLLAMA:
            return self.endpoint.root + "/api/chat", {
                "model": self.model_id, "messages": self._chat_messages(messages), "stream": True,
                "format": schema,
                "options": {"temperature": self.temperature, "seed": self.seed, "num_predict": max_tokens,
                            "repeat_penalty": self.repeat_penalty},
            }
        body = {**common, "model": self.model_id, "messages": self._chat_messages(messages),
                "max_tokens": max_tokens, "stream_options": {"include_usage": True}}
        if self.flavour == VLLM:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "action", "schema": schema, "strict": True}}
        return self._url("/chat/completions"), body

    def step(self, messages: list[dict[str, str]], schema: dict, *, max_tokens: int,
             on_token: Callable[[str], None] | None = None) -> StepResult:
        url, body = self.request_for(messages, schema, int(max_tokens))
        deadline = time.monotonic() + self.timeout
        limit = int(max_tokens) * CHARS_PER_TOKEN
        pause = RETRY_PAUSE
        for attempt in range(RETRIES + 1):
            try:
                with self._http.stream("POST", url, json=body, headers=self._headers) as resp:
                    if (resp.status_code >= 500 or resp.status_code == 429) and attempt < RETRIES:
                        time.sleep(pause)      # the body is not read: closing the response drops it
                        pause *= 2
                        continue
                    self._check_status(resp, url)
                    got = self._read(resp, url, on_token, deadline, limit)
                    break
            except self._httpx.HTTPError as exc:
                raise self._fail(exc, url) from None
        if self.flavour == LLAMA_CPP_PYTHON and not got.prompt_tokens:
            # Its stream carries no usage: count the prompt with its own tokenizer (cheap).
            count = self._request("POST", "", {"input": body["prompt"], "model": self.model_id},
                                  url=self.endpoint.root + "/extras/tokenize/count").get("count")
            got.prompt_tokens = _int(count) or 0
        text = "".join(got.parts)
        evaluated = got.evaluated if got.evaluated is not None else (
            got.prompt_tokens - got.cached if got.cached is not None else got.prompt_tokens)
        return StepResult(text=text, prompt_tokens=got.prompt_tokens, evaluated_tokens=max(0, evaluated),
                          completion_tokens=got.completion, finish_reason=got.finish or "stop",
                          cached_tokens=got.cached)

    def _read(self, resp: httpx.Response, url: str, on_token: Callable[[str], None] | None, deadline: float,
              limit: int) -> _Stream:
        out = _Stream(parts=[])
        ctype = resp.headers.get("content-type", "")
        size = 0
        # a memory bound, not a content one (the content is bounded by `limit`): a final event may
        # echo the whole prompt (llama-server's generation settings), so the floor is generous
        budget = MAX_BODY_BYTES + max(limit, 1) * (STREAM_BYTES_PER_TOKEN // CHARS_PER_TOKEN)
        try:
            for payload in _events(_lines(resp, deadline, budget), ctype):
                if time.monotonic() > deadline:
                    out.finish = "timeout"
                    break
                if payload is None:         # [DONE]
                    break
                try:
                    event = json.loads(payload)
                except (ValueError, RecursionError):
                    if not out.parts and "json" not in ctype and "event-stream" not in ctype:
                        got = ctype or "no content type"
                        raise ModelError(f"the model server at {url} did not answer JSON (got {got}): is "
                                         "model.endpoint the API base of an OpenAI-compatible server?") from None
                    out.finish = "malformed"
                    break
                if not isinstance(event, dict):
                    out.finish = "malformed"
                    break
                if "error" in event and not _piece(event, self.flavour):
                    raise ModelError(f"the model server at {url} reported an error: "
                                     f"{_short(self.scrub(json.dumps(event['error'], ensure_ascii=False)))}")
                piece = _piece(event, self.flavour)
                if piece:
                    size += len(piece)
                    out.parts.append(piece)
                    if on_token is not None:
                        on_token(piece)
                    if size > limit:
                        out.finish = "length"
                        break
                _usage(event, self.flavour, out)
        except _Cut as cut:
            out.finish = cut.reason
        except self._httpx.HTTPError as exc:
            raise ModelError(f"the model server at {url} (model.endpoint) broke off the reply mid-stream: "
                             f"{type(exc).__name__}: {_reason(exc)}") from None
        return out


class _Cut(Exception):
    """A read stopped at its bound: reason "timeout" (wall time) or "length" (bytes)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _chunks(resp: httpx.Response, deadline: float, max_bytes: int) -> Iterator[bytes]:
    """The body's raw chunks, cut (_Cut) past the wall-clock deadline or the byte budget: the
    client's read timeout bounds one silent read only, not a server that keeps trickling."""
    total = 0
    for chunk in resp.iter_bytes():
        total += len(chunk)
        if total > max_bytes:
            raise _Cut("length")
        if time.monotonic() > deadline:
            raise _Cut("timeout")
        yield chunk


def _capped(resp: httpx.Response, deadline: float, max_bytes: int, *, truncate: bool = False) -> bytes:
    """The whole body within the bounds; with `truncate`, the first max_bytes of it instead of a _Cut."""
    out = bytearray()
    try:
        for chunk in _chunks(resp, deadline, max_bytes):
            out += chunk
    except _Cut:
        if not truncate:
            raise
    return bytes(out[:max_bytes])


def _lines(resp: httpx.Response, deadline: float, max_bytes: int) -> Iterator[str]:
    """Lines of the body (\n, \r\n or \r), within the bounds: one endless line is cut too."""
    buf = bytearray()
    for chunk in _chunks(resp, deadline, max_bytes):
        buf += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" in buf:
            *done, rest = bytes(buf).split(b"\n")
            buf = bytearray(rest)
            for line in done:
                yield line.decode("utf-8", "replace")
    if buf:
        yield bytes(buf).decode("utf-8", "replace")


def _events(lines: Iterator[str], ctype: str) -> Iterator[str | None]:
    """Payloads of an SSE stream ("data: ..."; None for [DONE]), or of NDJSON / one JSON body."""
    sse = "event-stream" in ctype
    body: list[str] = []
    for line in lines:
        if sse:
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                yield None
                return
            if data:
                yield data
        else:
            if line.strip():
                body.append(line)
                if "ndjson" in ctype or "ollama" in ctype:
                    yield body.pop()
    if body:
        yield "\n".join(body)


def _piece(event: dict, flavour: str) -> str:
    if flavour == LLAMA_SERVER:
        piece = event.get("content")
    elif flavour == OLLAMA:
        msg = event.get("message")
        piece = msg.get("content") if isinstance(msg, dict) else None
    else:
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        c = choices[0]
        delta = c.get("delta")
        piece = c.get("text")
        if piece is None and isinstance(delta, dict):
            piece = delta.get("content")
        if piece is None and isinstance(c.get("message"), dict):
            piece = c["message"].get("content")
    return piece if isinstance(piece, str) else ""


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _usage(event: dict, flavour: str, out: _Stream) -> None:
    if flavour == LLAMA_SERVER:
        if event.get("stop"):
            out.finish = "length" if event.get("stopped_limit") else "stop"
            timings = event.get("timings") if isinstance(event.get("timings"), dict) else {}
            ev = _int(timings.get("prompt_n"))
            cached = _int(timings.get("cache_n"))
            if cached is None:
                cached = _int(event.get("tokens_cached"))
            out.evaluated = ev
            out.cached = cached
            out.prompt_tokens = (ev or 0) + (cached or 0) or (_int(event.get("tokens_evaluated")) or 0)
            out.completion = _int(timings.get("predicted_n")) or 0
        return
    if flavour == OLLAMA:
        if event.get("done"):
            out.finish = "length" if event.get("done_reason") == "length" else "stop"
            out.evaluated = _int(event.get("prompt_eval_count"))
            out.prompt_tokens = out.evaluated or 0
            out.completion = _int(event.get("eval_count")) or 0
        return
    choices = event.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        fin = choices[0].get("finish_reason")
        if isinstance(fin, str) and fin:
            out.finish = "length" if fin == "length" else "stop"
    usage = event.get("usage")
    if isinstance(usage, dict):
        out.prompt_tokens = _int(usage.get("prompt_tokens")) or out.prompt_tokens
        out.completion = _int(usage.get("completion_tokens")) or out.completion
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict) and _int(details.get("cached_tokens")) is not None:
            out.cached = _int(details.get("cached_tokens"))


def _pieces(data: object) -> list[tuple[int, str]] | None:
    """llama.cpp's /tokenize answer with pieces: [(id, piece)] (a piece given as bytes, not text,
    is ""), or None if `data` is not such an answer."""
    toks = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(toks, list):
        return None
    out = []
    for t in toks:
        if not isinstance(t, dict) or _int(t.get("id")) is None:
            return None
        piece = t.get("piece")
        out.append((t["id"], piece if isinstance(piece, str) else ""))
    return out


def _same(round_trip: str, sent: str) -> bool:
    # SentencePiece-style tokenizers may add or drop one leading space on a round trip.
    return round_trip == sent or round_trip.lstrip(" ") == sent.lstrip(" ")


def _short(text: str, n: int = 200) -> str:
    """Server text for a message: one line, cut, every control character shown as an escape
    (it is printed on the person's terminal: an ANSI sequence must not move or erase anything)."""
    text = escape(" ".join(str(text).split()), newlines=False)
    return text if len(text) <= n else text[:n - 1] + "…"


def _reason(exc: Exception) -> str:
    return _short(str(exc) or type(exc).__name__, 120)


__all__ = ["OPENAI_PREFIX", "Endpoint", "OpenAIModel", "auth_header", "detect_flavour", "parse_endpoint"]
