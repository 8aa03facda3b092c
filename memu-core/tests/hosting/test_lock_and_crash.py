"""One run per tree at a time; a crash anywhere leaves the old or the new cursor, never a mix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memu_core._bridge import pipeline
from memu_core._bridge.lock import host_lock
from memu_core._layout import Layout
from memu_core.errors import LockBusy
from memu_core.host import run_host

from .conftest import TOY, ToySource, toy_line, write_session


class MemoryBackend:
    """A dict-backed stand-in used only where a test must make the store fail on purpose."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], dict[str, Any]] = {}
        self.fail_commit = False

    def list_all_recall_files(self, where: Any = None, *, cursor: str | None = None, limit: int = 50) -> dict[str, Any]:
        return {"recall_files": list(self.files.values()), "next_cursor": None}

    def commit_results(self, *, recall_files: Any = None, resource: Any = None, user: Any = None) -> dict[str, Any]:
        if self.fail_commit:
            raise ConnectionError("store unreachable")
        for f in recall_files or []:
            self.files[(f["track"], f["name"])] = dict(f)
        return {"recall_files": list(recall_files or []), "resources": list(resource or [])}

    def forget(self, name: str, *, track: str = "memory", user: Any = None) -> dict[str, Any]:
        gone = self.files.pop((track, name), None)
        return {"forgotten": [gone] if gone else []}


def _layout(tmp_path: Path) -> Layout:
    return Layout.at(tmp_path / "base", "toy")


def _prepare(tmp_path: Path, backend: MemoryBackend, **kw: Any) -> pipeline.PrepareReport:
    return pipeline.prepare(TOY, ToySource(tmp_path / "s"), _layout(tmp_path), lambda: backend, environ={}, **kw)  # type: ignore[arg-type,return-value]


def test_second_run_on_a_locked_tree_exits_3_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(home / ".toy" / "sessions", "s", toy_line("user", "hi"))
    layout = Layout.at(home / ".memu" / "hosts" / "toy", "toy")
    monkeypatch.setenv("MEMU_LOCK_WAIT", "0.2")
    with host_lock(layout.lock, "toy"):
        assert run_host(TOY, ["prepare"]) == 3
        err = capsys.readouterr().err
        assert err.startswith("error: another bridging run is working in") and err.count("\n") == 1
        assert run_host(TOY, ["commit"]) == 3
    assert not layout.jobs.exists() and not layout.cursor_pending.exists()
    assert run_host(TOY, ["prepare"]) == 0


def test_lock_is_released_when_the_holder_dies(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    code = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from memu_core._bridge.lock import host_lock
        with host_lock(Path({str(lock)!r}), "toy"):
            os._exit(9)
        """
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    with host_lock(lock, "toy", wait=0):
        pass


def test_lock_busy_from_another_process(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from memu_core._bridge.lock import host_lock
        with host_lock(Path({str(lock)!r}), "toy"):
            print("held", flush=True)
            sys.stdin.readline()
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockBusy, match=f"process {holder.pid}"), host_lock(lock, "toy", wait=0.1):
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_two_concurrent_prepares_on_one_host(tmp_path: Path) -> None:
    root = tmp_path / "s"
    for i in range(40):
        write_session(root, f"s{i}", *(toy_line("user", f"turn {j} of {i}") for j in range(50)))
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from hosting.conftest import TOY, ToySource
        from hosting.test_lock_and_crash import MemoryBackend
        from memu_core._bridge import pipeline
        from memu_core._layout import Layout
        from memu_core.errors import LockBusy
        try:
            layout = Layout.at(Path({str(tmp_path / "base")!r}), "toy")
            src = ToySource(Path({str(root)!r}))
            r = pipeline.prepare(TOY, src, layout, MemoryBackend, max_jobs=40, environ={{}})
        except LockBusy:
            sys.exit(3)
        print(r.sessions)
        """
    )
    env = {**os.environ, "MEMU_LOCK_WAIT": "30"}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    # The second waited for the first's lock, then found its unfinished run and refused to
    # replace it (exit 3): one complete run is in the tree, never a mix of two.
    assert sorted(p.returncode for p in procs) == [0, 3]
    assert sorted(o.strip() for o in outs) == ["", "40"]
    layout = _layout(tmp_path)
    pending = json.loads(layout.cursor_pending.read_text())
    assert len(pending) == 40
    assert len(list(layout.jobs.glob("*.txt"))) == 81 and len(list(layout.sessions.glob("*.jsonl"))) == 80


