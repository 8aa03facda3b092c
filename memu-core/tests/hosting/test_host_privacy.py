"""A host's working tree is private, and its doctor says when it is not, when a bridging run
was left unfinished, and when an installed schedule has gone."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._bridge import run
from memu_core._layout import Layout
from memu_core.host import run_host

from .conftest import TOY, toy_line, write_session

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")

OTHER_UID = 54_321
"""A uid no test user has (the tests run as root, which may chown to it)."""


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(autouse=True)
def common_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _doctor(capsys: pytest.CaptureFixture[str]) -> str:
    run_host(TOY, ["doctor"])
    out: str = capsys.readouterr().out
    return out


def _prepared(sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    write_session(sessions_root, "s1", toy_line("user", "I deploy with make ship"))
    assert run_host(TOY, ["prepare"]) == 0, capsys.readouterr()
    capsys.readouterr()
    return home / ".memu" / "hosts" / "toy"


def test_prepare_makes_a_private_tree_slices_and_jobs(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _prepared(sessions_root, home, capsys)
    root = home / ".memu"
    for folder in (root, root / "hosts", base, base / "sessions", base / "jobs", base / "memory", base / "skill"):
        assert mode(folder) == 0o700, folder
    written = [*(base / "sessions").iterdir(), *(base / "jobs").iterdir(), base / ".bridging_run.toy.json"]
    assert len(written) == 6
    assert {p.name: mode(p) for p in written} == {p.name: 0o600 for p in written}


def test_doctor_reports_an_unfinished_run_and_warns_once_it_is_stale(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _prepared(sessions_root, home, capsys)
    out = _doctor(capsys)
    marker = run.read(Layout.at(base, "toy").run_marker)
    assert marker is not None
    assert (
        f"bridging    run {marker.run}, prepared " in out and ": in progress (its agent runs `memu-toy commit`" in out
    )
    old = run.RunMarker(marker.run, time.time() - 5 * 3600, marker.pid, marker.jobs, marker.owner)
    run.write(Layout.at(base, "toy").run_marker, old)
    out = _doctor(capsys)
    assert f"bridging    WARN  run {marker.run}, prepared 5.0 h ago, 3 job(s) in {base / 'jobs'}: unfinished " in out
    assert "fix: run `memu-toy prepare --abandon-unfinished` (or let the next run drop it)" in out


def test_doctor_says_when_nothing_is_unfinished(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _prepared(sessions_root, home, capsys)
    (base / ".bridging_run.toy.json").unlink()
    assert "bridging    no unfinished run\n" in _doctor(capsys)


def test_doctor_checks_the_trees_permissions_and_owner(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _prepared(sessions_root, home, capsys)
    assert f"tree        {base} private (yours; folders 0700, files 0600)\n" in _doctor(capsys)
    os.chmod(base / "sessions" / "1.jsonl", 0o644)
    out = _doctor(capsys)
    assert (
        f"tree        WARN  1 path(s) in {base} are open to other users: {base / 'sessions' / '1.jsonl'} (644)" in out
    )
    assert f"fix: run `chmod -R go-rwx {base}`" in out
    os.chown(base / "jobs", OTHER_UID, OTHER_UID)
    out = _doctor(capsys)
    assert f"tree        FAIL  1 path(s) in {base} belong to another user: {base / 'jobs'} (uid {OTHER_UID})" in out
    assert f"fix: as their owner or root, run `chown -R {os.geteuid()} {base}`" in out
