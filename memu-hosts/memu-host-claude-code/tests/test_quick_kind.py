"""The parse-free fast path never disagrees with the full classifier."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from memu_host_claude_code.source import classify_claude_record, quick_claude_kind

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
