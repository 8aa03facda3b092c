"""One scheduled run: the agent gets the prompt, overlap is refused, time is bounded, the log
stays small and says what happened."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memu_core._bridge.lock import host_lock
from memu_core._schedule import runner
from memu_core._schedule.plan import Plan, state_file

from .conftest import make_plan


def _agent(tmp_path: Path, body: str) -> Plan:
    agent = tmp_path / "bin" / "fake-agent"
    agent.parent.mkdir(parents=True, exist_ok=True)
    agent.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    agent.chmod(0o700)
    plan = make_plan(tmp_path)
    Path(plan.prompt).write_text("do the bridging\n", encoding="utf-8")
    return plan


def _events(plan: Plan) -> list[str]:
    return [
        word.split("=", 1)[1]
        for line in Path(plan.log).read_text(encoding="utf-8").splitlines()
        for word in line.split()
        if word.startswith("event=")
    ]


def test_the_agent_gets_the_prompt_and_the_run_is_recorded(tmp_path: Path) -> None:
    plan = _agent(tmp_path, 'echo "agent saw: $2 (bridging=$MEMU_BRIDGING_RUN)"\n')
    assert runner.run(plan, say=lambda _: None) == 0
    log = Path(plan.log).read_text(encoding="utf-8")
    assert "agent saw: do the bridging" in log and "bridging=1" in log
    assert _events(plan) == ["start", "end"]
    state = json.loads(state_file(Path(plan.base), plan.host).read_text(encoding="utf-8"))
    assert state["exit"] == 0 and state["outcome"] == "ok"


def test_a_run_while_another_is_going_exits_at_once_and_says_so(tmp_path: Path) -> None:
    plan = _agent(tmp_path, "echo should-not-run\n")
    said: list[str] = []
    with host_lock(Path(plan.base) / runner.GUARD_NAME, plan.host, wait=0):
        assert runner.run(plan, say=said.append) == 0
    assert _events(plan) == ["skipped"]
    assert "should-not-run" not in Path(plan.log).read_text(encoding="utf-8")
    assert said and "still going" in said[0]


def test_an_agent_past_its_time_is_stopped_with_everything_it_started(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    plan = _agent(tmp_path, f"sleep 60 & echo $! > {marker}\nwait\n")
    plan = Plan.from_json({**plan.as_json(), "timeout": 1})
    started = time.monotonic()
    assert runner.run(plan, say=lambda _: None) == runner.TIMED_OUT
    assert time.monotonic() - started < 30
    child = int(marker.read_text(encoding="utf-8"))
    time.sleep(0.2)
    assert not _alive(child), "the agent's child outlived the timeout"
    state = json.loads(state_file(Path(plan.base), plan.host).read_text(encoding="utf-8"))
    assert state["outcome"] == "timeout"


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a parent (a container's init may never reap it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_a_failing_agent_is_recorded_with_its_exit_code(tmp_path: Path) -> None:
    plan = _agent(tmp_path, "exit 7\n")
    assert runner.run(plan, say=lambda _: None) == 7
    assert runner.last_run(plan)["outcome"] == "failed"  # type: ignore[index]


def test_the_log_rotates_past_its_limit(tmp_path: Path) -> None:
    log = tmp_path / "bridge.log"
    for round_ in range(4):
        log.write_text(f"round {round_}\n" + "x" * 200, encoding="utf-8")
        runner.rotate(log, limit=100, kept=2)
    assert not log.exists()
    assert (tmp_path / "bridge.log.1").read_text(encoding="utf-8").startswith("round 3")
    assert (tmp_path / "bridge.log.2").read_text(encoding="utf-8").startswith("round 2")
    assert not (tmp_path / "bridge.log.3").exists()


def test_dry_run_names_a_missing_agent_and_a_hand_edited_wrapper(tmp_path: Path) -> None:
    plan = _agent(tmp_path, "exit 0\n")
    Path(plan.wrapper).write_text("#!/bin/sh\n# edited\n", encoding="utf-8")
    plan = Plan.from_json({**plan.as_json(), "wrapper_sha256": "0" * 64})
    Path(plan.agent[0]).unlink()
    said: list[str] = []
    assert runner.run(plan, dry_run=True, say=said.append) == 1
    text = "\n".join(said)
    assert "FAIL wrapper" in text and "edited by hand" in text
    assert "FAIL agent" in text and "schedule install" in text
