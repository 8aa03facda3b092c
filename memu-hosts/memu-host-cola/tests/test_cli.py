"""``memu-cola``: guides, the skill and its pointer, and the bridging loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memu_host_cola.plugin import memu_register_hosts
from memu_host_cola.spec import SPEC

from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-cola" and SPEC.skills_dir == "~/.cola/resources/skills"


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-cola" in out and "{{" not in out


def test_skill_and_pointer(home: Path) -> None:
    assert call(SPEC, "install-instruction")[0] == 0
    assert (
        "memu-cola retrieve"
        in (home / ".cola" / "resources" / "skills" / "memu-retrieve" / "SKILL.md").read_text()
    )
    assert "memu:begin" in (home / ".cola" / "memory-bank" / "MEMORY.md").read_text()


def test_bridging_loop_without_its_own_runs(home: Path) -> None:
    scope = home / ".cola" / "sessions" / "desktop-local"
    scope.mkdir(parents=True)
    user = [
        {"type": "session", "id": "a", "cwd": str(home / "notes")},
        {
            "type": "message",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "The weekly report goes to ops every Friday at 16:00."}],
            },
        },
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "toolCall", "name": "calendar"}]},
        },
        {
            "type": "message",
            "message": {"role": "toolResult", "content": [{"type": "text", "text": "created"}]},
        },
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Booked every Friday at 16:00."}],
            },
        },
    ]
    (scope / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in user))
    run = [
        {"type": "session", "id": "b", "cwd": str(home / ".memu" / "hosts" / "cola")},
        {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "run the memu bridging task"}]},
        },
    ]
    (scope / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run))
    cycle = run_cycle(
        SPEC,
        memory=(
            "weekly-report",
            "When the weekly report is sent",
            "The weekly report goes to ops on Fridays at 16:00.",
        ),
        skill=(
            "book-weekly-report",
            "Booking the weekly report",
            "1. Create a Friday 16:00 event.\n2. Invite ops.",
        ),
        query="when does the weekly report go out",
    )
    assert "prepared 1 session(s) -> 3 job(s)" in cycle.prepare_out
    assert len(cycle.conversation) == 2 and len(cycle.full) == 4
    assert {"weekly-report", "book-weekly-report"} <= {f["name"] for f in cycle.retrieved["files"]}
