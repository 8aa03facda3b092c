"""A steady ``prepare`` skips listing the store when neither the store nor the mirror changed since
a sync that changed nothing, and lists it again on any change: a write by another process, an
edit or deletion in the mirror, another scope, another store file (real SQLite store, the CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memu_core._bridge import backend as bridge_backend
from memu_core.host import run_host
from memu_core.interfaces import AgenticMemoryBackend

from .conftest import TOY, toy_line, write_session

STORE_ONE = """
import sys
import time
from memu_core._compose import local_engine
engine = local_engine()
try:
    engine.commit_results(
        recall_files=[{"name": sys.argv[1], "track": "memory", "description": "d", "content": sys.argv[2]}]
    )
finally:
    engine.close()
"""


def _store_elsewhere(name: str, content: str) -> None:
    """Commit one file from another process, as a concurrent ``memu commit`` would."""
    done = subprocess.run(
        [sys.executable, "-c", STORE_ONE, name, content], env=dict(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times ``prepare`` opened the backend (the real one, counted)."""
    calls: list[int] = []
    real = bridge_backend.open_backend

    def counting() -> AgenticMemoryBackend:
        calls.append(1)
        return real()

    monkeypatch.setattr(bridge_backend, "open_backend", counting)
    return calls


def _round(sessions_root: Path, n: int) -> None:
    """One session grew; prepare, then commit what the mirror holds."""
    write_session(sessions_root, "s1", toy_line("user", f"turn {n}: deploys go through make ship"))
    assert run_host(TOY, ["prepare"]) == 0
    assert run_host(TOY, ["commit"]) == 0


def _memory(home: Path) -> Path:
    return home / ".memu" / "hosts" / "toy" / "memory"


