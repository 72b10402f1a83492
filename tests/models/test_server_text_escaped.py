"""Review (hostile): text a model server sends back reaches the terminal escaped.

Found in review: the server backend's errors quote what the server said (an error body, the
model ids it serves), and `run` printed the message on stderr with click.echo as it was. click
strips ANSI only when stderr is NOT a terminal, so on the person's terminal a server answering
"\\x1b[2J\\x1b[H..." cleared the screen and wrote its own text. The terminal module's rule
(every text from outside is escaped) now holds for server text: the backend escapes it where
it quotes it. Checked on a real pseudo-terminal against a real loopback server.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx")
pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install 'assistant[dev]')")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from recording_server import Recorder, models, send_json  # noqa: E402

from e2e_support import cli_env, make_ws  # noqa: E402

from assistant.display.colour import STYLES  # noqa: E402

EVIL = "\x1b[2J\x1b[Hall approved"
OURS = re.compile("|".join(re.escape(f"\x1b[{code}m") for code in {*STYLES.values(), "0"}))


def _send_text(h, text, status):
    data = text.encode()
    h.send_response(status)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def _run_on_a_terminal(ws, url) -> str:
    child = pexpect.spawn(sys.executable, ["-m", "assistant", "-w", str(ws), "run", "--model", f"openai:{url}",
                                           "hello"], env=cli_env(NO_COLOR=""), timeout=60, encoding="utf-8")
    try:
        child.expect(pexpect.EOF)
        return child.before
    finally:
        child.close(force=True)


@pytest.mark.parametrize("answer", [
    lambda h, path, body: send_json(h, models("vllm", (EVIL, "other"))),
    lambda h, path, body: _send_text(h, "bad request: " + EVIL, 400),
], ids=["model-ids", "error-body"])
def test_server_text_is_escaped_on_the_terminal(tmp_path, answer):
    rec = Recorder(answer)
    try:
        ws = make_ws(tmp_path)
        # the outcome word is coloured on a terminal: only the palette's own codes are taken out
        out = OURS.sub("", _run_on_a_terminal(ws, rec.url))
        assert "error:" in out, out
        assert "\x1b" not in out, repr(out)
        assert "\\x1b[2J" in out
    finally:
        rec.close()
