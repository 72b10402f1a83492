"""Item 4b of issue 10: one name, one note. `people/josé.md` in NFC and in NFD became two notes
shown under the same name. Names are taken in NFC, and a name whose NFC form matches an entry
spelled differently on disk is refused (memory and the file tools)."""

from __future__ import annotations

import pytest

from e2e_support import make_ws, memory_files

NFC = "people/jos\u00e9.md"
NFD = "people/jose\u0301.md"


def test_an_nfd_name_is_written_under_its_nfc_spelling(tmp_path):
    from assistant.memory import memory_read, memory_write

    ws = make_ws(tmp_path)
    r = memory_write(NFD, "José likes tea.\n", workspace=ws)
    assert r.path == NFC
    assert NFC in memory_files(ws) and NFD not in memory_files(ws)
    assert memory_read(NFD, workspace=ws).content == "José likes tea.\n"


def test_a_name_matching_an_entry_spelled_otherwise_on_disk_is_refused(tmp_path):
    from assistant.memory import PathRefused, memory_read, memory_write

    ws = make_ws(tmp_path)
    (ws / "memory" / "people").mkdir(exist_ok=True)
    (ws / "memory" / NFD).write_text("written by a sync client\n")
    for name in (NFC, NFD):
        with pytest.raises(PathRefused, match="spelled"):
            memory_write(name, "José likes coffee.\n", workspace=ws)
        # issue 23 item 15: the one entry of that name is read (no second one to confuse it
        # with); only when both spellings are on disk is a read refused
        assert memory_read(name, workspace=ws).content == "written by a sync client\n"
    assert [k for k in memory_files(ws) if k.startswith("people/jos")] == [NFD]
    (ws / "memory" / NFC).write_text("a second José\n")
    for name in (NFC, NFD):
        with pytest.raises(PathRefused, match="spelled"):
            memory_read(name, workspace=ws)


def test_a_folder_spelled_otherwise_on_disk_is_refused_too(tmp_path):
    from assistant.memory import PathRefused, memory_write

    ws = make_ws(tmp_path)
    (ws / "memory" / "caf\u0065\u0301").mkdir()
    with pytest.raises(PathRefused, match="spelled"):
        memory_write("caf\u00e9/menu.md", "soup\n", workspace=ws)


def test_the_kelvin_sign_is_not_a_second_k(tmp_path):
    from assistant.memory import PathRefused, memory_write

    ws = make_ws(tmp_path)
    (ws / "memory" / "\u212aey.md").write_text("kelvin\n")
    with pytest.raises(PathRefused, match="spelled"):
        memory_write("Key.md", "plain k\n", workspace=ws)


def test_the_file_tools_take_one_spelling_per_name(tmp_path):
    from assistant.session import open_session
    from assistant.tools.base import ToolError
    from assistant.tools.files import file_read, file_write

    ws = make_ws(tmp_path)
    (ws / "files" / "r\u00e9sum\u00e9.txt").write_text("mine\n")       # NFC: the person's file
    with open_session(ws, "watched", kind="test", transcript=False) as s:
        # an NFD spelling of the same name reaches the same file, never a second one
        assert file_read({"path": "re\u0301sume\u0301.txt"}, s.ctx) == "mine\n"
        file_write({"path": "re\u0301sume\u0301.txt", "content": "replaced\n"}, s.ctx)
        assert sorted(p.name for p in (ws / "files").iterdir() if "sum" in p.name) == ["r\u00e9sum\u00e9.txt"]
        (ws / "files" / "nai\u0308ve.txt").write_text("sync client\n")     # NFD on disk
        with pytest.raises(ToolError, match="spelled"):
            file_write({"path": "na\u00efve.txt", "content": "second\n"}, s.ctx)
