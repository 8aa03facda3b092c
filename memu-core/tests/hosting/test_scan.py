"""Discovery never starves the backlog; self-sessions are skipped with ``continue``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memu_core._bridge import scan
from memu_core.types import SessionFile, TranscriptRead

from .conftest import ToySource, toy_line, write_session


def _cycle(
    src: ToySource, cursor: dict[str, object], max_jobs: int, skip: frozenset[str] = frozenset()
) -> scan.ScanResult:
    stage = src.root().with_name(src.root().name + "-stage")
    stage.mkdir(exist_ok=True)
    return scan.scan(src, cursor, set(skip), max_jobs, stage)


def test_every_changed_session_is_mined_eventually(tmp_path: Path) -> None:
    for i in range(25):
        write_session(tmp_path, f"s{i:02d}", toy_line("user", f"hello {i}"), mtime=1_000 + i)
    src = ToySource(tmp_path)
    cursor: dict[str, object] = {}
    mined: list[str] = []
    remaining: list[int] = []
    for _ in range(10):
        result = _cycle(src, cursor, max_jobs=4)
        mined += [p.key for p in result.picked]
        remaining.append(result.remaining)
        cursor = result.cursor  # what commit promotes
        if not result.picked:
            break
    assert sorted(mined) == sorted(f"s{i:02d}.jsonl" for i in range(25))
    assert len(mined) == 25  # each exactly once
    assert remaining[0] == 21 and remaining[-1] == 0


def test_first_run_takes_newest_and_oldest(tmp_path: Path) -> None:
    for i in range(10):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)
    result = _cycle(ToySource(tmp_path), {}, max_jobs=4)
    assert [p.key for p in result.picked] == ["s0.jsonl", "s1.jsonl", "s8.jsonl", "s9.jsonl"]  # oldest first


def test_backlog_is_not_hidden_by_an_unchanged_newer_session(tmp_path: Path) -> None:
    # memU stops at the first already-seen unchanged session, so older unseen ones stay hidden.
    for i in range(6):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)
    src = ToySource(tmp_path)
    first = _cycle(src, {}, max_jobs=2)
    assert {p.key for p in first.picked} == {"s0.jsonl", "s5.jsonl"}
    second = _cycle(src, first.cursor, max_jobs=2)
    assert {p.key for p in second.picked} == {"s1.jsonl", "s4.jsonl"}


def test_grown_sessions_yield_only_their_new_records(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", toy_line("user", "a"), toy_line("assistant", "b"))
    src = ToySource(tmp_path)
    first = _cycle(src, {}, max_jobs=5)
    write_session(tmp_path, "s", toy_line("user", "c", ts="2026-01-02T00:00:00Z"))
    second = _cycle(src, first.cursor, max_jobs=5)
    [picked] = second.picked
    staged = (tmp_path.with_name(tmp_path.name + "-stage") / f"{picked.stem}.jsonl").read_text()
    assert staged == toy_line("user", "c", ts="2026-01-02T00:00:00Z").strip() + "\n"
    assert second.cursor["s.jsonl"]["lines"] == 3
    assert second.cursor["s.jsonl"]["last_timestamp"] == "2026-01-02T00:00:00Z"
    assert path.exists()
    third = _cycle(src, second.cursor, max_jobs=5)
    assert not third.picked and third.remaining == 0


def test_self_sessions_are_skipped_and_older_ones_still_mined(tmp_path: Path) -> None:
    for i in range(4):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)
    result = _cycle(ToySource(tmp_path), {}, max_jobs=10, skip=frozenset({"s3", "s1"}))
    assert [p.key for p in result.picked] == ["s0.jsonl", "s2.jsonl"]
    assert result.skipped_self == 2


def test_a_self_session_counts_as_skipped_only_when_it_has_new_records(tmp_path: Path) -> None:
    for i in range(3):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)
    src = ToySource(tmp_path)
    first = _cycle(src, {}, max_jobs=10, skip=frozenset({"s1"}))
    assert first.skipped_self == 1 and [p.key for p in first.picked] == ["s0.jsonl", "s2.jsonl"]
    # s1 stays unmined (no cursor entry), so it is still new and still passed over.
    write_session(tmp_path, "s2", toy_line("user", "y"), mtime=1_010)
    second = _cycle(src, first.cursor, max_jobs=10, skip=frozenset({"s1"}))
    assert second.skipped_self == 1 and [p.key for p in second.picked] == ["s2.jsonl"]
    # With a cursor entry that matches it (a run of long ago), an unchanged s1 is not counted.
    cursor = dict(second.cursor)
    s1 = tmp_path / "s1.jsonl"
    cursor["s1.jsonl"] = {"size": s1.stat().st_size, "mtime_ns": s1.stat().st_mtime_ns, "offset": 0, "lines": 0}
    third = _cycle(src, cursor, max_jobs=10, skip=frozenset({"s1"}))
    assert third.skipped_self == 0 and not third.picked


def test_a_steady_scan_builds_no_path_for_an_unchanged_session(tmp_path: Path) -> None:
    """The sessions a steady run finds unchanged are thousands: their keys are read off the
    listed path strings, and only the changed session's ``Path`` is built."""
    for i in range(5):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)
    src = ToySource(tmp_path)
    first = _cycle(src, {}, max_jobs=10)
    write_session(tmp_path, "s3", toy_line("user", "y"), mtime=1_010)
    listed: list[SessionFile] = []
    discover = src.discover

    def recording_discover() -> list[SessionFile]:
        found = discover()
        listed.extend(found)
        return found

    src.discover = recording_discover  # type: ignore[method-assign]
    second = _cycle(src, first.cursor, max_jobs=10, skip=frozenset({"another-run"}))
    assert [p.key for p in second.picked] == ["s3.jsonl"]
    built = sorted(s.path.name for s in listed if s._path is not None)
    assert built == ["s3.jsonl"]


