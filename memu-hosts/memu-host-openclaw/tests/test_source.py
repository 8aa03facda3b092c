"""The OpenClaw source: SQLite stores (real schema, WAL, live writer) merged with legacy JSONL."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from memu_host_openclaw.source import OpenClawSource, classify_openclaw_record

from memu_core.host import RecordKind, TranscriptReadError

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER
ENTRIES: list[tuple[dict[str, Any], RecordKind]] = [
    ({"type": "session", "version": 3, "id": "s1", "cwd": "/w", "timestamp": "2025-07-15T00:00:00.000Z"}, D),
    ({"type": "model_change", "provider": "anthropic", "modelId": "claude"}, D),
    ({"type": "thinking_level_change", "thinkingLevel": "high"}, D),
    (
        {
            "type": "message",
            "id": "e1",
            "parentId": "e0",
            "timestamp": 1752537600000,
            "message": {"role": "user", "content": "hi"},
        },
        M,
    ),
    (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "hey"}, {"type": "toolCall", "name": "exec"}],
            },
        },
        M,
    ),
    (
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolName": "exec",
                "content": [{"type": "text", "text": "ok"}],
            },
        },
        T,
    ),
    ({"type": "custom", "customType": "note", "data": {}}, D),
    ({"type": "compaction", "summary": "…", "firstKeptEntryId": "e1"}, D),
    ({"type": "reset", "reason": "new", "firstKeptEntryId": "e9"}, D),
    ({"type": "message", "message": {"role": "bashExecution", "content": "ls"}}, D),
]


def test_classification_of_every_entry_type() -> None:
    assert [classify_openclaw_record(e) for e, _ in ENTRIES] == [k for _, k in ENTRIES]


def _legacy(agents: Path, agent: str, name: str, *entries: dict[str, Any], mtime: float) -> Path:
    path = agents / agent / "sessions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    os.utime(path, (mtime, mtime))
    return path


def test_containers_merge_newest_first(agents: Path, store: Any) -> None:
    store.window("stored-new")
    store.events("stored-new", *[e for e, _ in ENTRIES], at_ms=2_000_000_000_000)  # 2033
    store.window("empty")  # a window without events takes no slot
    _legacy(
        agents, "main", "stored-new.jsonl", ENTRIES[3][0], mtime=2_100_000_000
    )  # leftover: the store wins
    _legacy(agents, "main", "old.jsonl", ENTRIES[3][0], mtime=1_000_000_000)
    _legacy(agents, "main", "topic-1.jsonl", ENTRIES[3][0], mtime=1_900_000_000)
    _legacy(agents, "main", "x.trajectory.jsonl", ENTRIES[3][0], mtime=2_200_000_000)
    _legacy(agents, "main", "x.checkpoint.3.jsonl", ENTRIES[3][0], mtime=2_200_000_000)
    _legacy(agents, "main", "session-sqlite-import-archive/a.jsonl", ENTRIES[3][0], mtime=2_200_000_000)
    (agents / "main" / "sessions" / "sessions.json").write_text("{}")
    source = OpenClawSource(agents)
    found = source.discover()
    assert [source.key(s.path) for s in found] == [
        "main/sessions/stored-new.jsonl",
        "main/sessions/topic-1.jsonl",
        "main/sessions/old.jsonl",
    ]
    assert next(source.session_id(s.path) for s in found) == "main/stored-new"
    read = source.read_incremental(found[0], None)
    assert [r.kind for r in read.records] == [k for _, k in ENTRIES]
    assert read.cursor["container"] == "sqlite" and read.cursor["lines"] == len(ENTRIES)
    assert read.last_timestamp == "2025-07-15T00:00:00+00:00"  # epoch ms normalised


def test_rewrite_generation_restarts_and_legacy_cursor_replays(agents: Path, store: Any, msg: Any) -> None:
    store.window("s")
    store.events("s", msg("user", "one"), msg("assistant", "two"))
    source = OpenClawSource(agents)
    [session] = source.discover()
    legacy_cursor = {"offset": 999, "lines": 2}
    replay = source.read_incremental(session, legacy_cursor)
    assert len(replay.records) == 2  # a JSONL cursor has no generation: replay once
    store.events("s", msg("user", "three"), at_ms=1_752_537_700_000)
    [session] = source.discover()
    more = source.read_incremental(session, replay.cursor)
    assert [json.loads(r.text)["message"]["content"][0]["text"] for r in more.records] == ["three"]
    store.rewrite("s", "g2", msg("user", "summary of before"), at_ms=1_752_537_800_000)
    [session] = source.discover()
    rotated = source.read_incremental(session, more.cursor)
    assert [json.loads(r.text)["message"]["content"][0]["text"] for r in rotated.records] == [
        "summary of before"
    ]
    assert rotated.cursor["generation"] == "g2" and rotated.cursor["lines"] == 1


def test_reads_beside_a_live_writer(agents: Path, store: Any, msg: Any) -> None:
    store.window("s")
    store.events("s", msg("user", "committed"))
    store.conn.execute("BEGIN IMMEDIATE")
    store.events("s", msg("user", "in flight"))
    source = OpenClawSource(agents)
    [session] = source.discover()
    assert len(source.read_incremental(session, None).records) == 1
    store.conn.execute("COMMIT")
    [session] = source.discover()
    assert len(source.read_incremental(session, None).records) == 2


def test_missing_generation_is_a_recoverable_read_error(agents: Path, store: Any, msg: Any) -> None:
    store.conn.execute("INSERT INTO session_windows VALUES ('nogen', 'k', 'new', NULL)")
    store.events("nogen", msg("user", "x"))
    source = OpenClawSource(agents)
    [session] = source.discover()
    with pytest.raises(TranscriptReadError, match="missing transcript generation"):
        source.read_incremental(session, None)


def test_an_unreadable_store_is_skipped(agents: Path, msg: Any) -> None:
    bad = agents / "broken" / "agent" / "openclaw-agent.sqlite"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a database at all" * 100)
    _legacy(agents, "broken", "kept.jsonl", msg("user", "x"), mtime=1_000_000_000)
    source = OpenClawSource(agents)
    assert [s.path.name for s in source.discover()] == ["kept.jsonl"]


@pytest.mark.parametrize(
    ("stamp", "iso"),
    [
        (1752537600000, "2025-07-15T00:00:00+00:00"),
        (1752537600, "2025-07-15T00:00:00+00:00"),
        ("2025-07-15T01:00:00Z", "2025-07-15T01:00:00Z"),
    ],
)
def test_timestamps_normalised(agents: Path, stamp: object, iso: str, msg: Any) -> None:
    path = _legacy(agents, "main", "t.jsonl", msg("user", "x", timestamp=stamp), mtime=1_000_000_000)
    source = OpenClawSource(agents)
    [session] = source.discover()
    assert session.path == path
    assert source.read_incremental(session, None).last_timestamp == iso


def test_fast_path_agrees_with_the_parser() -> None:
    from memu_host_openclaw.source import quick_openclaw_kind

    decided = 0
    for entry, kind in ENTRIES:
        line = json.dumps(entry, separators=(",", ":"))
        quick = quick_openclaw_kind(line)
        decided += quick is not None
        assert quick is None or quick is kind, line
    assert decided >= 6
    nested = '{"type":"message","message":{"role":"assistant","content":[{"message":{"role":"toolResult"}}]}}'
    assert quick_openclaw_kind(nested) is None
