"""Issue 10 item 8: writes never destroy a secret unseen. A model write that would drop a vault
value held by the current note is refused, saying why (without the value); approval diffs mark
redacted lines; `assistant memory edit` puts back the exact original value behind every marker
the person left untouched, or refuses to save (keeping the edited text) - never a marker in
place of a value."""

from __future__ import annotations

import hashlib
import json
import sys

from secrets_support import WIFI, cli, cli_vault_ws, make_ws, run_assistant, transcript_events, vault_env, write_script

NOTE = f"---\ndescription: home network\n---\nwifi password: {WIFI}\nrouter in the hall\n"


def _revision(ws, path):
    import os

    from assistant.memory import memory_read

    os.environ["ASSISTANT_VAULT_PASSPHRASE"] = "correct horse battery staple"
    try:
        return memory_read(path, workspace=ws)
    finally:
        del os.environ["ASSISTANT_VAULT_PASSPHRASE"]


def test_a_model_write_that_would_drop_a_vault_value_is_refused(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "memory" / "home.md").write_text(NOTE)
    note = _revision(ws, "home.md")
    assert "[redacted:WIFI]" in note.content and WIFI not in note.content
    # the model writes back what it read, one line added (the attack that left the marker on disk)
    script = write_script(tmp_path, [
        {"tool": "memory_write", "args": {"path": "home.md", "content": note.content + "guest network: none\n",
                                          "base": note.revision}},
        {"reply": "Added the guest network."}])
    cfg = ws / "config.toml"
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="add the guest network\n",
            environ=vault_env())
    assert (ws / "memory" / "home.md").read_text() == NOTE          # the secret is still there
    [result] = [e for e in transcript_events(ws) if e["event"] == "tool_result"]
    assert not result["ok"]
    msg = result["output"]
    assert "holds a secret" in msg and "destroy" in msg and WIFI not in msg and WIFI not in r.stdout
    assert cfg.exists()


def test_a_model_file_write_that_would_drop_a_vault_value_is_refused(tmp_path):
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "files" / "net.txt").write_text(f"pw {WIFI}\n")
    script = write_script(tmp_path, [
        {"tool": "file_write", "args": {"path": "net.txt", "content": "pw [redacted:WIFI]\nmore\n"}},
        {"reply": "done"}])
    r = cli("-w", str(ws), "chat", "--model", f"script:{script}", input="edit it\n", environ=vault_env())
    assert (ws / "files" / "net.txt").read_text() == f"pw {WIFI}\n", r.stdout
    [result] = [e for e in transcript_events(ws) if e["event"] == "tool_result"]
    assert not result["ok"] and "holds a secret" in result["output"]


def _edit_home_note(tmp_path, body: str):
    """`memory edit home.md` (NOTE, with the WIFI secret in the vault) through an EDITOR that is a
    Python script: `p` is the file to edit, then BODY. Returns (workspace, completed process)."""
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "memory" / "home.md").write_text(NOTE)
    ed = tmp_path / "ed.py"
    ed.write_text("import sys\np = sys.argv[-1]\n" + body)
    return ws, cli("-w", str(ws), "memory", "edit", "home.md", environ=vault_env(EDITOR=f"{sys.executable} {ed}"))


def test_memory_edit_puts_back_the_exact_value_behind_an_untouched_marker(tmp_path):
    ws, r = _edit_home_note(tmp_path, "s = open(p).read()\nassert 'tangerine' not in s and '[redacted:WIFI]' in s\n"
                           "open(p, 'w').write(s + 'guest network: none\\n')\n")
    assert r.returncode == 0, r.stderr
    assert (ws / "memory" / "home.md").read_text() == NOTE + "guest network: none\n"
    assert "[redacted" not in (ws / "memory" / "home.md").read_text()
    assert WIFI not in r.stdout + r.stderr


def test_memory_edit_never_saves_a_marker_it_cannot_put_back(tmp_path):
    ws, r = _edit_home_note(tmp_path, "s = open(p).read()\nopen(p, 'w').write(s + 'bank pin: [redacted:BANK]\\n')\n")
    assert r.returncode != 0 and "[redacted:BANK]" in r.stderr and "line 6" in r.stderr
    assert "kept at" in r.stderr
    kept = r.stderr.split("kept at ")[-1].strip()
    import shutil
    from pathlib import Path

    try:
        assert "bank pin: [redacted:BANK]" in Path(kept).read_text()
    finally:
        shutil.rmtree(Path(kept).parent, ignore_errors=True)    # no note text left behind in /tmp
    assert (ws / "memory" / "home.md").read_text() == NOTE
    assert WIFI not in r.stdout + r.stderr


