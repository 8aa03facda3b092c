"""OpenClaw's own bridging runs, through the source's self-session seam: recognised by the
registered cron job, skipped by ``prepare``, explained in its report, and nothing written."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from memu_host_openclaw import cron
from memu_host_openclaw.source import OpenClawSource
from memu_host_openclaw.spec import SPEC

from memu_core.host import Layout, SelfSessions
from memu_core.testing.rehearse import call


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | stat.S_IWUSR)


@pytest.fixture
def agents(home: Path, make_store: Any, msg: Any) -> Path:
    """A store with a person's session, two runs of job-7 (one with a sub-agent) and a run of job-9."""
    root = home / ".openclaw" / "agents"
    store = make_store(root, "main")
    store.window("work", key="agent:main:main")
    store.events("work", msg("user", "The VPN must be on before deploying."))
    for sid, key in (
        ("run-1", "agent:main:cron:job-7:run:run-1"),
        ("run-2", "agent:ops:cron:job-7:run:run-2"),
        ("child", "agent:main:cron:job-7:run:run-1:subagent:child"),
        ("other", "agent:main:cron:job-9:run:other"),
    ):
        store.window(sid, key=key)
        store.events(sid, msg("user", f"memu bridging task prompt ({sid})"))
    return root


def test_the_registered_jobs_runs_are_the_sources_own(home: Path, agents: Path) -> None:
    tree = home / ".memu" / "hosts" / "openclaw"
    cron.register(tree, "job-7")
    own = OpenClawSource(agents).self_sessions(tree)
    assert own == SelfSessions(frozenset({"main/run-1", "main/run-2"}))


def test_a_registration_in_another_tree_counts_too(home: Path, agents: Path) -> None:
    cron.register(home / ".memu" / "hosts" / "openclaw-work", "job-9")
    custom = home / "elsewhere"  # a --base-dir outside ~/.memu/hosts, holding job-7
    cron.register(custom, "job-7")
    own = OpenClawSource(agents).self_sessions(custom)
    assert own.ids == {"main/run-1", "main/run-2", "main/other"} and own.warnings == ()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda tree: None, "is not registered"),
        (lambda tree: cron.register(tree, "job-404"), "no session of cron job job-404 found yet"),
    ],
)
def test_why_no_run_was_recognised_is_a_warning(home: Path, agents: Path, setup: Any, expected: str) -> None:
    tree = home / ".memu" / "hosts" / "openclaw"
    setup(tree)
    own = OpenClawSource(agents).self_sessions(tree)
    assert own.ids == frozenset() and len(own.warnings) == 1 and expected in own.warnings[0]


def test_an_older_openclaw_store_is_a_warning(home: Path, msg: Any) -> None:
    from memu_core.testing.host_db import create_wal_database

    agents = home / ".openclaw" / "agents"
    path = agents / "main" / "agent" / "openclaw-agent.sqlite"
    create_wal_database(path, "CREATE TABLE session_windows (session_id TEXT PRIMARY KEY);").close()
    own = OpenClawSource(agents).self_sessions(home / ".memu" / "hosts" / "openclaw")
    assert own.ids == frozenset() and "v2026.7.2-beta.4" in own.warnings[0]


def test_legacy_logs_alone_have_nothing_to_say(home: Path) -> None:
    legacy = home / ".openclaw" / "agents" / "main" / "sessions" / "s.jsonl"
    legacy.parent.mkdir(parents=True)
    legacy.write_text('{"type": "session"}\n')
    assert OpenClawSource(legacy.parents[2]).self_sessions(home / "tree") == SelfSessions()


@pytest.mark.skipif(os.name != "posix", reason="read-only folders are POSIX")
def test_discovery_and_self_sessions_write_nothing(
    home: Path, agents: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = home / ".memu" / "hosts"
    cron.register(hosts / "openclaw", "job-7")
    cron.register(hosts / "openclaw-work", "job-9")
    (hosts / "stale").mkdir()  # a tree with neither registration nor warning state
    before = _tree(home)
    _read_only(hosts)
    try:
        source = OpenClawSource(agents)
        found = {source.session_id(s.path) for s in source.discover()}
        own = source.self_sessions(hosts / "stale")
    finally:
        _writable(hosts)
    assert "main/run-1" in found  # discovery lists everything; prepare applies the seam
    assert own.ids == {"main/run-1", "main/run-2", "main/other"}
    assert _tree(home) == before  # mtimes and sizes: nothing written anywhere in the home
    assert capsys.readouterr() == ("", "")


def test_prepare_skips_the_runs_and_reports_why(home: Path, agents: Path) -> None:
    code, out, err = call(SPEC, "prepare", "--json")
    report = json.loads(out)
    assert code == 0 and err == ""
    assert report["skipped_self"] == 0 and report["sessions"] == 5
    assert [w for w in report["warnings"] if "register-cron-job" in w]

    tree = home / ".memu" / "hosts" / "openclaw"
    Layout.at(tree, "openclaw").cursor_pending.unlink()  # start over (and drop the unfinished run)
    Layout.at(tree, "openclaw").run_marker.unlink()
    assert call(SPEC, "register-cron-job", "--job-id", "job-7")[0] == 0
    code, out, err = call(SPEC, "prepare", "--json")
    report = json.loads(out)
    assert code == 0 and err == "" and report["warnings"] == []
    assert report["skipped_self"] == 2 and report["sessions"] == 3  # work, the sub-agent, job-9's run
    mined = "".join(p.read_text() for p in (tree / "sessions").glob("*.jsonl"))
    assert "(run-1)" not in mined and "(run-2)" not in mined and "(child)" in mined


def test_doctor_shows_how_the_runs_are_recognised(home: Path, agents: Path) -> None:
    code, out, _ = call(SPEC, "doctor")
    assert code == 0 and "own runs    WARN  the bridging task's cron job is not registered" in out
    assert call(SPEC, "register-cron-job", "--job-id", "job-7")[0] == 0
    code, out, _ = call(SPEC, "doctor")
    assert code == 0 and "own runs    2 bridging run(s) recognised in OpenClaw's records\n" in out
    assert "WARN" not in out.split("own runs", 1)[1]
