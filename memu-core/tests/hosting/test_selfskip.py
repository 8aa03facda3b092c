"""The bridging run never mines its own session; a person's run never excludes anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memu_core._bridge import pipeline, selfskip
from memu_core._layout import Layout

from .conftest import TOY, ToySource, toy_line, write_session


class _NoStore:
    def list_all_recall_files(self, where=None, *, cursor=None, limit=50):  # type: ignore[no-untyped-def]
        return {"recall_files": [], "next_cursor": None}


def _prepare(root: Path, base: Path, environ: dict[str, str], cwd: Path) -> pipeline.PrepareReport:
    return pipeline.prepare(TOY, ToySource(root), Layout.at(base, "toy"), _NoStore, environ=environ, cwd=cwd)  # type: ignore[arg-type]


def test_scheduled_run_claims_its_session(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "me", toy_line("user", "run prepare"), mtime=2_000)
    write_session(root, "other", toy_line("user", "real work"), mtime=1_000)
    report = _prepare(root, base, {"MEMU_BRIDGING_RUN": "1", "TOY_SESSION_ID": "me"}, tmp_path)
    assert report.sessions == 1
    assert "this session (me) is a bridging run" in report.notes[0]
    assert selfskip.load(Layout.at(base, "toy").self_sessions) == ["me"]
    assert "real work" in (base / "sessions" / "1.jsonl").read_text()


def test_cwd_equal_to_the_tree_also_marks_a_scheduled_run(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    assert selfskip.is_bridging_run(base, base, {})
    assert not selfskip.is_bridging_run(tmp_path, base, {})
    assert not selfskip.is_bridging_run(tmp_path, base, {"MEMU_BRIDGING_RUN": "  "})


def test_a_person_running_prepare_excludes_nothing(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "me", toy_line("user", "remember this"))
    report = _prepare(root, base, {"TOY_SESSION_ID": "me"}, tmp_path)
    assert report.sessions == 1 and not report.notes
    assert selfskip.load(Layout.at(base, "toy").self_sessions) == []


def test_unset_session_variable_warns(tmp_path: Path) -> None:
    root, base = tmp_path / "s", tmp_path / "base"
    write_session(root, "x", toy_line("user", "hi"))
    report = _prepare(root, base, {"MEMU_BRIDGING_RUN": "1"}, tmp_path)
    assert "TOY_SESSION_ID is unset" in report.warnings[0]


def test_remembered_list_is_bounded_and_fails_open(tmp_path: Path) -> None:
    path = tmp_path / "ids.json"
    path.write_text("{corrupt")
    assert selfskip.load(path) == []
    path.write_text(json.dumps([f"id{i}" for i in range(selfskip.MAX_REMEMBERED - 1)]))
    for i in range(selfskip.MAX_REMEMBERED - 1, selfskip.MAX_REMEMBERED + 5):
        ids = selfskip.remember(path, f"id{i}")
    assert len(ids) == selfskip.MAX_REMEMBERED and ids[-1] == f"id{selfskip.MAX_REMEMBERED + 4}"


@pytest.mark.parametrize("value", ["1", "yes"])
def test_env_gate_values(value: str, tmp_path: Path) -> None:
    assert selfskip.is_bridging_run(tmp_path, tmp_path / "b", {"MEMU_BRIDGING_RUN": value})
