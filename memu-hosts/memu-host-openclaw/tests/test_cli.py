"""``memu-openclaw``: guides, the skill, ``register-cron-job`` and the bridging loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memu_host_openclaw.plugin import memu_register_hosts
from memu_host_openclaw.spec import SPEC

from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-openclaw" and SPEC.skills_dir == "~/.openclaw/skills"


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-openclaw" in out and "{{" not in out


def test_skill_and_pointer(home: Path) -> None:
    assert call(SPEC, "install-instruction")[0] == 0
    assert "memu-openclaw retrieve" in (home / ".openclaw" / "skills" / "memu-retrieve" / "SKILL.md").read_text()
    assert "memu:begin" in (home / ".openclaw" / "workspace" / "AGENTS.md").read_text()


def test_register_cron_job_validates_the_id(home: Path) -> None:
    code, _, err = call(SPEC, "register-cron-job", "--job-id", "bad id;rm")
    assert code == 2 and "not valid" in err
    code, _out, _ = call(SPEC, "register-cron-job", "--job-id", " job-7 ")
    assert code == 0
    reg = home / ".memu" / "hosts" / "openclaw" / ".cron_job.openclaw.json"
    assert json.loads(reg.read_text()) == {"job_id": "job-7"}


def test_bridging_loop_skips_the_registered_cron_runs(home: Path, make_store: Any, msg: Any) -> None:
    agents = home / ".openclaw" / "agents"
    store = make_store(agents, "main")
    store.window("work-1")
    store.events(
        "work-1",
        {"type": "session", "id": "work-1", "cwd": "/srv/app"},
        msg("user", "Our staging database is restored nightly from the 02:00 snapshot."),
        msg("assistant", "Noted: staging restores from the 02:00 snapshot."),
        {"type": "message", "message": {"role": "toolResult", "content": [{"type": "text", "text": "ok"}]}},
    )
    store.window("run-1", key="agent:ops:cron:job-7:run:run-1")
    store.events("run-1", msg("user", "memu bridging task prompt"))
    store.window("child", key="agent:ops:cron:job-7:run:run-1:subagent:child")
    store.events("child", msg("user", "a sub-agent's own work stays minable"))
    code, out, err = call(SPEC, "prepare", "--json")
    report = json.loads(out)
    assert code == 0 and err == ""  # the warning rides in the report, not on stderr
    assert any("register-cron-job" in w for w in report["warnings"]) and report["skipped_self"] == 0
    code, out, err = call(SPEC, "prepare", "--abandon-unfinished")
    assert code == 0 and "warning: the bridging task's cron job is not registered" in err
    assert call(SPEC, "commit")[0] == 0
    # Start over with the job registered: the run is claimed, its sub-agent is not.
    base = home / ".memu" / "hosts" / "openclaw"
    (base / ".session_manifest.openclaw.json").unlink()
    assert call(SPEC, "register-cron-job", "--job-id", "job-7")[0] == 0
    cycle = run_cycle(
        SPEC,
        memory=(
            "staging-db",
            "How staging data is refreshed",
            "Staging restores nightly from the 02:00 snapshot.",
        ),
        skill=("restore-staging", "Restoring staging", "1. Take the 02:00 snapshot.\n2. Restore it."),
        query="when is the staging database restored",
    )
    texts = [r["message"]["content"][0]["text"] for r in cycle.conversation]
    assert "memu bridging task prompt" not in texts
    assert "a sub-agent's own work stays minable" in texts
    assert {"staging-db", "restore-staging"} <= {f["name"] for f in cycle.retrieved["files"]}
    (base / ".session_manifest.openclaw.json").unlink()
    report = json.loads(call(SPEC, "prepare", "--json")[1])
    assert report["skipped_self"] == 1 and report["warnings"] == [] and report["sessions"] == 2
    # The runs are found again from OpenClaw's records each time; nothing is remembered for them.
    assert not (base / ".self_sessions.openclaw.json").exists()


def test_a_registration_in_a_custom_tree_counts(home: Path, make_store: Any, msg: Any) -> None:
    store = make_store(home / ".openclaw" / "agents", "main")
    store.window("work", key="agent:main:main")
    store.events("work", msg("user", "The VPN must be on before deploying."))
    store.window("run-9", key="agent:main:cron:job-9:run:run-9")
    store.events("run-9", msg("user", "memu bridging task prompt"))
    custom = home / ".memu" / "hosts" / "openclaw-work"
    assert call(SPEC, "register-cron-job", "--job-id", "job-9", "--base-dir", str(custom))[0] == 0
    code, out, err = call(SPEC, "prepare", "--base-dir", str(custom))
    assert code == 0 and "prepared 1 session(s)" in out and "warning" not in err, err
    assert "memu bridging" not in (custom / "sessions" / "1.jsonl").read_text()
