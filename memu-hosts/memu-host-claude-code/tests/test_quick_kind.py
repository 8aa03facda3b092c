"""The parse-free fast path never disagrees with the full classifier."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from memu_host_claude_code.source import classify_claude_record, quick_claude_kind

from memu_core.host import RecordKind

BLOCKS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": st.text(max_size=20)},
        optional={"signature": st.text(max_size=8)},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": st.text(max_size=5),
            "input": st.dictionaries(st.text(max_size=4), st.text(max_size=8), max_size=2),
        }
    ),
    st.fixed_dictionaries(
        {
            "tool_use_id": st.text(max_size=5),
            "type": st.just("tool_result"),
            "content": st.one_of(
                st.text(max_size=30),
                st.lists(
                    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)}), max_size=2
                ),
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("image")}),
    st.text(max_size=5),
)
RECORDS = st.fixed_dictionaries(
    {
        "parentUuid": st.one_of(st.none(), st.text(max_size=8)),
        "cwd": st.text(max_size=12),
        "type": st.sampled_from(["user", "assistant", "system", "attachment", "progress", "queue-operation"]),
        "message": st.one_of(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "assistant"]),
                    "content": st.one_of(st.text(max_size=20), st.lists(BLOCKS, max_size=4)),
                }
            ),
            st.text(max_size=5),
        ),
    },
    optional={
        "isMeta": st.booleans(),
        "data": st.fixed_dictionaries(
            {
                "message": st.fixed_dictionaries(
                    {"type": st.just("user"), "content": st.lists(BLOCKS, max_size=2)}
                )
            }
        ),
        "toolUseResult": st.dictionaries(st.text(max_size=4), st.text(max_size=8), max_size=2),
        "timestamp": st.just("2026-08-20T10:00:00.000Z"),
    },
)


@settings(max_examples=600)
@given(record=RECORDS)
def test_fast_path_agrees_with_the_parser(record: dict[str, object]) -> None:
    line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    quick = quick_claude_kind(line)
    assert quick is None or quick is classify_claude_record(record)


def test_fast_path_on_the_fixtures() -> None:
    for path in (Path(__file__).parent / "fixtures" / "projects").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            quick = quick_claude_kind(line)
            assert quick is None or quick is classify_claude_record(json.loads(line))


def _line(content: object, **extra: object) -> str:
    record = {"parentUuid": "p", "cwd": "/w", "type": "assistant", "message": {"role": "assistant", "content": content}}
    return json.dumps({**record, **extra}, separators=(",", ":"), ensure_ascii=False)


THINKING = {"type": "thinking", "thinking": 'says "x" \\ and ends in \\', "signature": "c2ln\\"}


def test_fast_path_decides_the_common_shapes() -> None:
    """The shapes that make up most of a log are decided from the text, escapes in a thinking
    block included (a fast path that gave up on them would send every line to the parser)."""
    tool_use = {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}
    tool_result = {"tool_use_id": "t", "type": "tool_result", "content": 'out "q" \\'}
    cases = [
        (_line("plain words"), RecordKind.MESSAGE),
        (_line([{"type": "text", "text": "hi"}]), RecordKind.MESSAGE),
        (_line([THINKING, {"type": "text", "text": "hi"}]), RecordKind.MESSAGE),
        (_line([THINKING, THINKING, tool_use]), RecordKind.TOOL),
        (_line([tool_result], type="user"), RecordKind.TOOL),
        (json.dumps({"type": "attachment", "attachment": {"type": "file"}}, separators=(",", ":")), RecordKind.OTHER),
        (_line([tool_use, {"type": "text", "text": "beside"}]), None),
        (_line("injected", isMeta=True), None),
    ]
    for line, kind in cases:
        assert quick_claude_kind(line) is kind, line
        assert kind is None or kind is classify_claude_record(json.loads(line))
