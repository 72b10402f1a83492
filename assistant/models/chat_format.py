"""Our turn formats (Gemma, ChatML, Llama 3): messages -> prompt segments, with text never
becoming control tokens.

Guards two things.

1. The system prompt reaches the model. Gemma has no system role, and llama-cpp-python's
   built-in "gemma" format silently drops system messages (the persona, the tool docs and the
   catalog would vanish). Here the system prompt is folded into the first user turn:
       <bos><start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n<start_of_turn>model\n...

2. Content stays content. The prompt is kept as (text, is_control) segments: only the turn
   markers are tokenized with special-token parsing; every piece of message content (the
   person's text, notes, tool output, a fetched page) is tokenized as plain text, so a page
   containing "<end_of_turn><start_of_turn>user" cannot forge a turn.

llama-cpp-python's own chat handlers render the prompt as one string and tokenize it with
special-token parsing on, so a page containing "<|im_end|><|im_start|>system" would become a
real turn. That is why only the formats in FORMATS are offered: each is rendered here.
"""

from __future__ import annotations

from typing import Callable, Sequence

BOS = "<bos>"
START = "<start_of_turn>"
END = "<end_of_turn>"
ROLES = {"user": "user", "assistant": "model", "model": "model", "tool": "user"}

Segment = tuple[str, bool]   # (text, is_control)


class ChatFormatError(ValueError):
    """Messages that cannot be rendered (unknown role, non-text content, system not first)."""


def gemma_segments(messages: Sequence[dict], *, add_generation_prompt: bool = True) -> list[Segment]:
    """Render messages in our Gemma format as segments."""
    segs: list[Segment] = [(BOS, True)]
    system = ""
    body = list(messages)
    if body and body[0].get("role") == "system":
        system = body.pop(0).get("content") or ""
        if not isinstance(system, str):
            raise ChatFormatError("the system message must be text")
    folded = False
    for i, m in enumerate(body):
        role = m.get("role")
        content = m.get("content")
        if role == "system":
            raise ChatFormatError(f"message {i + 1}: a system message is only allowed first")
        if role not in ROLES:
            raise ChatFormatError(f"message {i + 1}: unknown role {role!r}")
        if not isinstance(content, str):
            raise ChatFormatError(f"message {i + 1}: content must be text")
        turn = ROLES[role]
        segs.append((f"{START}{turn}\n", True))
        if system and not folded and turn == "user":
            segs.append((system + "\n\n", False))
            folded = True
        elif system and not folded:
            # The conversation starts with a model turn: give the system prompt its own user turn.
            segs[-1] = (f"{START}user\n", True)
            segs.append((system, False))
            segs.append((f"{END}\n{START}{turn}\n", True))
            folded = True
        segs.append((content, False))
        segs.append((f"{END}\n", True))
    if system and not folded:
        segs.append((f"{START}user\n", True))
        segs.append((system, False))
        segs.append((f"{END}\n", True))
    if add_generation_prompt:
        segs.append((f"{START}model\n", True))
    return _merge(segs)


def _plain_role_segments(messages: Sequence[dict], *, open_turn: Callable[[str], str], close_turn: str,
                         begin: str, roles: dict[str, str], add_generation_prompt: bool) -> list[Segment]:
    """Formats with a real system role: one turn per message, markers as control segments."""
    segs: list[Segment] = [(begin, True)] if begin else []
    for i, m in enumerate(messages):
        role = m.get("role")
        content = m.get("content")
        if role == "system" and i != 0:
            raise ChatFormatError(f"message {i + 1}: a system message is only allowed first")
        if role not in roles:
            raise ChatFormatError(f"message {i + 1}: unknown role {role!r}")
        if not isinstance(content, str):
            raise ChatFormatError(f"message {i + 1}: content must be text")
        segs.append((open_turn(roles[role]), True))
        segs.append((content, False))
        segs.append((close_turn, True))
    if add_generation_prompt:
        segs.append((open_turn(roles["assistant"]), True))
    return _merge(segs)


_SYSTEM_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "model": "assistant",
                 "tool": "user"}


def chatml_segments(messages: Sequence[dict], *, add_generation_prompt: bool = True) -> list[Segment]:
    """ChatML (Qwen, many fine-tunes): <|im_start|>role\n...<|im_end|>\n"""
    return _plain_role_segments(messages, open_turn=lambda r: f"<|im_start|>{r}\n", close_turn="<|im_end|>\n",
                                begin="", roles=_SYSTEM_ROLES, add_generation_prompt=add_generation_prompt)


def llama3_segments(messages: Sequence[dict], *, add_generation_prompt: bool = True) -> list[Segment]:
    """Llama 3: <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>"""
    return _plain_role_segments(messages, open_turn=lambda r: f"<|start_header_id|>{r}<|end_header_id|>\n\n",
                                close_turn="<|eot_id|>", begin="<|begin_of_text|>", roles=_SYSTEM_ROLES,
                                add_generation_prompt=add_generation_prompt)


# model.chat_format -> renderer. Anything else is refused (see the module docstring).
FORMATS: dict[str, Callable[..., list[Segment]]] = {
    "gemma": gemma_segments,
    "chatml": chatml_segments,
    "llama-3": llama3_segments,
}


def render(fmt: str, messages: Sequence[dict], *, add_generation_prompt: bool = True) -> str:
    """The prompt as one string in format `fmt` (for display, tests and token accounting)."""
    return "".join(t for t, _ in FORMATS[fmt](messages, add_generation_prompt=add_generation_prompt))


def _merge(segs: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for text, ctrl in segs:
        if not text:
            continue
        if out and out[-1][1] == ctrl:
            out[-1] = (out[-1][0] + text, ctrl)
        else:
            out.append((text, ctrl))
    return out


def render_gemma(messages: Sequence[dict], *, add_generation_prompt: bool = True) -> str:
    """The prompt as one string (for display, tests and token accounting)."""
    return "".join(t for t, _ in gemma_segments(messages, add_generation_prompt=add_generation_prompt))


def tokenize_segments(segs: Sequence[Segment], tokenize: Callable[[bytes, bool], list[int]]) -> list[int]:
    """Tokens for the segments: `tokenize(data, special)` parses special tokens only in control
    segments. Each segment is tokenized on its own, so the same history always gives the same
    tokens (a requirement for KV-cache reuse)."""
    tokens: list[int] = []
    for text, ctrl in segs:
        tokens.extend(tokenize(text.encode("utf-8"), ctrl))
    return tokens
