"""Claude Code and Cowork transcript sources against hand-written records in the real shapes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from memu_host_claude_code.source import (
    ClaudeCodeSource,
    ClaudeDesktopSource,
    CoworkSource,
    classify_claude_record,
    cowork_roots,
)

from memu_core.errors import ConfigError
from memu_core.host import RecordKind, SessionFile

M, T, O = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER  # noqa: E741 - table shorthand

MAIN_KINDS = [M, O, M, T, T, O, O, O, O, O, O, O, O, O, M]
"""Expected kind of each line of ``aaaa1111.jsonl`` (see the fixture, one record type per line)."""


def _session(path: Path) -> SessionFile:
    st = path.stat()
    return SessionFile(path, st.st_mtime_ns, st.st_size)


def test_every_record_type_is_classified_by_content_block(projects: Path) -> None:
    source = ClaudeCodeSource(projects)
    lines = (projects / "-home-u-proj" / "aaaa1111.jsonl").read_text().splitlines()
    assert [source.classify(line) for line in lines] == MAIN_KINDS


@pytest.mark.parametrize(
    ("record", "kind"),
    [
        ({"type": "user", "message": {"role": "user", "content": "fix the bug"}}, M),
        (
            {
                "type": "assistant",
                "message": {"content": [{"type": "text", "text": "x"}, {"type": "tool_use"}]},
            },
            M,
        ),
        ({"type": "assistant", "message": {"content": [{"type": "thinking"}, {"type": "tool_use"}]}}, T),
        ({"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}}, T),
        ({"type": "user", "isMeta": True, "message": {"content": [{"type": "tool_result"}]}}, T),
        ({"type": "user", "isMeta": True, "message": {"content": "<harness>"}}, O),
        ({"type": "user", "message": "not a dict"}, O),
        ({"type": "user", "message": {"content": 42}}, O),
        ({"type": "user", "message": {"content": ["str block", {"type": "image"}]}}, O),
        ({"type": "queue-operation", "operation": "enqueue", "content": "next"}, O),
    ],
)
def test_classification_table(record: dict[str, object], kind: RecordKind) -> None:
    assert classify_claude_record(record) is kind
    assert ClaudeCodeSource("/nowhere").classify(json.dumps(record)) is kind


def test_subagent_transcripts_belong_to_their_parent_session(projects: Path) -> None:
    source = ClaudeCodeSource(projects)
    found = {source.key(s.path): source.session_id(s.path) for s in source.discover()}
    assert found == {
        "-home-u-proj/aaaa1111.jsonl": "aaaa1111",
        "-home-u-proj/aaaa1111/subagents/agent-sub1.jsonl": "aaaa1111",
        "-home-u-proj/aaaa1111/subagents/workflows/wf_1/agent-wf1.jsonl": "aaaa1111",
    }


def test_discovery_is_newest_first(projects: Path) -> None:
    files = sorted(projects.rglob("*.jsonl"))
    for i, path in enumerate(files):
        os.utime(path, ns=(1_000_000_000 * (i + 1), 1_000_000_000 * (i + 1)))
    found = [s.path for s in ClaudeCodeSource(projects).discover()]
    assert found == list(reversed(files))


def test_cowork_audit_log_normalises_to_four_records(cowork_root: Path) -> None:
    source = CoworkSource([cowork_root])
    [session] = source.discover()
    read = source.read_incremental(session, None)
    assert [r.kind for r in read.records] == [M, T, T, M]
    first = json.loads(read.records[0].text)
    assert first == {
        "type": "user",
        "timestamp": "2026-08-21T09:00:01.000Z",
        "message": {"role": "user", "content": "plan the project"},
        "source": {"surface": "cowork", "container": "cowork_audit_jsonl"},
    }
    assert all("_audit_hmac" not in r.text and "session_id" not in r.text for r in read.records)
    assert read.cursor["lines"] == 4 and read.corrupt == 0
    assert source.session_id(session.path) == "cw42"
    assert source.key(session.path).startswith("cowork/") and source.key(session.path).endswith(
        "local-agent-mode-sessions/acct1/org1/local_cw42/audit.jsonl"
    )


def test_cowork_keeps_is_meta_so_injected_context_is_not_speech(cowork_root: Path) -> None:
    audit = next(cowork_root.rglob("audit.jsonl"))
    with audit.open("a") as fh:
        fh.write(
            json.dumps({"type": "user", "isMeta": True, "message": {"role": "user", "content": "inj"}}) + "\n"
        )
    source = CoworkSource([cowork_root])
    read = source.read_incremental(_session(audit), None)
    assert read.records[-1].kind is O


def test_cowork_roots_env_replaces_discovery(tmp_path: Path, cowork_root: Path) -> None:
    assert cowork_roots({"MEMU_COWORK_ROOTS": ""}) == []
    assert cowork_roots({"MEMU_COWORK_ROOTS": f"{cowork_root}{os.pathsep}{cowork_root}"}) == [
        cowork_root.resolve()
    ]
    with pytest.raises(ConfigError, match="MEMU_COWORK_ROOTS entries are not directories"):
        cowork_roots({"MEMU_COWORK_ROOTS": str(tmp_path / "missing")})


def test_platform_roots_are_found_per_platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "cfg" / "Claude").mkdir(parents=True)
    assert cowork_roots({"XDG_CONFIG_HOME": str(tmp_path / "cfg")}, "linux") == [
        (tmp_path / "cfg" / "Claude").resolve()
    ]
    (tmp_path / "Library" / "Application Support" / "Claude-3p").mkdir(parents=True)
    assert cowork_roots({}, "darwin") == [
        (tmp_path / "Library" / "Application Support" / "Claude-3p").resolve()
    ]
    assert cowork_roots({}, "sunos5") == []


def test_composite_merges_both_with_independent_regions(projects: Path, cowork_root: Path) -> None:
    source = ClaudeDesktopSource(projects, cowork_roots=[cowork_root])
    sessions = source.discover()
    assert len(sessions) == 4
    mtimes = [s.mtime_ns for s in sessions]
    assert mtimes == sorted(mtimes, reverse=True)
    regions = {source.scan_region(s.path) for s in sessions}
    assert regions == {"claude-code", f"cowork:{cowork_root.resolve()}"}
    audit = next(s for s in sessions if s.path.name == "audit.jsonl")
    assert source.session_id(audit.path) == "cw42"
    assert [r.kind for r in source.read_incremental(audit, None).records] == [M, T, T, M]
    assert source.exists()
    assert ClaudeDesktopSource(projects.parent / "none", cowork_roots=[cowork_root]).exists()
    assert not ClaudeDesktopSource(projects.parent / "none", cowork_roots=[]).exists()


@pytest.mark.parametrize("relative", [False, True])
def test_a_scan_keys_each_session_as_its_part_does(
    projects: Path, cowork_root: Path, monkeypatch: pytest.MonkeyPatch, relative: bool
) -> None:
    """The scan reads keys off the listed path strings (no ``Path`` per unchanged session); the
    Cowork part, whose key is its own, is asked through ``key``; both agree with ``key(path)``,
    and each session is read by its own part, with ``--session-dir .`` too (listed as ``./x``,
    its ``Path`` says ``x``)."""
    if relative:
        monkeypatch.chdir(projects)
    source = ClaudeDesktopSource("." if relative else projects, cowork_roots=[cowork_root])
    cursor_key = source._cursor_keys()
    sessions = source.discover()
    keys = [cursor_key(s) for s in sessions]
    assert keys == [source.key(s.path) for s in sessions]
    assert any(k.startswith("cowork/") for k in keys) and any(k.endswith(".jsonl") and "/" in k for k in keys)
    assert [Path(os.fspath(s)) for s in sessions] == [s.path for s in sessions]
    audit = next(s for s in sessions if s.path.name == "audit.jsonl")
    assert [r.kind for r in source.read_incremental(audit, None).records] == [M, T, T, M]
    assert all(source.read_kept(s, None).records for s in sessions)
