"""``read_kept`` (what ``prepare`` mines through) gives exactly what ``read_incremental`` gives,
less the records it drops: same lines, kinds, cursor, counts and last timestamp (ADR 0026)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memu_host_claude_code.source import ClaudeCodeSource, CoworkSource
from memu_host_codex.source import CodexSource

from memu_core._bridge import mine
from memu_core.interfaces import TranscriptSource
from memu_core.types import KeptRead, SessionFile

HOSTS = Path(__file__).resolve().parents[3] / "memu-hosts"
STAMP = "2026-08-20T10:00:00Z"


def _session(path: Path) -> SessionFile:
    st_ = path.stat()
    return SessionFile(path, st_.st_mtime_ns, st_.st_size)


def _same(source: TranscriptSource, session: SessionFile, previous: dict[str, Any] | None = None) -> KeptRead:
    kept = source.read_kept(session, previous)
    assert kept == KeptRead.of(source.read_incremental(session, previous))
    return kept


def test_the_host_fixtures_read_the_same() -> None:
    claude = HOSTS / "memu-host-claude-code" / "tests" / "fixtures"
    cases: list[tuple[TranscriptSource, Path]] = [
        (ClaudeCodeSource(claude / "projects"), claude / "projects"),
        (CoworkSource([claude / "cowork"]), claude / "cowork"),
        (CodexSource(HOSTS / "memu-host-codex" / "tests" / "fixtures" / "sessions"), HOSTS / "memu-host-codex"),
    ]
    for source, root in cases:
        paths = sorted(root.rglob("*.jsonl"))
        assert paths
        for path in paths:
            _same(source, _session(path))


LINES = st.one_of(
    st.sampled_from(
        [
            "",
            "   ",
            "{not json",
            "[1, 2]",
            '"text"',
            "{}",
            '{"type":"user","message":{"role":"user","content":"hi"},"timestamp":"' + STAMP + '"}',
            '{"type":"user","isMeta":true,"message":{"role":"user","content":"x"},"timestamp":"t-meta"}',
            '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}',
            '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"1","input":{}}]},"timestamp":"t2"}',
            '{"type":"user","message":{"content":[{"tool_use_id":"1","type":"tool_result","content":"o"}]}'
            ',"toolUseResult":{"timestamp":"nested"}}',
            '{"type":"queue-operation","timestamp":"t-queue"}',
            '{"timestamp":"t-first","type":"summary"}',
            '{"type":"user","message":{"role":"user","content":"a"},"timestamp":5}',
        ]
    ),
    st.builds(
        lambda kind, text, ts: json.dumps(
            {"type": kind, "message": {"role": kind, "content": text}, **({"timestamp": ts} if ts else {})}
        ),
        st.sampled_from(["user", "assistant", "system"]),
        st.one_of(st.text(max_size=12), st.lists(st.fixed_dictionaries({"type": st.just("text")}), max_size=2)),
        st.one_of(st.none(), st.text(max_size=6)),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=12), cut=st.integers(min_value=0, max_value=40))
def test_any_mix_of_lines_reads_the_same(tmp_path: Path, lines: list[str], cut: int) -> None:
    root = tmp_path / "logs"
    root.mkdir(exist_ok=True)
    path = root / "s.jsonl"
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    path.write_bytes(data[: len(data) - cut % 3])  # sometimes a half-written last line
    first = _same(ClaudeCodeSource(root), _session(path))
    with path.open("ab") as fh:  # a later run reads only what was added
        fh.write(b'{"type":"user","message":{"role":"user","content":"later"}}\n')
    _same(ClaudeCodeSource(root), _session(path), first.cursor)


def test_the_pool_waits_for_an_idle_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mine, "_busy_cores", lambda *_: 64.0)
    assert mine._idle_cores() == 1
    monkeypatch.setattr(mine, "_busy_cores", lambda *_: 0.0)
    assert mine._idle_cores() == (os.cpu_count() or 1)


def test_idle_cores_are_measured_over_the_first_sessions_not_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that just ended keeps the one-minute load average up; the ticks measured while
    this process mined say what the other cores do now."""
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    # Over 100 ticks per core, this process kept one core busy and the others were idle.
    monkeypatch.setattr(mine, "_cpu_ticks", lambda: (1_000 + 100 * (cores - 1), 1_000 + 100 * cores))
    assert mine._idle_cores((1_000, 1_000)) == cores
    # Every core busy: no worker beside this process.
    monkeypatch.setattr(mine, "_cpu_ticks", lambda: (1_000, 1_000 + 100 * cores))
    assert mine._idle_cores((1_000, 1_000)) == 1
    # No ticks reported (not Linux): the load average, as before.
    monkeypatch.setattr(mine, "_cpu_ticks", lambda: None)
    assert mine._idle_cores((1_000, 1_000)) == 1


def test_cpu_ticks_read_the_system_counters() -> None:
    ticks = mine._cpu_ticks()
    if not Path("/proc/stat").exists():
        assert ticks is None
        return
    assert ticks is not None and 0 <= ticks[0] <= ticks[1]


def test_a_failed_slice_write_fails_the_batch(tmp_path: Path) -> None:
    """A slice that cannot be written fails the batch: a run never goes on with a slice missing."""
    root = tmp_path / "logs"
    root.mkdir()
    path = root / "s.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n', encoding="utf-8")
    source = ClaudeCodeSource(root)
    task = (source.key(path), _session(path), None, "c0")
    with pytest.raises(FileNotFoundError):
        list(mine.mine_batch(source, tmp_path / "no-such-stage", [task]))
    stage = tmp_path / "stage"
    stage.mkdir()
    mined = list(mine.mine_batch(source, stage, [task]))
    assert mined[0].records == 1 and (stage / "c0_full.jsonl").read_bytes().count(b"\n") == 1


def test_no_pool_below_the_fewest_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers cost more CPU than they save wall time (ADR 0026): fewer idle cores than
    ``MIN_POOL_WORKERS`` mine in this process, whatever the batch's size."""
    started: list[int] = []
    monkeypatch.setattr(mine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(mine, "PROBE_SECONDS", 0.0)
    monkeypatch.setattr(mine, "_workers", lambda: 2)
    monkeypatch.setattr(mine, "_idle_cores", lambda *_: 2)
    monkeypatch.setattr(mine, "_mine", lambda source, stage, tasks, workers: started.append(workers) or [])
    root = tmp_path / "logs"
    root.mkdir()
    sessions = []
    for i in range(6):
        path = root / f"s{i}.jsonl"
        path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
        sessions.append(_session(path))
    tasks = [(f"k{i}", s, None, f"c{i}") for i, s in enumerate(sessions)]
    assert len(list(mine.mine_batch(ClaudeCodeSource(root), tmp_path, tasks))) == 6
    assert started == []  # two workers at most: not even the probe runs
    monkeypatch.setattr(mine, "_workers", lambda: 4)
    list(mine.mine_batch(ClaudeCodeSource(root), tmp_path, tasks))
    assert started == [1]  # four cores, but only two idle: the rest is mined here too
    monkeypatch.setattr(mine, "_idle_cores", lambda *_: 4)
    list(mine.mine_batch(ClaudeCodeSource(root), tmp_path, tasks))
    assert started == [1, 4]  # four idle: a pool of four for the five sessions left after the probe
