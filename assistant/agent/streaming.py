"""Showing a reply while the model produces it, never a secret in part.

Guards the watching person's screen during streaming: `ReplyStream` follows only the text of a
`{"reply": "..."}` action (a tool call shows nothing), and `SafeStream` redacts the whole text
so far on every piece and emits only what lies safely behind a holdback, so a secret still
being produced is never shown in part.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from assistant.secrets.scanner import Scanner

__all__ = ["ReplyStream", "SafeStream"]

_REPLY_START = re.compile(r'\s*\{\s*"reply"\s*:\s*"')


class ReplyStream:
    """Feeds the text of a `{"reply": "..."}` action to `on_text` as the model produces it.

    Only the reply string is shown (decoded from its JSON escapes); a tool-call action shows
    nothing. Anything it cannot follow is simply not streamed (the final reply is printed by
    the caller from the parsed action, so display never depends on this)."""

    _PREFIX_CHARS = 64

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.buf = ""
        self.state = "prefix"      # prefix -> string -> done
        self.pending = ""          # an escape sequence not yet complete
        self.shown = ""

    def feed(self, piece: str) -> None:
        if self.state == "done":
            return
        if self.state == "prefix":
            self.buf += piece
            m = _REPLY_START.match(self.buf)
            if not m:
                if len(self.buf) > self._PREFIX_CHARS or '"tool"' in self.buf:
                    self.state = "done"
                return
            self.state = "string"
            piece = self.buf[m.end():]
        out = []
        text = self.pending + piece
        self.pending = ""
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\":
                if i + 1 >= len(text):
                    self.pending = text[i:]
                    break
                e = text[i + 1]
                if e == "u":
                    if i + 6 > len(text):
                        self.pending = text[i:]
                        break
                    code = text[i + 2:i + 6]
                    try:
                        cp = int(code, 16)
                    except ValueError:
                        self.state = "done"
                        break
                    if 0xD800 <= cp < 0xDC00:
                        if i + 12 > len(text):
                            self.pending = text[i:]
                            break
                        try:
                            out.append(json.loads('"' + text[i:i + 12] + '"'))
                        except ValueError:
                            pass
                        i += 12
                        continue
                    out.append(chr(cp))
                    i += 6
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
                i += 2
                continue
            if c == '"':
                self.state = "done"
                break
            out.append(c)
            i += 1
        if out:
            chunk = "".join(out)
            self.shown += chunk
            self.on_text(chunk)


class SafeStream:
    """Redacts a streamed reply before any of it is shown.

    The whole text so far is redacted on every piece and only what lies more than `holdback`
    characters before its end is emitted, so a secret still being produced (shorter than the
    holdback) is never shown in part. With a `scanner`, a vault value of any length that is
    still being produced (its first KEY_PREFIX characters present) also holds the stream back
    from its start: a value longer than the holdback is not shown in part either. `finish()`
    emits the redacted rest. If a redaction ever reaches back into text already shown,
    streaming stops (`intact` False) and the caller prints the full redacted reply instead."""

    def __init__(self, emit: Callable[[str], None], redact: Callable[[str], str], holdback: int = 96,
                 *, scanner: Scanner | None = None) -> None:
        self.emit, self.redact, self.holdback = emit, redact, holdback
        self.scanner = scanner
        self.step = 24
        self._pushed_at = 0
        self.raw = ""
        self.shown = ""
        self.intact = True

    def _push(self, upto_end: bool) -> None:
        if not self.intact:
            return
        if upto_end:
            stable = self.redact(self.raw)
        elif self.scanner is not None:
            # Cut before any hit that runs past the cut, counting a vault value cut by the end
            # of the text so far (truncated=True) as a hit: then redact only what is kept.
            cut = max(0, len(self.raw) - self.holdback)
            for h in reversed(self.scanner.find(self.raw, truncated=True)):
                if h.start < cut < h.end or (h.start < cut and h.end >= len(self.raw)):
                    cut = h.start
            stable = self.redact(self.raw[:cut])
        else:
            red = self.redact(self.raw)
            stable = red[: max(0, len(red) - self.holdback)]
        if not stable.startswith(self.shown):
            self.intact = False
            return
        new = stable[len(self.shown):]
        if new:
            self.shown = stable
            self.emit(new)

    def feed(self, piece: str) -> None:
        self.raw += piece
        # Redact in steps of a few words, not per token: the whole text is rescanned each time.
        if len(self.raw) - self._pushed_at >= self.step:
            self._pushed_at = len(self.raw)
            self._push(False)

    def finish(self) -> None:
        self._push(True)
