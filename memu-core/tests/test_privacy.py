"""Whoever creates ``~/.memu`` (``memu commit``, a host's ``prepare``, ``init``, the warm server),
its folders are 0700 and its files 0600 (``prepare``'s tree: tests/hosting/test_host_privacy.py);
``init`` tightens what an older memu left open; a folder memu did not create is never chmod-ed.

The tests run under the common umask 022, the one that made these files world-readable before.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core import _layout
from memu_core._config import commands
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.errors import UsageError
from memu_core.types import Scope

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")

OTHER_UID = 54_321
"""A uid no test user has: files chown-ed to it belong to "another user" (the tests run as root)."""


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(autouse=True)
def common_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_the_store_memu_creates_is_private_with_its_wal_and_shm(memu_home: Path) -> None:
    store = SqliteStore.open(str(_layout.default_db()))
    try:
        store.get_files(Scope("u", "a"), [("memory", "x")])  # opened and migrated: -wal and -shm exist
        root = memu_home / ".memu"
        assert mode(root) == 0o700
        db = _layout.default_db()
        companions = [p for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if p.exists()]
        assert len(companions) >= 2
        assert {p.name: mode(p) for p in companions} == {p.name: 0o600 for p in companions}
    finally:
        store.close()


def test_a_store_in_the_users_own_folder_is_made_0600_and_the_folder_is_left_alone(
    memu_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    store = SqliteStore.open(str(folder / "memu.db"))
    store.close()
    assert mode(folder / "memu.db") == 0o600
    assert mode(folder) == 0o755
    # A folder memu had to make for it is memu's: private.
    store = SqliteStore.open(str(folder / "new" / "memu.db"))
    store.close()
    assert mode(folder / "new") == 0o700 and mode(folder) == 0o755


def test_init_tightens_what_exists_and_says_how_many(memu_home: Path, tmp_path: Path) -> None:
    root = memu_home / ".memu"
    slices = root / "hosts" / "toy" / "sessions"
    slices.mkdir(parents=True, mode=0o755)
    for folder in (root, root / "hosts", root / "hosts" / "toy", slices):
        os.chmod(folder, 0o755)
    (slices / "1.jsonl").write_text("{}\n")
    os.chmod(slices / "1.jsonl", 0o644)
    wrapper = root / "hosts" / "toy" / "bridge.sh"
    wrapper.write_text("#!/bin/sh\n")
    os.chmod(wrapper, 0o755)
    outside = tmp_path / "elsewhere.db"
    outside.write_text("")
    os.chmod(outside, 0o644)
    out = io.StringIO()
    assert commands.run_init("memu", None, out, io.StringIO()) == 0
    assert "privacy   6 path(s) under ~/.memu were open to other users; now owner-only\n" in out.getvalue()
    assert mode(root) == mode(slices) == 0o700 and mode(slices / "1.jsonl") == 0o600
    assert mode(root / "config.env") == 0o600
    assert mode(wrapper) == 0o700  # its owner may still run it
    assert mode(outside) == 0o644  # not memu's folder: not memu's to change
    again = io.StringIO()
    commands.run_init("memu", None, again, io.StringIO())
    assert "privacy" not in again.getvalue()


def test_init_leaves_another_users_files_alone(memu_home: Path) -> None:
    theirs = memu_home / ".memu" / "theirs"
    theirs.mkdir(parents=True)
    os.chmod(theirs, 0o755)
    os.chown(theirs, OTHER_UID, OTHER_UID)
    commands.run_init("memu", None, io.StringIO(), io.StringIO())
    assert mode(theirs) == 0o755


# -- the warm server's run directory -----------------------------------------------------------
def test_the_default_run_dir_is_made_and_kept_private(memu_home: Path) -> None:
    path = _layout.ensure_run_dir()
    assert path == memu_home / ".memu" / "run" and mode(path) == 0o700 and mode(path.parent) == 0o700
    os.chmod(path, 0o755)
    _layout.ensure_run_dir()
    assert mode(path) == 0o700


def test_a_run_dir_of_another_user_is_refused_and_never_chmod_ed(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-run"
    shared.mkdir()
    os.chmod(shared, 0o755)
    os.chown(shared, OTHER_UID, OTHER_UID)
    monkeypatch.setenv("MEMU_RUN_DIR", str(shared))
    with pytest.raises(_layout.RunDirError) as caught:
        _layout.ensure_run_dir()
    message = str(caught.value)
    assert "\n" not in message and f"MEMU_RUN_DIR {shared} belongs to another user (uid {OTHER_UID})" in message
    assert "point MEMU_RUN_DIR at a folder of your own" in message
    assert mode(shared) == 0o755 and os.stat(shared).st_uid == OTHER_UID


def test_the_warm_server_turns_a_bad_run_dir_into_a_usage_error(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memu_core._serve.server import WarmServer

    shared = tmp_path / "shared-run"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("MEMU_RUN_DIR", str(shared))
    built: list[object] = []
    with pytest.raises(UsageError) as caught:
        WarmServer.start(lambda: built.append(1), idle=60)
    assert f"MEMU_RUN_DIR {shared} can be written by other users (mode 777); run `chmod 700 {shared}`" in str(
        caught.value
    )
    assert built == [] and mode(shared) == 0o777


def test_a_private_run_dir_of_ones_own_is_used_as_it_is(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "run"
    mine.mkdir()
    os.chmod(mine, 0o711)
    monkeypatch.setenv("MEMU_RUN_DIR", str(mine))
    assert _layout.ensure_run_dir() == mine and mode(mine) == 0o711