def test_a_steady_prepare_does_not_open_the_store_but_a_write_elsewhere_is_mirrored(
    sessions_root: Path, home: Path, opened: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    _store_elsewhere("deploys", "make ship")
    _round(sessions_root, 1)  # lists: no stamp yet
    _round(sessions_root, 2)  # lists: the first sync changed the tree
    assert (_memory(home) / "deploys.md").is_file()
    before = len(opened)
    _round(sessions_root, 3)
    assert len(opened) == before, "a steady prepare opened the store"

    _store_elsewhere("tests", "run pytest -x first")  # another process commits between two prepares
    write_session(sessions_root, "s1", toy_line("user", "turn 4"))
    assert run_host(TOY, ["prepare"]) == 0
    assert len(opened) == before + 1
    assert sorted(p.name for p in _memory(home).glob("*.md")) == ["deploys.md", "tests.md"]
    assert "run pytest -x first" in (_memory(home) / "tests.md").read_text()


def test_a_mirror_file_deleted_or_edited_without_a_commit_is_handled_as_a_full_sync_would(
    sessions_root: Path, home: Path, opened: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    _store_elsewhere("deploys", "make ship")
    for n in range(3):
        _round(sessions_root, n)
    doc = _memory(home) / "deploys.md"
    text = doc.read_text()
    doc.unlink()  # deleted in the mirror, never committed: the store's copy comes back
    write_session(sessions_root, "s1", toy_line("user", "turn 9"))
    before = len(opened)
    assert run_host(TOY, ["prepare"]) == 0
    assert doc.read_text() == text and len(opened) == before + 1

    doc.write_text(text.replace("make ship", "make ship-it"))  # an uncommitted edit is kept
    write_session(sessions_root, "s1", toy_line("user", "turn 10"))
    capsys.readouterr()
    assert run_host(TOY, ["prepare", "--json", "--abandon-unfinished"]) == 0
    assert '"kept_edits": 1' in capsys.readouterr().out
    assert "make ship-it" in doc.read_text() and len(opened) == before + 2


def test_another_scope_is_listed_again(
    sessions_root: Path, home: Path, opened: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _store_elsewhere("deploys", "make ship")
    for n in range(3):
        _round(sessions_root, n)
    before = len(opened)
    monkeypatch.setenv("MEMU_USER_ID", "bob")
    write_session(sessions_root, "s1", toy_line("user", "turn 5"))
    assert run_host(TOY, ["prepare"]) == 0
    assert len(opened) == before + 1 and not list(_memory(home).glob("*.md"))


def test_another_store_file_at_the_same_path_and_generation_is_listed_again(
    sessions_root: Path, home: Path, opened: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = home / ".memu" / "memu.sqlite3"
    other = home / "other.sqlite3"
    monkeypatch.setenv("MEMU_DB", str(other))
    _store_elsewhere("other", "another store's file")  # generation 1, as the first store below
    monkeypatch.delenv("MEMU_DB")
    _store_elsewhere("deploys", "make ship")
    for n in range(3):
        _round(sessions_root, n)
    before = len(opened)
    for suffix in ("-wal", "-shm"):  # both stores were closed, so their WALs are checkpointed
        Path(f"{first}{suffix}").unlink(missing_ok=True)
    os.replace(other, first)  # restored from another machine's backup, say
    write_session(sessions_root, "s1", toy_line("user", "turn 6"))
    assert run_host(TOY, ["prepare"]) == 0
    assert len(opened) == before + 1
    assert sorted(p.name for p in _memory(home).glob("*.md")) == ["other.md"]


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times ``prepare`` read the store's generation through SQLite (counted)."""
    from memu_core._bridge import mirrorstamp

    calls: list[int] = []
    real = mirrorstamp._probe

    def counting(path: Path, scope: str) -> str | None:
        calls.append(1)
        return real(path, scope)

    monkeypatch.setattr(mirrorstamp, "_probe", counting)
    return calls


def _age_store(home: Path, seconds: int = 3600) -> None:
    """Date the store's files back, as if the last write were ``seconds`` ago (a steady run's
    store was last written hours earlier; this test's was written a moment ago)."""
    at = time.time_ns() - seconds * 1_000_000_000
    for suffix in ("", "-wal"):
        path = Path(f"{home / '.memu' / 'memu.sqlite3'}{suffix}")
        if path.exists():
            os.utime(path, ns=(at, at))


def _settle_with_an_aged_store(sessions_root: Path, home: Path) -> None:
    """A store written elsewhere, three runs, the store's files dated back an hour, and one more
    run: the files changed since the last stamp, so it reads the store again and records them."""
    _store_elsewhere("deploys", "make ship")
    for n in range(3):
        _round(sessions_root, n)
    _age_store(home)
    _round(sessions_root, 3)


def test_quiet_store_files_vouch_for_the_stamp_and_any_write_is_still_noticed(
    sessions_root: Path, home: Path, opened: list[int], probed: list[int]
) -> None:
    _settle_with_an_aged_store(sessions_root, home)
    before, reads = len(opened), len(probed)
    _round(sessions_root, 4)
    _round(sessions_root, 5)
    assert (len(opened), len(probed)) == (before, reads), "a steady prepare read the store"

    _store_elsewhere("tests", "run pytest -x first")  # a write moves the log's (or store's) time
    write_session(sessions_root, "s1", toy_line("user", "turn 6"))
    assert run_host(TOY, ["prepare"]) == 0
    assert (len(opened), len(probed)) == (before + 1, reads + 1)
    assert sorted(p.name for p in _memory(home).glob("*.md")) == ["deploys.md", "tests.md"]


def test_a_store_rewritten_in_place_at_the_same_size_is_read_again(
    sessions_root: Path, home: Path, opened: list[int], probed: list[int]
) -> None:
    _settle_with_an_aged_store(sessions_root, home)
    reads = len(probed)
    store = home / ".memu" / "memu.sqlite3"
    data = store.read_bytes()
    with store.open("r+b") as fh:  # the same bytes, written again: only the time moves
        fh.write(data)
    _round(sessions_root, 4)
    assert len(probed) == reads + 1


def test_store_files_are_not_vouched_for_while_recently_written(tmp_path: Path) -> None:
    from memu_core._bridge import mirrorstamp

    store = tmp_path / "memu.sqlite3"
    store.write_bytes(b"x" * 10)
    assert mirrorstamp.store_files(store, "s") is None  # written just now: its time may repeat
    old = time.time_ns() - 10 * mirrorstamp.QUIET_NS
    os.utime(store, ns=(old, old))
    quiet = mirrorstamp.store_files(store, "s")
    assert quiet is not None and quiet.endswith("|-")
    wal = Path(f"{store}-wal")
    wal.write_bytes(b"")  # an empty log holds nothing, whenever it was made
    assert mirrorstamp.store_files(store, "s") == quiet
    wal.write_bytes(b"frame")
    assert mirrorstamp.store_files(store, "s") is None
    os.utime(wal, ns=(old, old))
    assert mirrorstamp.store_files(store, "s") not in (None, quiet)
    assert mirrorstamp.store_files(store, "other scope") != mirrorstamp.store_files(store, "s")
