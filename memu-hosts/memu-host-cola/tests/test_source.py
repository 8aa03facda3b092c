"""The Cola source against hand-written sessions in the real shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memu_host_cola.source import ColaSource, classify_cola_record

from memu_core.host import RecordKind

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER
RECORDS: list[tuple[dict[str, Any], RecordKind]] = [
    (
        {
            "type": "session",
            "version": 3,
            "id": "s-1",
            "timestamp": "2026-07-26T09:37:00.000Z",
            "cwd": "/Users/u/notes",
        },
        D,
    ),
    ({"type": "model_change", "timestamp": "2026-07-26T09:37:01.000Z", "provider": "x", "modelId": "y"}, D),
    ({"type": "thinking_level_change", "thinkingLevel": "low"}, D),
    (
        {
            "type": "message",
            "message": {
                "role": "user",
                "timestamp": "2026-07-26T09:37:18.124Z",
                "content": [{"type": "text", "text": "Weekly report goes to ops@ every Friday at 16:00."}],
            },
        },
        M,
    ),
    (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "…"}, {"type": "toolCall", "name": "calendar"}],
            },
        },
        T,
    ),
    ({"type": "message", "message": {"role": "toolResult", "content": [{"type": "text", "text": "ok"}]}}, T),
    (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "timestamp": "2026-07-26T09:37:30.000Z",
                "content": [{"type": "text", "text": "Scheduled for Fridays at 16:00."}],
            },
        },
        M,
    ),
    ({"type": "message", "message": {"role": "user", "content": "string content is not Cola's shape"}}, D),
    (
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "only"}]},
        },
        D,
    ),
    ({"type": "message", "message": "x"}, D),
]


def write(root: Path, scope: str, name: str, records: list[dict[str, Any]]) -> Path:
    path = root / scope / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_every_record_type(tmp_path: Path) -> None:
    write(tmp_path, "desktop-local", "s-1", [r for r, _ in RECORDS])
    source = ColaSource(tmp_path)
    [session] = source.discover()
    read = source.read_incremental(session, None)
    assert [r.kind for r in read.records] == [k for _, k in RECORDS]
    assert read.last_timestamp == "2026-07-26T09:37:30.000Z"  # from message.timestamp
    assert source.key(session.path) == "desktop-local/s-1.jsonl"


def test_a_session_run_in_memus_tree_is_never_mined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    tree = tmp_path / "home" / ".memu" / "hosts" / "cola"
    header = {**RECORDS[0][0], "cwd": str(tree)}
    path = write(tmp_path / "s", "desktop-local", "run", [header, RECORDS[3][0]])
    source = ColaSource(tmp_path / "s")
    [session] = source.discover()
    read = source.read_incremental(session, None)
    assert read.records == [] and read.cursor["bridging_run"] is True
    with path.open("a") as fh:  # the run goes on: still passed over, without re-reading the header
        fh.write(json.dumps(RECORDS[6][0]) + "\n")
    [grown] = source.discover()
    again = source.read_incremental(grown, read.cursor)
    assert again.records == [] and again.cursor["offset"] == grown.size


def test_classify_never_raises() -> None:
    assert classify_cola_record({"type": "message", "message": {"role": "user", "content": [None, 3]}}) is D


def test_fast_path_agrees_with_the_parser() -> None:
    from memu_host_cola.source import quick_cola_kind

    decided = 0
    for record, kind in RECORDS:
        quick = quick_cola_kind(json.dumps(record, separators=(",", ":")))
        decided += quick is not None
        assert quick is None or quick is kind, record
    assert decided == 3
