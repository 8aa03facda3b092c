"""``memu-agent``: guides, the required --session-dir, and the bridging loop with --base-dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memu_host_generic.plugin import memu_register_hosts
from memu_host_generic.spec import SPEC

from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-agent" and SPEC.session_dir == ""


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-agent" in out and "{{" not in out


def test_session_dir_is_required(home: Path) -> None:
    code, _, err = call(SPEC, "prepare")
    assert code == 2 and "--session-dir" in err


def test_bridging_loop_in_its_own_tree(home: Path) -> None:
    logs = home / ".myagent" / "logs"
    logs.mkdir(parents=True)
    mixed = [
        {
            "type": "user",
            "cwd": "/srv/api",
            "message": {"content": "Our API rate limit is 600 requests per minute per key."},
        },
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Grep"}]}},
        {"role": "tool", "content": "limits.py:12 RATE=600"},
        {"role": "assistant", "content": "Confirmed: 600 requests per minute."},
        {"event": "unknown shape"},
    ]
    (logs / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mixed))
    base = home / ".memu" / "hosts" / "agent-myagent"
    (logs / "run.jsonl").write_text(
        json.dumps({"type": "user", "cwd": str(base), "message": {"content": "run the memu task"}}) + "\n"
    )
    cycle = run_cycle(
        SPEC,
        prepare_args=("--session-dir", str(logs)),
        base_dir=base,
        memory=("api-limits", "The API's rate limit", "The API allows 600 requests per minute per key."),
        skill=("check-rate-limit", "Checking the rate limit", "1. grep RATE in limits.py"),
        query="what is the API rate limit",
    )
    assert "prepared 1 session(s) -> 3 job(s)" in cycle.prepare_out
    assert len(cycle.conversation) == 2 and len(cycle.full) == 4
    assert {"api-limits", "check-rate-limit"} <= {f["name"] for f in cycle.retrieved["files"]}
    job = base / ".session_manifest.agent.json"
    assert job.exists() and not (home / ".memu" / "hosts" / "agent").exists()


def test_resource_job_names_the_custom_tree(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir()
    (logs / "s.jsonl").write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    base = home / "trees" / "bot"
    code, _out, err = call(SPEC, "prepare", "--session-dir", str(logs), "--base-dir", str(base))
    assert code == 0, err
    resource_job = (base / "jobs" / "3.txt").read_text()
    assert f"memu-agent verify-resources --base-dir {base}" in resource_job