def test_sessions_with_only_a_partial_line_take_no_slot(tmp_path: Path) -> None:
    write_session(tmp_path, "partial", '{"role": "user"', mtime=2_000)
    write_session(tmp_path, "full", toy_line("user", "x"), mtime=1_000)
    result = _cycle(ToySource(tmp_path), {}, max_jobs=1)
    assert [p.key for p in result.picked] == ["full.jsonl"]


def test_worker_processes_stage_the_same_slices(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    from memu_core._bridge import mine

    if mine._workers() < 2:
        pytest.skip("needs fork and two CPUs")
    for i in range(12):
        write_session(
            tmp_path,
            f"s{i:02d}",
            toy_line("user", f"key sk-{'a1' * 20} {i}"),
            toy_line("tool", "out"),
            mtime=1_000 + i,
        )
    src = ToySource(tmp_path)
    serial = _cycle(src, {}, max_jobs=12)
    serial_files = {
        m.key: (src.root().with_name(src.root().name + "-stage") / f"{m.stem}_full.jsonl").read_text()
        for m in serial.picked
    }
    mp = pytest.MonkeyPatch()
    mp.setattr(mine, "PARALLEL_MIN_BYTES", 0)
    mp.setattr(mine, "_busy_cores", lambda *_: 0.0)  # the pool even when the machine is busy
    mp.setattr(mine, "PROBE_SECONDS", 0.0)  # one session mined here, the rest by the pool
    mp.setattr(mine, "MIN_POOL_WORKERS", 2)  # a pool even on two cores
    try:
        parallel = _cycle(src, {}, max_jobs=12)
    finally:
        mp.undo()
    parallel_files = {
        m.key: (src.root().with_name(src.root().name + "-stage") / f"{m.stem}_full.jsonl").read_text()
        for m in parallel.picked
    }
    assert parallel_files == serial_files and parallel.cursor == serial.cursor
    assert parallel.redacted == serial.redacted == 12


def test_a_file_that_vanishes_mid_scan_is_skipped_and_retried(tmp_path: Path) -> None:
    for i in range(3):
        write_session(tmp_path, f"s{i}", toy_line("user", "x"), mtime=1_000 + i)

    class Vanishing(ToySource):
        def discover(self):  # type: ignore[no-untyped-def]
            found = super().discover()
            (tmp_path / "s1.jsonl").unlink()  # gone between the listing and the read
            return found

    result = _cycle(Vanishing(tmp_path), {}, max_jobs=10)
    assert sorted(m.key for m in result.picked) == ["s0.jsonl", "s2.jsonl"]
    assert result.unreadable == 1 and "s1.jsonl" not in result.cursor


def test_progress_counts_the_sessions_this_run_reads(tmp_path: Path) -> None:
    # A backlog: 7 changed sessions, 4 slots. The total is the run's share, told before the first read.
    for i in range(7):
        write_session(tmp_path, f"s{i}", toy_line("user", f"turn {i}"), mtime=1_000 + i)
    src = ToySource(tmp_path)
    stage = tmp_path.with_name(tmp_path.name + "-stage")
    stage.mkdir()
    seen: list[tuple[int, int]] = []
    result = scan.scan(src, {}, set(), 4, stage, progress=lambda done, total: seen.append((done, total)))
    assert len(result.picked) == 4 and result.remaining == 3
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]


def test_progress_moves_while_the_batch_is_read(tmp_path: Path) -> None:
    """Each session is told as soon as it is mined, not when the whole batch is (a first run's
    backlog is one batch: its progress sat at zero until the end)."""
    for i in range(5):
        write_session(tmp_path, f"s{i}", toy_line("user", f"turn {i}"), mtime=1_000 + i)
    told: list[int] = []
    told_before_read: list[int] = []

    class Watched(ToySource):
        def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
            told_before_read.append(len(told))
            return super().read_incremental(session, previous)

    stage = tmp_path.with_name(tmp_path.name + "-stage")
    stage.mkdir()
    scan.scan(Watched(tmp_path), {}, set(), 5, stage, progress=lambda done, total: told.append(done))
    assert told == [0, 1, 2, 3, 4, 5]
    assert told_before_read == [1, 2, 3, 4, 5]  # the start, then one more before each next read
