"""The generic sniffer: five dialects in order, fail-closed, never raising."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memu_host_generic.source import GenericSource, sniff

from memu_core.host import RecordKind

M, T, D = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER

CASES: list[tuple[str, dict[str, Any], RecordKind]] = [
    # 1. payload-wrapped (Codex)
    (
        "codex user",
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        },
        M,
    ),
    ("codex call", {"type": "response_item", "payload": {"type": "function_call", "name": "shell"}}, T),
    ("codex custom tool", {"type": "response_item", "payload": {"type": "custom_tool_call_output"}}, T),
    ("codex reasoning", {"type": "response_item", "payload": {"type": "reasoning"}}, D),
    ("codex developer", {"payload": {"type": "message", "role": "developer"}}, D),
    # 2. typed message tree (OpenClaw / pi / Cola)
    ("pi user", {"type": "message", "message": {"role": "user", "content": "hi"}}, M),
    ("pi toolResult", {"type": "message", "message": {"role": "toolResult", "content": []}}, T),
    ("pi tool", {"type": "message", "message": {"role": "tool"}}, T),
    ("pi header", {"type": "session", "id": "s", "cwd": "/w"}, D),
    # 3. typed block records (Claude)
    ("claude prose", {"type": "user", "message": {"role": "user", "content": "fix it"}}, M),
    (
        "claude meta",
        {"type": "user", "isMeta": True, "message": {"content": [{"type": "text", "text": "caveat"}]}},
        D,
    ),
    (
        "claude tool_use",
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash"}]}},
        T,
    ),
    ("claude thinking", {"type": "assistant", "message": {"content": [{"type": "thinking"}]}}, D),
    ("claude odd content", {"type": "assistant", "message": {"content": 7}}, D),
    # 4. role + message (Cursor)
    (
        "cursor narrated",
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "ok"}, {"type": "tool_use"}]}},
        M,
    ),
    ("cursor bare tool", {"role": "assistant", "message": {"content": [{"type": "tool_result"}]}}, T),
    # 5. flat chat rows (OpenAI / Hermes)
    ("flat tool", {"role": "tool", "content": "removed"}, T),
    ("flat tool_call_id", {"role": "assistant", "tool_call_id": "c1"}, T),
    ("flat user", {"role": "user", "content": "hello"}, M),
    ("flat dict content", {"role": "assistant", "content": {"weird": 1}}, M),
    ("flat tool_calls", {"role": "assistant", "content": "", "tool_calls": [{"name": "x"}]}, T),
    ("flat system", {"role": "system", "content": "be nice"}, D),
    # fail closed
    (
        "workbuddy prose is not a known dialect",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
        D,
    ),
    ("unknown", {"event": "tick", "n": 1}, D),
]


@pytest.mark.parametrize(("label", "record", "kind"), CASES, ids=[c[0] for c in CASES])
def test_dialects(label: str, record: dict[str, Any], kind: RecordKind) -> None:
    assert sniff(record) is kind


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["type", "role", "message", "payload", "content", "isMeta", "tool_calls", "tool_call_id"]
            )
            | st.text(max_size=3),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(json_values)
def test_never_raises(value: Any) -> None:
    assert GenericSource("/x").classify(json.dumps(value)) in (M, T, D)


def test_timestamps_from_payload_and_epoch(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"payload": {"type": "message", "role": "user", "timestamp": 1752537600000}}) + "\n"
    )
    source = GenericSource(tmp_path)
    assert source.read_incremental(source.discover()[0], None).last_timestamp == "2025-07-15T00:00:00+00:00"


@pytest.mark.parametrize(("label", "record", "kind"), CASES, ids=[c[0] for c in CASES])
def test_dialect_names_follow_the_sniffing_order(
    label: str, record: dict[str, Any], kind: RecordKind
) -> None:
    from memu_host_generic.source import dialect_of

    name = dialect_of(record)
    if kind is D:
        return  # dropped records may or may not have a recognisable shape
    assert name is not None
    expected = label.split()[0]
    if expected in ("codex", "pi", "claude", "cursor"):
        assert name == expected
    elif expected == "flat":
        assert name == "chat"
