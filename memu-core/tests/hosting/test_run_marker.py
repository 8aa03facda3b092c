"""Overlapping bridging runs: a second prepare never interleaves with an unfinished run, and a
commit only promotes and clears its own run (real files, the real SQLite store, the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memu_core._layout import Layout
from memu_core.host import run_host

from .conftest import TOY, toy_line, write_session


def _tree(home: Path) -> Layout:
    return Layout.at(home / ".memu" / "hosts" / "toy", "toy")


def _agent_reads(layout: Layout) -> set[str]:
    """What an agent working the run's jobs sees: the texts in its conversation slices."""
    seen: set[str] = set()
    for path in layout.sessions.glob("*.jsonl"):
        if not path.stem.endswith("_full"):
            seen |= {json.loads(line)["text"] for line in path.read_text().splitlines()}
    return seen


def _write(root: Path, first: int, last: int) -> None:
    for n in range(first, last):
        write_session(root, f"s{n % 4}", toy_line("user", f"record {n}"))


def test_overlapping_runs_lose_no_record(sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layout = _tree(home)
    _write(sessions_root, 0, 16)
    assert run_host(TOY, ["prepare"]) == 0  # run A
    seen = _agent_reads(layout)  # A's agent works its jobs ...
    _write(sessions_root, 16, 32)
    capsys.readouterr()
    second = run_host(TOY, ["prepare"])  # ... while run B starts
    out, err = capsys.readouterr()
    assert second == 3 and out == ""
    assert err.startswith("error: an unfinished bridging run (") and err.count("\n") == 1
    assert "commit" in err and "--abandon-unfinished" in err
    assert run_host(TOY, ["commit"]) == 0  # A finishes its own run
    assert run_host(TOY, ["prepare"]) == 0  # B, now that the tree is free
    seen |= _agent_reads(layout)
    assert run_host(TOY, ["commit"]) == 0
    assert seen == {f"record {n}" for n in range(32)}
    assert run_host(TOY, ["prepare"]) == 0
    assert _agent_reads(layout) == set()


def test_a_dropped_runs_late_commit_moves_nothing(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = _tree(home)
    _write(sessions_root, 0, 8)
    monkeypatch.setenv("TOY_SESSION_ID", "run-a")
    assert run_host(TOY, ["prepare"]) == 0
    seen = _agent_reads(layout)
    _write(sessions_root, 8, 16)
    monkeypatch.setenv("TOY_SESSION_ID", "run-b")
    monkeypatch.setenv("MEMU_RUN_STALE_AFTER", "0.001")  # A counts as dead: B takes the tree
    capsys.readouterr()
    assert run_host(TOY, ["prepare"]) == 0
    assert "dropped the unfinished bridging run" in capsys.readouterr().out
    pending = layout.cursor_pending.read_bytes()
    monkeypatch.setenv("TOY_SESSION_ID", "run-a")  # A was not dead after all: its late commit
    assert run_host(TOY, ["commit"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: this agent session's run was dropped") and err.count("\n") == 1
    assert layout.cursor_pending.read_bytes() == pending and not layout.cursor.exists()
    seen |= _agent_reads(layout)  # B's jobs are still there for B's agent
    monkeypatch.setenv("TOY_SESSION_ID", "run-b")
    assert run_host(TOY, ["commit"]) == 0
    assert seen == {f"record {n}" for n in range(16)}


def test_commit_with_another_runs_id_is_refused(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = _tree(home)
    _write(sessions_root, 0, 2)
    assert run_host(TOY, ["prepare"]) == 0
    run_id = json.loads(layout.run_marker.read_text())["run"]
    assert f"(run {run_id})" in capsys.readouterr().out
    assert run_host(TOY, ["commit", "--run", "20200101T000000-abcdef"]) == 2
    assert "is not the prepared run" in capsys.readouterr().err
    assert layout.cursor_pending.exists() and list(layout.jobs.glob("*.txt"))
    assert run_host(TOY, ["commit", "--run", run_id]) == 0
    assert layout.cursor.exists() and not layout.run_marker.exists()


def test_a_run_without_jobs_is_replaced_silently_and_a_next_run_may_finish_leftovers(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = _tree(home)
    assert run_host(TOY, ["prepare"]) == 0  # nothing to mine: no jobs
    _write(sessions_root, 0, 2)
    monkeypatch.setenv("TOY_SESSION_ID", "run-a")
    assert run_host(TOY, ["prepare"]) == 0
    # Run A died; the next scheduled run (another session) works the leftover jobs and commits.
    monkeypatch.setenv("TOY_SESSION_ID", "run-b")
    assert run_host(TOY, ["commit"]) == 0
    assert layout.cursor.exists() and not layout.run_marker.exists()


def test_bad_stale_setting_is_one_line(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_RUN_STALE_AFTER", "soon")
    assert run_host(TOY, ["prepare"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: MEMU_RUN_STALE_AFTER='soon' is not a number of seconds") and err.count("\n") == 1


def test_a_memu_cursor_is_honoured_so_migrated_sessions_are_not_mined_twice(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = _tree(home)
    write_session(sessions_root, "old", toy_line("user", "mined by memU"), "\n", toy_line("user", "also mined"))
    write_session(sessions_root, "grown", toy_line("user", "mined by memU too"))
    layout.base.mkdir(parents=True)
    # memU's cursor: the count of non-blank lines read, per session key.
    layout.cursor.write_text(json.dumps({"old.jsonl": {"lines": 2}, "grown.jsonl": {"lines": 1}}))
    write_session(sessions_root, "grown", toy_line("user", "said after the migration"))
    assert run_host(TOY, ["prepare"]) == 0
    assert _agent_reads(layout) == {"said after the migration"}
