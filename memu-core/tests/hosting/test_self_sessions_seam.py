"""The self-session seam: a source names its own bridging runs, ``prepare`` skips them and
carries the source's warnings in its report, beside memu's own rule (the session variable)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from memu_core._bridge import pipeline
from memu_core.host import Layout, SelfSessions, run_host

from .conftest import TOY, ToySource, toy_line, write_session


class _NoStore:
    def list_all_recall_files(self, where=None, *, cursor=None, limit=50):  # type: ignore[no-untyped-def]
        return {"recall_files": [], "next_cursor": None}


class _KnowsItsRuns(ToySource):
    """Runs are sessions whose id starts with ``cron-``; the tree it was asked about is kept."""

    asked: ClassVar[list[Path]] = []

    def self_sessions(self, worktree: Path) -> SelfSessions:
        self.asked.append(worktree)
        ids = frozenset(s.path.stem for s in self.discover() if s.path.stem.startswith("cron-"))
        return SelfSessions(ids, ("one run could not be told apart; register it",))


class _Broken(ToySource):
    def self_sessions(self, worktree: Path) -> SelfSessions:
        raise RuntimeError("no idea")


def _prepare(source: ToySource, base: Path, environ: dict[str, str] | None = None) -> pipeline.PrepareReport:
    layout = Layout.at(base, "toy")
    return pipeline.prepare(TOY, source, layout, _NoStore, environ=environ or {}, cwd=base.parent)  # type: ignore[arg-type]


def test_the_sources_runs_are_skipped_and_its_warnings_reported(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "cron-1", toy_line("user", "memu bridging prompt"), mtime=3_000)
    write_session(root, "work", toy_line("user", "real work"), mtime=2_000)
    _KnowsItsRuns.asked.clear()
    report = _prepare(_KnowsItsRuns(root), base)
    assert [p.resolve() for p in _KnowsItsRuns.asked] == [base.resolve()]
    assert report.sessions == 1 and report.skipped_self == 1
    assert report.warnings == ["one run could not be told apart; register it"]
    assert "real work" in (base / "sessions" / "1.jsonl").read_text()


def test_memus_own_rule_still_applies_beside_the_source(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "cron-1", toy_line("user", "a cron run"), mtime=3_000)
    write_session(root, "me", toy_line("user", "this scheduled run"), mtime=2_000)
    write_session(root, "work", toy_line("user", "real work"), mtime=1_000)
    report = _prepare(_KnowsItsRuns(root), base, {"MEMU_BRIDGING_RUN": "1", "TOY_SESSION_ID": "me"})
    assert report.sessions == 1 and report.skipped_self == 2


def test_a_failing_source_is_a_warning_not_a_failed_run(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "work", toy_line("user", "real work"))
    report = _prepare(_Broken(root), base)
    assert report.sessions == 1
    assert report.warnings == [
        "_Broken.self_sessions failed (RuntimeError: no idea); this host's own bridging runs may be mined"
    ]


def test_the_default_source_claims_nothing(tmp_path: Path) -> None:
    assert ToySource(tmp_path).self_sessions(tmp_path) == SelfSessions()


def test_prepare_json_is_the_whole_report(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setattr(sys.modules["tests_hosting_toy"], "ToySource", _KnowsItsRuns)
    write_session(sessions_root, "cron-7", toy_line("user", "memu bridging prompt"))
    write_session(sessions_root, "s1", toy_line("user", "deploy with make ship"))
    assert run_host(TOY, ["prepare", "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert err == ""
    assert report["sessions"] == 1 and report["jobs"] == 3 and report["skipped_self"] == 1
    assert report["warnings"] == ["one run could not be told apart; register it"]
    assert report["jobs_dir"] == str(home / ".memu" / "hosts" / "toy" / "jobs")
    assert run_host(TOY, ["prepare", "--abandon-unfinished"]) == 0
    _, err = capsys.readouterr()
    assert "warning: one run could not be told apart; register it" in err
