"""The WorkBuddy source against hand-written sessions in the real shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memu_host_workbuddy.source import WorkBuddySource, classify_workbuddy_record

from memu_core.host import RecordKind

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER
RECORDS: list[tuple[dict[str, Any], RecordKind]] = [
    ({"type": "ai-title", "aiTitle": "Fix the flaky test"}, D),
    (
        {
            "type": "message",
            "role": "user",
            "timestamp": 1784435392565,
            "content": [
                {"type": "input_text", "text": "The payments test is flaky; always run it with --runInBand."}
            ],
        },
        M,
    ),
    ({"type": "reasoning", "rawContent": [{"type": "reasoning_text", "text": "think"}]}, D),
    (
        {
            "type": "function_call",
            "name": "Bash",
            "callId": "chatcmpl-tool-abc123",
            "arguments": '{"command": "npm test -- --runInBand"}',
        },
        T,
    ),
    (
        {
            "type": "function_call_result",
            "name": "Bash",
            "callId": "chatcmpl-tool-abc123",
            "status": "completed",
            "output": {"type": "text", "text": "42 passed"},
        },
        T,
    ),
    (
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Passing with --runInBand."}],
        },
        M,
    ),
    (
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "text blocks are not WorkBuddy prose"}],
        },
        D,
    ),
    ({"type": "message", "role": "user", "content": "plain string turn"}, M),
    ({"type": "message", "role": "system", "content": "sys"}, D),
    ({"type": "file-history-snapshot", "snapshot": {}}, D),
]


def write(root: Path, project: str, name: str, records: list[dict[str, Any]]) -> Path:
    path = root / project / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_every_record_type(tmp_path: Path) -> None:
    write(tmp_path, "d-Users-proj", "5b1e0c7a-0000-4000-8000-000000000001", [r for r, _ in RECORDS])
    (tmp_path / "d-Users-proj" / "sessions.json").write_text("{}")
    source = WorkBuddySource(tmp_path)
    [session] = source.discover()
    read = source.read_incremental(session, None)
    assert [r.kind for r in read.records] == [k for _, k in RECORDS]
    assert read.last_timestamp == "2026-07-19T04:29:52.565000+00:00"
    assert source.session_id(session.path) == "5b1e0c7a-0000-4000-8000-000000000001"


def test_the_bridging_runs_project_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    tree = str(tmp_path / "home" / ".memu" / "hosts" / "workbuddy")
    write(tmp_path / "p", tree.replace("/", "-"), "run", [RECORDS[1][0]])
    write(tmp_path / "p", (tree + "-x").replace("/", "-"), "also-run", [RECORDS[1][0]])
    write(tmp_path / "p", "-home-u-memu-hostsfoo", "work", [RECORDS[1][0]])
    assert [s.path.stem for s in WorkBuddySource(tmp_path / "p").discover()] == ["work"]


@pytest.mark.parametrize(
    ("stamp", "iso"),
    [(1784435392, "2026-07-19T04:29:52+00:00"), ("2026-07-19T04:29:52Z", "2026-07-19T04:29:52Z")],
)
def test_seconds_and_strings(tmp_path: Path, stamp: object, iso: str) -> None:
    write(tmp_path, "p", "s", [{**RECORDS[1][0], "timestamp": stamp}])
    source = WorkBuddySource(tmp_path)
    assert source.read_incremental(source.discover()[0], None).last_timestamp == iso


def test_classify_never_raises() -> None:
    assert classify_workbuddy_record({"type": "message", "role": "user", "content": [1, None]}) is D


def test_fast_path_agrees_with_the_parser() -> None:
    from memu_host_workbuddy.source import quick_workbuddy_kind

    decided = 0
    for record, kind in RECORDS:
        quick = quick_workbuddy_kind(json.dumps(record, separators=(",", ":")))
        decided += quick is not None
        assert quick is None or quick is kind, record
    assert decided == 5
