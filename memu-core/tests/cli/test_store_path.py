"""A mistyped ``MEMU_DB`` is refused in one line; it never becomes a new, empty store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memu_core._cli.main import MEMU
from memu_core._cli.shell import run


@pytest.mark.parametrize("verb", [["retrieve", "how do we deploy"], ["list-files"], ["doctor"]])
def test_a_store_in_a_folder_that_does_not_exist_is_refused(
    memu_home: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    typo = memu_home / "nonexistent" / "dir" / "memu.sqlite3"
    os.environ["MEMU_DB"] = str(typo)  # memu_home's monkeypatch restores the environment
    code = run(MEMU, verb)
    out, err = capsys.readouterr()
    assert code in (1, 2)
    message = f"MEMU_DB names {str(typo)!r}, but its folder {str(typo.parent)!r} does not exist; correct MEMU_DB"
    assert message in (err if verb[0] != "doctor" else out)
    if verb[0] != "doctor":
        assert len(err.strip().splitlines()) == 1 and out == ""
    assert not (memu_home / "nonexistent").exists()


def test_the_default_store_and_its_folder_are_still_created_on_demand(
    memu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(MEMU, ["retrieve", "anything"]) == 0
    assert (memu_home / ".memu" / "memu.sqlite3").is_file()


def test_an_explicit_store_in_an_existing_folder_is_created(memu_home: Path) -> None:
    path = memu_home / "elsewhere.sqlite3"
    os.environ["MEMU_DB"] = str(path)
    assert run(MEMU, ["list-files"]) == 0
    assert path.is_file()
