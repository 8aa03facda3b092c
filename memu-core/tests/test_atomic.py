"""The one atomic writer: the file is replaced whole, with the mode asked for, durably, and a
failure leaves the old file and no temp file behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memu_core import _atomic
from memu_core._atomic import PRIVATE, read_json, write_bytes, write_json, write_text

posix_only = pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@given(old=st.binary(max_size=4096), new=st.binary(max_size=4096))
def test_the_content_is_replaced_whole(tmp_path_factory: pytest.TempPathFactory, old: bytes, new: bytes) -> None:
    path = tmp_path_factory.mktemp("w") / "f.bin"
    write_bytes(path, old)
    write_bytes(path, new)
    assert path.read_bytes() == new
    assert os.listdir(path.parent) == ["f.bin"]


@posix_only
def test_the_mode_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "config.env"
    write_text(path, "A=1\n", mode=0o640)
    assert _mode(path) == 0o640
    write_text(path, "A=2\n", mode=0o600)
    assert _mode(path) == 0o600 and path.read_text() == "A=2\n"


@posix_only
def test_a_new_file_is_private_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    write_text(path, "one")
    assert _mode(path) == PRIVATE
    path.chmod(0o644)
    write_text(path, "two")
    assert _mode(path) == 0o644


def test_a_failed_replace_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cursor.json"
    write_json(path, {"v": 1})

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_json(path, {"v": 2})
    assert read_json(path, None) == {"v": 1}
    assert os.listdir(tmp_path) == ["cursor.json"]


def test_an_interrupted_write_leaves_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text(tmp_path / "x.md", "body")
    assert os.listdir(tmp_path) == []


@posix_only
def test_the_file_and_its_directory_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real = os.fsync

    def record(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    write_text(tmp_path / "a.json", "{}")
    assert synced == ["file", "dir"]
    synced.clear()
    write_text(tmp_path / "mirror.md", "rebuildable", fsync=False)
    assert synced == []


def test_read_json_fails_open(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    assert read_json(tmp_path / "bad.json", []) == []
    assert read_json(tmp_path / "missing.json", {"d": 1}) == {"d": 1}


def test_every_writer_goes_through_the_one_module() -> None:
    # The other rooms used to carry their own temp-and-rename writers (two without fsync).
    src = Path(_atomic.__file__).parent
    offenders = []
    for path in src.rglob("*.py"):
        if path.name == "_atomic.py":
            continue
        text = path.read_text(encoding="utf-8")
        if "mkstemp(" in text or "NamedTemporaryFile(" in text or ".fsync(" in text:
            offenders.append(str(path.relative_to(src)))
    assert offenders == []