def test_memory_edit_may_drop_a_secret_whose_marker_the_person_deleted(tmp_path):
    ws, r = _edit_home_note(tmp_path, "s = open(p).read()\n"
                           "open(p, 'w').write(''.join(l for l in s.splitlines(True) if 'redacted' not in l))\n")
    assert r.returncode == 0, r.stderr
    assert (ws / "memory" / "home.md").read_text() == NOTE.replace(f"wifi password: {WIFI}\n", "")


def test_approval_diff_marks_redacted_lines(tmp_path):
    from policy.approvals import Inbox
    from policy.kinds import KINDS

    ws = make_ws(tmp_path)
    content = "wifi password: [redacted:WIFI]\nguest network: none\n"
    req, _ = Inbox(ws / "state" / "approvals").create(
        run_id="run-1", kind="memory", target="home.md", summary="memory_write home.md",
        reason="root policy for memory in an unattended run is ask",
        sha256=hashlib.sha256(b"wifi password: x\nguest network: none\n").hexdigest(), content=content,
        current="wifi password: [redacted:WIFI]\n", content_exact=False,
        offers=KINDS["memory"].offers("home.md"), timeout=600)
    r = cli("-w", str(ws), "approvals", "show", req.id)
    assert r.returncode == 0, r.stderr
    [line] = [ln for ln in r.stdout.splitlines() if "wifi password" in ln]
    assert "redacted: this line's real text is not shown" in line
    [guest] = [ln for ln in r.stdout.splitlines() if "guest network" in ln]
    assert "not shown" not in guest


def test_the_person_may_replace_a_note_holding_a_secret_with_force(tmp_path):
    # noticed in review (2026-12-01): `memory write --force` could not replace a note that held
    # a secret, though the person typed the whole new text; --base (an edit of what `memory cat`
    # showed redacted) still may not drop it
    ws = make_ws(tmp_path, secrets={"WIFI": WIFI})
    (ws / "memory" / "home.md").write_text(NOTE)
    rev = _revision(ws, "home.md").revision
    r = cli("-w", str(ws), "memory", "write", "home.md", "--base", rev, input="router in the hall\n",
            environ=vault_env())
    assert r.returncode == 1 and "holds a secret" in r.stderr and "--force" in r.stderr
    assert "memory edit home.md" in r.stderr and WIFI not in r.stdout + r.stderr
    assert (ws / "memory" / "home.md").read_text() == NOTE
    r = cli("-w", str(ws), "memory", "write", "home.md", "--force", input="router in the hall\n",
            environ=vault_env())
    assert r.returncode == 0, r.stderr
    assert (ws / "memory" / "home.md").read_text() == "router in the hall\n"
    log = cli("-w", str(ws), "memory", "log", "home.md", "--json", environ=vault_env())
    assert log.returncode == 0 and len(__import__("json").loads(log.stdout)) == 2   # the old version is kept
    assert WIFI not in r.stdout + r.stderr + log.stdout


# review (one gated writer): a file_write could destroy a vault value held in a non-UTF-8 file
NON_UTF8_SECRET = "Zq7-Plum-Orbit-9931"


def test_file_write_keeps_secret_of_non_utf8_file(tmp_path):
    """GatedWriter.secrets_in returned an empty set when the current bytes are not UTF-8, so
    check_keeps_secrets never fired: the model reads the file (decoded with 'replace' and
    redacted), writes back what it saw, and the vault value on disk was replaced by its
    "[redacted:...]" marker. The watched chat even showed "no change"."""
    ws = cli_vault_ws(tmp_path, NON_UTF8_SECRET)
    original = b"caf\xe9 latin1 file\nkey: " + NON_UTF8_SECRET.encode() + b"\n"
    (ws / "files" / "old.txt").write_bytes(original)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool": "file_read", "args": {"path": "old.txt"}},
        {"tool": "file_write", "args": {"path": "old.txt",
                                        "content": "caf\ufffd latin1 file\nkey: [redacted:bank]\n"}},
        {"reply": "done"},
    ]))
    run_assistant(["-w", str(ws), "chat", "--model", f"script:{script.name}"], stdin="go\n/quit\n", cwd=tmp_path)
    after = (ws / "files" / "old.txt").read_bytes()
    # the secret the model only saw redacted must not have been destroyed
    assert NON_UTF8_SECRET.encode() in after, after
