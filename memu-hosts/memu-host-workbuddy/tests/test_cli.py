"""``memu-workbuddy``: guides, SOUL.md with the MEMORY.md migration, and the bridging loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memu_host_workbuddy.plugin import memu_register_hosts
from memu_host_workbuddy.spec import SPEC

from memu_core.host import instruction_marker as begin_marker
from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-workbuddy" and not SPEC.skills_dir


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-workbuddy" in out and "{{" not in out


def test_install_moves_the_old_block_out_of_memory_md(home: Path) -> None:
    wb = home / ".workbuddy"
    wb.mkdir()
    old = f"# Memory\nuser likes tea\n{begin_marker('memu-workbuddy')}\nold procedure\n<!-- memu:end -->\n"
    (wb / "MEMORY.md").write_text(old)
    code, _, _ = call(SPEC, "install-instruction", "--dry-run")
    assert code == 0 and "old procedure" in (wb / "MEMORY.md").read_text()  # dry run: untouched
    code, out, _ = call(SPEC, "install-instruction")
    assert code == 0 and "moved the old block" in out
    assert (wb / "MEMORY.md").read_text().rstrip() == "# Memory\nuser likes tea"
    assert "memu-workbuddy retrieve" in (wb / "SOUL.md").read_text()
    code, out, _ = call(SPEC, "install-instruction", "--path", str(home / "elsewhere.md"))
    assert code == 0 and "moved" not in out
    (wb / "MEMORY.md").write_text(old)
    assert call(SPEC, "remove-instruction")[0] == 0
    assert "memu:begin" not in (wb / "SOUL.md").read_text() + (wb / "MEMORY.md").read_text()


def test_bridging_loop_without_its_own_runs(home: Path) -> None:
    projects = home / ".workbuddy" / "projects"
    user = projects / "d-Users-shop" / "7c9e6679-7425-40de-944b-e07fc1f90ae7.jsonl"
    user.parent.mkdir(parents=True)
    rows = [
        {
            "type": "message",
            "role": "user",
            "timestamp": 1784435392565,
            "content": [
                {
                    "type": "input_text",
                    "text": "Invoices are always exported as CSV with a semicolon separator.",
                }
            ],
        },
        {"type": "function_call", "name": "Bash", "callId": "c1", "arguments": "{}"},
        {
            "type": "function_call_result",
            "name": "Bash",
            "callId": "c1",
            "output": {"type": "text", "text": "ok"},
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Exported with ';' as the separator."}],
        },
    ]
    user.write_text("".join(json.dumps(r) + "\n" for r in rows))
    own_project = str(home / ".memu" / "hosts" / "workbuddy").replace("/", "-")
    own = projects / own_project / "run.jsonl"
    own.parent.mkdir(parents=True)
    own.write_text(
        json.dumps({"type": "message", "role": "user", "content": "run the memu bridging task"}) + "\n"
    )
    cycle = run_cycle(
        SPEC,
        memory=(
            "invoice-export",
            "How invoices are exported",
            "Invoices export as CSV with a semicolon separator.",
        ),
        skill=("export-invoices", "Exporting invoices", "1. Export CSV.\n2. Use ';' as the separator."),
        query="which separator do invoice exports use",
    )
    assert "prepared 1 session(s) -> 3 job(s)" in cycle.prepare_out
    assert [r["role"] for r in cycle.conversation] == ["user", "assistant"] and len(cycle.full) == 4
    assert {"invoice-export", "export-invoices"} <= {f["name"] for f in cycle.retrieved["files"]}
