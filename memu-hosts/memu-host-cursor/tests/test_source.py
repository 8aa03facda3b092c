"""The Cursor transcript source against hand-written Agent transcripts in the real shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from memu_host_cursor.source import CursorSource, classify_cursor_record

from memu_core.host import RecordKind

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER
FIXTURES = Path(__file__).parent / "fixtures"
SID = "c0ffee01-1111-4222-8333-444455556666"
KINDS = [M, M, T, T, M, D, D, D, D]
"""user prose, prose + narrated tool call, bare tool_use, bare tool_result, string content,
system, thinking-only, non-dict message, blank string."""


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    dest = tmp_path / "projects"
    shutil.copytree(FIXTURES / "projects", dest)
    return dest


def test_only_agent_transcripts_are_discovered(projects: Path) -> None:
    source = CursorSource(projects)
    found = source.discover()
    assert [s.path.name for s in found] == [f"{SID}.jsonl"]
    assert source.key(found[0].path) == f"-home-u-shop/agent-transcripts/{SID}/{SID}.jsonl"
    assert source.session_id(found[0].path) == SID


def test_every_record_type(projects: Path) -> None:
    source = CursorSource(projects)
    [session] = source.discover()
    read = source.read_incremental(session, None)
    assert [r.kind for r in read.records] == KINDS
    assert read.last_timestamp is None and read.cursor["lines"] == len(KINDS)


def test_line_count_drives_the_cursor(projects: Path) -> None:
    source = CursorSource(projects)
    [session] = source.discover()
    first = source.read_incremental(session, None)
    with session.path.open("a") as fh:
        fh.write(json.dumps({"role": "user", "message": {"content": "one more"}}) + "\n")
    [grown] = source.discover()
    second = source.read_incremental(grown, first.cursor)
    assert [r.text for r in second.records] == ['{"role": "user", "message": {"content": "one more"}}']
    assert second.cursor["lines"] == len(KINDS) + 1


def test_newest_first_across_projects(projects: Path) -> None:
    import os

    other = projects / "-home-u-blog" / "agent-transcripts" / "b1" / "b1.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text('{"role":"user","message":{"content":"hi"}}\n')
    os.utime(other, (1, 1))
    assert [s.path.stem for s in CursorSource(projects).discover()] == [SID, "b1"]


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ([{"type": "text", "text": "a"}, {"type": "tool_result"}], M),
        ([{"type": "tool_use"}, {"type": "tool_result"}], T),
        ([{"type": "image"}], D),
        ([], D),
        (3, D),
    ],
)
def test_block_table(content: object, kind: RecordKind) -> None:
    assert classify_cursor_record({"role": "assistant", "message": {"content": content}}) is kind


def test_missing_root_discovers_nothing(tmp_path: Path) -> None:
    assert CursorSource(tmp_path / "nope").discover() == []
