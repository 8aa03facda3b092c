"""The Codex transcript source against hand-written rollout records in the real shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from memu_host_codex.source import CodexSource, classify_codex_record

from memu_core.host import RecordKind

M, T, O = RecordKind.MESSAGE, RecordKind.TOOL, RecordKind.OTHER  # noqa: E741 - table shorthand
FIXTURES = Path(__file__).parent / "fixtures"
ROLLOUT_KINDS = [O, O, O, M, O, O, T, T, O, M, O, O, M, M, O]
"""Kind of each line of the fixture rollout (session_meta, injected context, prose, event_msg,
reasoning, function_call, its output, custom_tool_call, assistant, turn_context, aborted turn,
context + prose, image-only, developer)."""


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    dest = tmp_path / "sessions"
    shutil.copytree(FIXTURES / "sessions", dest)
    return dest


def test_every_record_type(sessions: Path) -> None:
    source = CodexSource(sessions)
    [session] = source.discover()
    lines = session.path.read_text().splitlines()
    assert [source.classify(line) for line in lines] == ROLLOUT_KINDS
    read = source.read_incremental(session, None)
    assert [r.kind for r in read.records] == ROLLOUT_KINDS
    assert read.last_timestamp == "2026-08-20T10:00:11.000Z"


def test_key_and_session_id_follow_the_dated_layout(sessions: Path) -> None:
    source = CodexSource(sessions)
    [session] = source.discover()
    assert source.key(session.path) == (
        "2026/08/20/rollout-2026-08-20T10-00-00-0198aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
    )
    assert (
        source.session_id(session.path) == "rollout-2026-08-20T10-00-00-0198aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    )


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        ({"type": "message", "role": "user", "content": [{"text": "  <environment_context>x"}]}, O),
        ({"type": "message", "role": "user", "content": [{"text": "see <environment_context> here"}]}, M),
        ({"type": "message", "role": "user", "content": "plain string"}, M),
        ({"type": "message", "role": "user", "content": []}, M),
        ({"type": "message", "role": "assistant", "content": [{"text": "<environment_context>"}]}, M),
        ({"type": "function_call_output", "output": "x"}, T),
        ({"type": "reasoning"}, O),
    ],
)
def test_classification_table(payload: dict[str, object], kind: RecordKind) -> None:
    assert classify_codex_record({"type": "response_item", "payload": payload}) is kind


def test_lines_without_a_payload_object_are_other() -> None:
    source = CodexSource("/nowhere")
    assert source.classify(json.dumps({"payload": "x"})) is O
    assert source.classify("{not json") is O


def test_fast_path_agrees_with_the_parser(sessions: Path) -> None:
    from memu_host_codex.source import quick_codex_kind

    [session] = CodexSource(sessions).discover()
    decided = 0
    for line in session.path.read_text().splitlines():
        quick = quick_codex_kind(line)
        decided += quick is not None
        assert quick is None or quick is classify_codex_record(json.loads(line))
    assert decided >= 5


def test_a_bridging_run_is_recognised_by_its_working_tree(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex has no session-id variable: a rollout whose session_meta cwd lies in memu's tree is
    the scheduled run itself and is never mined; the same rollout elsewhere is."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    [session] = CodexSource(sessions).discover()
    text = session.path.read_text()
    tree = home / ".memu" / "hosts" / "codex"
    session.path.write_text(text.replace('"cwd":"/home/u/proj"', f'"cwd":{json.dumps(str(tree))}', 1))
    source = CodexSource(sessions)
    [run] = source.discover()
    read = source.read_incremental(run, None)
    assert read.records == [] and read.cursor["bridging_run"] is True
    session.path.write_text(text)
    [normal] = CodexSource(sessions).discover()
    assert CodexSource(sessions).read_incremental(normal, None).records
