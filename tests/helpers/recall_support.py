"""Shared helpers for the recall tests (no tests here): a workspace with notes, a session, a vault."""

from __future__ import annotations

from pathlib import Path

from assistant.workspace.layout import init_workspace, open_workspace

PASS = "correct horse battery staple for tests"


def make_ws(tmp_path: Path, extra_config: str = "") -> Path:
    ws = tmp_path / "ws"
    init_workspace(ws, example=True)
    cfg = ws / "config.toml"
    text = cfg.read_text().replace("opslimit = 3", "opslimit = 1").replace("memlimit_mib = 256", "memlimit_mib = 8")
    if "[recall]" in extra_config:    # the example's own [recall] table makes way for the test's
        head, _, rest = text.partition("\n[recall]\n")
        after = rest.split("\n[", 1)
        text = head + ("\n[" + after[1] if len(after) > 1 else "\n")
    cfg.write_text(text + extra_config)
    return ws


def add_vault(ws: Path, secrets: dict[str, str], monkeypatch) -> None:
    from nacl.pwhash import argon2id

    from assistant.secrets.vault import Vault

    vault = Vault.create(ws / "vault.enc", PASS, opslimit=argon2id.OPSLIMIT_MIN, memlimit=argon2id.MEMLIMIT_MIN)
    for name, value in secrets.items():
        vault.set(name, value)
    monkeypatch.setenv("ASSISTANT_VAULT_PASSPHRASE", PASS)


def session(ws: Path, mode: str = "watched", **kw):
    from assistant.session import open_session

    return open_session(open_workspace(ws), mode, kind=kw.pop("kind", "api"), **kw)


def state_bytes(ws: Path) -> dict[str, bytes]:
    """Every file under state/ (index, its WAL and shm included), by relative path."""
    out = {}
    for p in sorted((ws / "state").rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(ws))] = p.read_bytes()
    return out


def scripted(tmp_path: Path, items: list, name: str = "script.json"):
    """A ScriptedModel replaying `items`; `.calls` holds the messages each step saw."""
    import json

    from assistant.models.scripted import ScriptedModel

    p = tmp_path / name
    p.write_text(json.dumps(items))
    return ScriptedModel(p)


def chat_turns(ws: Path, tmp_path: Path, replies: list[str], *said: str):
    """A chat session on WS whose scripted model answers REPLIES; each of SAID is one turn.
    Returns (the model, whose `.calls` are the prompts, and the transcript's events)."""
    import json

    model = scripted(tmp_path, [{"reply": r} for r in replies])
    with session(ws, kind="chat") as s:
        agent = s.new_agent(model)
        for text in said:
            agent.turn(text)
        events = [json.loads(x) for x in s.transcript.path.read_text().splitlines()]
    return model, events
