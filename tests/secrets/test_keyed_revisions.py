"""Issue 10 item 6: revisions are keyed (HMAC-SHA256 under a per-workspace key in state/), so a
revision shown beside a redacted note is no offline oracle; `base` / `--base` take keyed
revisions only (the plain-sha256 forms are gone)."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat

from secrets_support import PASSPHRASE, WIFI, cli, make_ws, transcript_events, vault_env, write_script

NOTE = b"---\ndescription: the router\n---\nwifi password: " + WIFI.encode() + b"\n"


def _memory(ws):
    from assistant.session import open_session

    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = PASSPHRASE
    try:
        return open_session(ws, "watched", kind="api", transcript=False).memory
    finally:
        del os.environ["ASSISTANT_VAULT_PASSPHRASE"]


def test_the_revision_the_model_sees_is_keyed(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "memory" / "router.md").write_bytes(NOTE)
    script = write_script(tmp_path, [{"tool": "memory_read", "args": {"path": "router.md"}}, {"reply": "read"}])
    r = cli("-w", str(ws), "run", "--model", f"script:{script}", "read the router note", environ=vault_env())
    assert r.returncode == 0, r.stdout + r.stderr
    [result] = [e for e in transcript_events(ws) if e["event"] == "tool_result"]
    shown = result["output"]
    assert "[redacted:WIFI]" in shown and WIFI not in shown
    plain = hashlib.sha256(NOTE).hexdigest()
    assert plain[:8] not in shown                     # no plain-hash prefix of the real bytes
    key_file = ws / "state" / "revision.key"
    st = os.lstat(key_file)
    assert stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o600 and st.st_size == 32
    keyed = hmac.new(key_file.read_bytes(), NOTE, hashlib.sha256).hexdigest()[:12]
    assert f"revision: {keyed}" in shown
    assert _memory(ws).revision(NOTE) == keyed


def test_base_takes_the_keyed_revision_only(tmp_path):
    ws = make_ws(tmp_path)
    (ws / "memory" / "plain.md").write_bytes(b"some note\n")
    data = b"some note\n"
    plain = hashlib.sha256(data).hexdigest()
    mem = _memory(ws)
    from assistant.memory import Conflict

    for guess in (plain, plain[:12], plain[:8], plain.upper()):
        try:
            mem.write("plain.md", "replaced\n", base=guess)
        except Conflict:
            pass
        else:
            raise AssertionError("a plain-sha256 base was accepted")
    assert (ws / "memory" / "plain.md").read_bytes() == data
    # the model's tool: the schema bounds base to a revision's length
    from assistant.tools.memory import memory_tools

    [write] = [t for t in memory_tools() if t.name == "memory_write"]
    assert write.parameters["properties"]["base"]["maxLength"] == 12
    # the CLI's --base
    r = cli("-w", str(ws), "memory", "write", "plain.md", "--base", plain[:12], input="replaced\n")
    assert r.returncode != 0 and "changed since you read it" in r.stderr
    r = cli("-w", str(ws), "memory", "write", "plain.md", "--base", plain, input="replaced\n")
    assert r.returncode != 0
    assert (ws / "memory" / "plain.md").read_bytes() == data
    rev = mem.read("plain.md").revision
    r = cli("-w", str(ws), "memory", "write", "plain.md", "--base", rev, input="replaced\n")
    assert r.returncode == 0, r.stderr
    assert (ws / "memory" / "plain.md").read_bytes() == b"replaced\n"


def test_losing_the_key_costs_only_a_re_read(tmp_path):
    ws = make_ws(tmp_path)
    mem = _memory(ws)
    (ws / "memory" / "n.md").write_bytes(b"first\n")
    old = mem.read("n.md").revision
    (ws / "state" / "revision.key").unlink()
    mem2 = _memory(ws)
    from assistant.memory import Conflict

    try:
        mem2.write("n.md", "second\n", base=old)
    except Conflict as exc:
        assert "read it again" in str(exc)
    else:
        raise AssertionError("a revision under the lost key was still accepted")
    new = mem2.read("n.md").revision
    assert new != old
    mem2.write("n.md", "second\n", base=new)
    assert (ws / "memory" / "n.md").read_bytes() == b"second\n"
    # a damaged key file (wrong size) is replaced, never used
    (ws / "state" / "revision.key").write_bytes(b"short")
    assert len(_memory(ws).read("n.md").revision) == 12
    assert os.path.getsize(ws / "state" / "revision.key") == 32
