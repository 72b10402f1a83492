"""[files] hidden: gitignore-style patterns keep files in files/ out of the file tools' sight."""

import pytest

from assistant.tools.base import ToolError
from assistant.tools.registry import all_tools
from assistant.workspace.layout import init_workspace
from workspaces import assert_config_refused


@pytest.fixture
def session(tmp_path, sessions):
    made = []

    def make(hidden_line=None):
        root = tmp_path / f"ws{len(made)}"
        init_workspace(root, example=True)
        if hidden_line is not None:
            cfg = root / "config.toml"
            text = cfg.read_text()
            default = 'hidden = ["*.key", "*.pem", "id_rsa*", "id_ed25519*", "*.kdbx"]'
            assert default in text
            cfg.write_text(text.replace(default, f"hidden = {hidden_line}"))
        files = root / "files"
        (files / "keys").mkdir()
        (files / "keys" / "server.key").write_text("-----not really a key-----\n")
        (files / "private").mkdir()
        (files / "private" / "diary.md").write_text("dear diary\n")
        (files / "notes.txt").write_text("shopping: eggs\n")
        made.append(sessions(root))
        return made[-1]

    return make


def call(parts, name, **args):
    return {t.name: t for t in all_tools()}[name].run(args, parts.ctx)


def test_default_patterns_hide_key_files(session):
    parts = session()
    with pytest.raises(ToolError, match="keys/server.key is hidden from the file tools"):
        call(parts, "file_read", path="keys/server.key")
    with pytest.raises(ToolError, match="hidden"):
        call(parts, "file_write", path="keys/other.key", content="x")
    assert not (parts.ws.files_dir / "keys" / "other.key").exists()
    listing = call(parts, "file_list", path="keys")
    assert "server.key" not in listing and "1 hidden" in listing
    assert call(parts, "file_read", path="notes.txt") == "shopping: eggs\n"


def test_a_hidden_folder_hides_everything_below_it(session):
    parts = session('["private/"]')
    with pytest.raises(ToolError, match="hidden"):
        call(parts, "file_read", path="private/diary.md")
    with pytest.raises(ToolError, match="hidden"):
        call(parts, "file_list", path="private")
    top = call(parts, "file_list")
    assert "private" not in top and "notes.txt" in top and "1 hidden" in top
    # the setting replaces the defaults: key files are visible again
    assert "not really a key" in call(parts, "file_read", path="keys/server.key")


def test_bad_hidden_setting_is_a_config_error(tmp_path):
    cfg = tmp_path / "config.toml"
    assert_config_refused(cfg, '[files]\nhidden = ["", "*.key"]\n', "files.hidden")
    assert_config_refused(cfg, '[files]\nhidden = "*.key"\n', "files.hidden")
