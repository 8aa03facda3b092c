"""``memu commit --from-dir``: each bad file named on one line, the rest committed, and
``--prune`` for files removed from the folder (issue 14)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memu_core._cli.memory_cmds import run_commit
from memu_core._compose import open_backend
from memu_core.errors import UsageError


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMU_DB", str(tmp_path / "memu.sqlite3"))
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "none")
    return tmp_path


def stored() -> set[tuple[str, str]]:
    backend = open_backend()
    try:
        return {(f["track"], f["name"]) for f in backend.list_all_recall_files(limit=200)["recall_files"]}
    finally:
        backend.close()


def note(folder: Path, rel: str, text: str | bytes) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_bad_files_are_named_and_the_rest_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "notes"
    note(folder, "good.md", "---\nname: good\n---\n- kept\n")
    note(folder, "unclosed.md", "---\nname: half\n- body\n")
    note(folder, "utf16.md", "---\nname: wide\n---\n".encode("utf-16"))
    note(folder, "latin1.md", "---\nname: caf\xe9\n---\n".encode("latin-1"))
    note(folder, "slash.md", '---\nname: "a/b"\n---\nx\n')
    note(folder, "track.md", "---\ntrack: notes\n---\nx\n")
    note(folder, "one.md", "---\nname: twice\n---\n- one\n")
    note(folder, "two.md", "---\nname: twice\n---\n- two\n")
    (folder / "folder.md").mkdir()
    os.symlink(folder / "missing", folder / "dangling.md")
    with pytest.raises(UsageError, match="7 file"):
        run_commit(None, folder, False)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 7 and all(line.startswith("not committed: ") for line in err)
    text = "\n".join(err)
    assert "unclosed.md: the frontmatter opened with '---' is never closed" in text
    assert "utf16.md is UTF-16 text; save it as UTF-8" in text
    assert "latin1.md is not UTF-8 text" in text
    assert "the name 'a/b' holds '/'" in text
    assert "unknown track 'notes'; use one of memory, skill" in text
    assert f"{folder / 'one.md'} and {folder / 'two.md'} all hold the memory file 'twice'" in text
    assert "dangling.md cannot be read" in text
    assert stored() == {("memory", "good")}


def test_prune_makes_the_track_match_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "notes"
    note(folder, "a.md", "---\nname: a\n---\n- a\n")
    gone = note(folder, "b.md", "---\nname: b\n---\n- b\n")
    skill = note(folder, "skills/s.md", "---\nname: s\n---\nstep\n")
    run_commit(None, folder, False)
    gone.unlink()
    skill.unlink()
    run_commit(None, folder, False)
    assert ("memory", "b") in stored()  # without --prune a removed file stays stored
    run_commit(None, folder, False, prune=True)
    assert "pruned 1 recall file(s)" in capsys.readouterr().out
    # The skill track has no file in the folder, so --prune leaves it alone.
    assert stored() == {("memory", "a"), ("skill", "s")}


def test_prune_writes_nothing_when_a_file_is_bad(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    note(folder, "a.md", "---\nname: a\n---\n- a\n")
    run_commit(None, folder, False)
    note(folder, "b.md", "---\nname: b\n---\n- b\n")
    note(folder, "a.md", "---\nname: a\n- unclosed\n")
    with pytest.raises(UsageError, match="--prune needs every file"):
        run_commit(None, folder, False, prune=True)
    assert stored() == {("memory", "a")}


def test_a_payload_name_is_refused_before_the_store(tmp_path: Path) -> None:
    payload = note(tmp_path, "p.json", '{"recall_files": [{"name": "x\\u0000y", "content": "a"}]}')
    with pytest.raises(UsageError, match=r"recall_files\[0\]: the name 'x\\x00y' holds the control character U\+0000"):
        run_commit(str(payload), None, False)
    long = note(tmp_path, "q.json", '{"recall_files": [{"name": "%s", "content": "a"}]}' % ("é" * 150))
    with pytest.raises(UsageError, match="is 300 bytes long in UTF-8; the limit is 200"):
        run_commit(str(long), None, False)
    assert stored() == set()