def test_crash_between_prepare_and_commit_is_recovered(tmp_path: Path) -> None:
    backend = MemoryBackend()
    write_session(tmp_path / "s", "a", toy_line("user", "one"))
    assert _prepare(tmp_path, backend).sessions == 1
    layout = _layout(tmp_path)
    (layout.base / "memory").mkdir(exist_ok=True)
    (layout.base / "memory" / "fact.md").write_text("---\nname: fact\ndescription: d\n---\nwritten before the crash\n")
    # ... the run dies here: no commit. A scheduled run after MEMU_RUN_STALE_AFTER prepares again.
    write_session(tmp_path / "s", "b", toy_line("user", "two"))
    marker = json.loads(layout.run_marker.read_text())
    layout.run_marker.write_text(json.dumps({**marker, "started_at": marker["started_at"] - 4 * 3600}))
    report = _prepare(tmp_path, backend)
    assert any("dropped the unfinished bridging run" in n for n in report.notes)
    assert report.sessions == 2  # the unpromoted session is offered again, with the new one
    assert (layout.base / "memory" / "fact.md").exists()  # the agent's finished work is kept
    result = pipeline.commit(layout, lambda: backend, "toy")  # type: ignore[arg-type,return-value]
    assert result.files == [("memory", "fact")] and result.promoted
    assert set(json.loads(layout.cursor.read_text())) == {"a.jsonl", "b.jsonl"}
    assert _prepare(tmp_path, backend).sessions == 0


def test_uncommitted_edit_to_a_stored_file_survives_the_next_prepare(tmp_path: Path) -> None:
    backend = MemoryBackend()
    backend.files[("memory", "prefs")] = {
        "name": "prefs",
        "track": "memory",
        "description": "d",
        "content": "old",
    }
    write_session(tmp_path / "s", "a", toy_line("user", "x"))
    _prepare(tmp_path, backend)
    path = _layout(tmp_path).base / "memory" / "prefs.md"
    path.write_text("---\nname: prefs\ndescription: d\n---\nnew fact")
    # Crash recovery (the dead run dropped): memU would overwrite the edit here.
    report = _prepare(tmp_path, backend, abandon_unfinished=True)
    assert report.kept_edits == 1 and path.read_text().endswith("new fact")
    pipeline.commit(_layout(tmp_path), lambda: backend, "toy")  # type: ignore[arg-type,return-value]
    assert backend.files[("memory", "prefs")]["content"] == "new fact"


def test_failed_store_write_moves_nothing(tmp_path: Path) -> None:
    backend = MemoryBackend()
    write_session(tmp_path / "s", "a", toy_line("user", "x"))
    _prepare(tmp_path, backend)
    layout = _layout(tmp_path)
    (layout.base / "skill").mkdir(exist_ok=True)
    (layout.base / "skill" / "s.md").write_text("---\nname: s\ndescription: d\n---\nsteps")
    backend.fail_commit = True
    snapshot_before = layout.snapshot.read_bytes()
    with pytest.raises(ConnectionError):
        pipeline.commit(layout, lambda: backend, "toy")  # type: ignore[arg-type,return-value]
    assert layout.cursor_pending.exists() and not layout.cursor.exists()
    assert layout.snapshot.read_bytes() == snapshot_before
    assert len(list(layout.jobs.glob("*.txt"))) == 3
    backend.fail_commit = False
    assert pipeline.commit(layout, lambda: backend, "toy").files == [("skill", "s")]  # type: ignore[arg-type,return-value]


def test_store_failure_during_prepare_keeps_the_previous_run_consistent(tmp_path: Path) -> None:
    backend = MemoryBackend()
    write_session(tmp_path / "s", "a", toy_line("user", "x"))
    _prepare(tmp_path, backend)
    layout = _layout(tmp_path)
    jobs_before = sorted(p.read_text() for p in layout.jobs.glob("*.txt"))
    pending_before = layout.cursor_pending.read_text()
    write_session(tmp_path / "s", "b", toy_line("user", "y"))

    def broken() -> Any:
        raise ConnectionError("store down")

    with pytest.raises(ConnectionError):
        pipeline.prepare(TOY, ToySource(tmp_path / "s"), layout, broken, environ={}, abandon_unfinished=True)
    assert layout.run_marker.exists()  # the previous run is still the prepared one
    assert sorted(p.read_text() for p in layout.jobs.glob("*.txt")) == jobs_before
    assert layout.cursor_pending.read_text() == pending_before
