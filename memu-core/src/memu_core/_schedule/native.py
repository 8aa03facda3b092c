"""Hosts that schedule the bridging run themselves (Codex, OpenClaw, WorkBuddy, Cola): the exact
steps to give the agent, since only the agent can create its own scheduled task."""

from __future__ import annotations

from memu_core._hostkit.spec import HostSpec
from memu_core._schedule.prompt import bridging_prompt

_HOW: dict[str, str] = {
    "codex": (
        "Create a Codex scheduled task (an automation) named `{task}` that runs every {every}, "
        "with the prompt below as its text. Remove any earlier task whose prompt runs "
        "`{binary} prepare` and `{binary} commit` first, so the pipeline never runs twice."
    ),
    "openclaw": (
        "Create an OpenClaw cron job named `{task}` with an agentTurn payload holding the prompt "
        'below and sessionTarget "isolated" (each run then gets a session of its own), every '
        "{every}. Then run `{binary} register-cron-job --job-id <the new job's id>` so prepare "
        "never mines the run's own session."
    ),
    "workbuddy": (
        "Create a recurring WorkBuddy automation (automation_update, scheduleType=recurring, "
        "rrule FREQ=MINUTELY;INTERVAL={minutes}, cwd = the home folder) whose text starts with the "
        "line `{task}` followed by the prompt below."
    ),
    "cola": (
        "In Cola's scheduled tasks, create a task named `{task}` (scope desktop:local) that runs "
        "every {every} with the prompt below. Do not edit Cola's own cron file by hand."
    ),
}

_GENERIC = "Create a task in {display}'s own scheduler named `{task}` that runs every {every} with the prompt below."


def every(minutes: int) -> str:
    """``60`` → ``hour``, ``30`` → ``30 minutes``."""
    if minutes % 60 == 0:
        hours = minutes // 60
        return "hour" if hours == 1 else f"{hours} hours"
    return "minute" if minutes == 1 else f"{minutes} minutes"


def steps(spec: HostSpec, minutes: int, base: str) -> str:
    """The steps, then the prompt, as printed by ``schedule install`` for a native host."""
    how = _HOW.get(spec.id, _GENERIC).format(
        task=spec.task_name, every=every(minutes), minutes=minutes, binary=spec.binary, display=spec.display
    )
    return (
        f"{spec.display} runs the bridging task with its own scheduler; memu cannot register it for you.\n"
        f"{how}\n"
        f"Then check it with `{spec.binary} schedule verify` after its first run.\n\n"
        f"Prompt:\n{bridging_prompt(spec, base)}\n"
    )
