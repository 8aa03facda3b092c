"""The bodies of ``schedule install|uninstall|status|verify|run``, free of the CLI framework."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace as with_changes
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memu_core import _atomic
from memu_core._bridge.lock import host_lock
from memu_core._hostkit.spec import HostSpec
from memu_core._layout import ensure_private_dir, home
from memu_core._schedule import backends, native, runner
from memu_core._schedule import plan as plans
from memu_core._schedule import wrapper as wrappers
from memu_core._schedule.plan import Plan
from memu_core._schedule.prompt import bridging_prompt
from memu_core._schedule.system import Runner, ScheduleError, run_tool
from memu_core.errors import UsageError

WINDOWS = sys.platform == "win32"
INSTALL_WAIT = 30.0
"""Seconds an install waits for another one (of any host) editing the scheduler."""


def where(spec: HostSpec, base_dir: str | None) -> tuple[Path, str]:
    """``(working tree, task name)``: the host's own, or for ``--base-dir`` (several agents on
    the generic adapter) that tree and a task name after its folder."""
    if not base_dir:
        return spec.default_base(), spec.task_name
    base = Path(base_dir).expanduser().absolute()
    if base == spec.default_base().absolute():
        return base, spec.task_name
    return base, f"memu-bridging-{base.name}"


def _install_lock() -> Path:
    # One lock for every host: two installs of different hosts both rewrite the one crontab.
    return home() / ".schedule.lock"


def install(
    spec: HostSpec,
    *,
    interval: int = plans.DEFAULT_INTERVAL,
    backend_name: str | None = None,
    agent_command: str | None = None,
    session_dir: str | None = None,
    timeout: int = plans.DEFAULT_TIMEOUT,
    replace: bool = False,
    base_dir: str | None = None,
    keep_env: list[str] | None = None,
    runner_fn: Runner = run_tool,
) -> list[str]:
    """Register ``spec``'s bridging run; the lines to print. Idempotent.

    ``keep_env`` names variables of this shell the runs also get (an agent's API key, a proxy);
    the wrapper holding them is readable by the user alone.
    """
    plans.check_interval(interval)
    if timeout < 60:
        raise UsageError(f"--timeout {timeout}: give at least 60 seconds for the agent's run")
    base, task = where(spec, base_dir)
    if not spec.scheduled_by_os:
        return [native.steps(spec, interval, str(base))]
    backend = backends.get(backend_name, runner_fn)
    agent = plans.agent_argv(spec, agent_command)
    binary = plans.host_binary(spec)
    ensure_private_dir(base)
    with host_lock(_install_lock(), spec.id, wait=INSTALL_WAIT):
        previous = plans.load(base, spec.id)
        notes: list[str] = []
        moved = previous is not None and previous.backend != backend.name
        if moved and previous is not None and backends.get(previous.backend, runner_fn).uninstall(previous):
            notes.append(f"removed the earlier {previous.backend} entry")
        prompt = base / "bridge-prompt.txt"
        plan = Plan(
            host=spec.id,
            task_name=task,
            backend=backend.name,
            interval=interval,
            timeout=timeout,
            base=str(base),
            binary=binary,
            agent=agent,
            prompt=str(prompt),
            wrapper=str(base / (wrappers.WINDOWS_NAME if WINDOWS else wrappers.POSIX_NAME)),
            log=str(base / "bridge.log"),
            env={**plans.passed_env(), **plans.kept_env(keep_env or [])},
            path=plans.run_path(binary, agent[0]),
            installed_at=plans.now(),
            crontab_existed=previous.crontab_existed if previous is not None else True,
        )
        prompt_text = bridging_prompt(spec, str(base), session_dir, base_dir=str(base) if base_dir else None)
        _atomic.write_text(prompt, prompt_text + "\n", mode=0o600)
        text = wrappers.text_for(plan, os.path.expanduser("~"), windows=WINDOWS)
        _atomic.write_bytes(Path(plan.wrapper), text.encode("utf-8-sig" if WINDOWS else "utf-8"), mode=0o700)
        plan = with_changes(plan, wrapper_sha256=wrappers.digest(text))
        plan, more = backend.install(plan, spec, replace=replace)
        plans.save(plan)
    every = native.every(interval)
    return [
        *notes,
        *more,
        f"scheduled {task} with {backend.name}: every {every}, the agent stopped after {timeout // 60} min",
        f"  wrapper: {plan.wrapper}",
        f"  log:     {plan.log}",
        f"check it can run from the scheduler's bare environment: {spec.binary} schedule verify",
    ]


def uninstall(spec: HostSpec, *, base_dir: str | None = None, runner_fn: Runner = run_tool) -> list[str]:
    """Remove exactly memu's entry and the files install wrote; the log stays."""
    base, task = where(spec, base_dir)
    plan = plans.load(base, spec.id)
    if plan is None:
        if not spec.scheduled_by_os:
            return [f"{spec.display} schedules the run itself: delete the `{task}` task there"]
        return [f"nothing to remove: {task} is not scheduled by memu"]
    with host_lock(_install_lock(), spec.id, wait=INSTALL_WAIT):
        removed = backends.get(plan.backend, runner_fn).uninstall(plan)
        for path in (plan.wrapper, plan.prompt, str(plans.registry_file(base, spec.id))):
            Path(path).unlink(missing_ok=True)
    said = f"removed {plan.task_name} from {plan.backend}" if removed else f"{plan.backend} had no {plan.task_name}"
    return [said, f"  (kept the run log {plan.log})"]


def status(spec: HostSpec, *, base_dir: str | None = None, runner_fn: Runner = run_tool) -> dict[str, Any]:
    """What is installed and how the last run went, as one JSON-ready mapping."""
    base, task = where(spec, base_dir)
    plan = plans.load(base, spec.id)
    report: dict[str, Any] = {"host": spec.id, "task_name": task, "installed": False}
    if plan is None:
        report["scheduled_by"] = "memu" if spec.scheduled_by_os else f"{spec.display} itself"
        return report
    registered = backends.get(plan.backend, runner_fn).installed(plan)
    report.update(
        installed=registered,
        backend=plan.backend,
        interval_minutes=plan.interval,
        timeout_seconds=plan.timeout,
        wrapper=plan.wrapper,
        log=plan.log,
        wrapper_edited=wrappers.current_digest(Path(plan.wrapper)) not in (plan.wrapper_sha256, None),
        last_run=runner.last_run(plan),
    )
    upcoming = backends.get(plan.backend, runner_fn).next_run(plan, datetime.now(UTC))
    report["next_run"] = upcoming.strftime("%Y-%m-%dT%H:%M:%SZ") if upcoming and registered else None
    report["log_tail"] = _tail(Path(plan.log))
    remaining = _atomic.read_json(base / ".backlog.json", None)
    report["sessions_remaining"] = remaining.get("remaining") if isinstance(remaining, dict) else None
    return report


def _tail(log: Path, lines: int = 5) -> list[str]:
    try:
        with open(log, "rb") as fh:
            fh.seek(max(0, log.stat().st_size - 8192))
            return fh.read().decode("utf-8", "replace").splitlines()[-lines:]
    except OSError:
        return []


def bare_command(plan: Plan, *extra: str) -> list[str]:
    """The installed command as the scheduler runs it: the wrapper in an empty environment
    (``env -i HOME=…`` on POSIX), so nothing of this shell helps it."""
    if WINDOWS:  # pragma: no cover - Windows
        return ["powershell.exe", "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", plan.wrapper, *extra]
    return ["/usr/bin/env", "-i", f"HOME={os.path.expanduser('~')}", "/bin/sh", plan.wrapper, *extra]


def installed_plan(spec: HostSpec, base_dir: str | None = None) -> Plan:
    """The installed plan, or a :class:`UsageError` saying how to install one."""
    base, task = where(spec, base_dir)
    plan = plans.load(base, spec.id)
    if plan is None:
        if not spec.scheduled_by_os:
            raise UsageError(
                f"{spec.display} schedules the run itself; `{spec.binary} schedule install` prints the steps"
            )
        raise UsageError(f"{task} is not scheduled; run `{spec.binary} schedule install` first")
    return plan


def verify_native(spec: HostSpec, base_dir: str | None = None) -> tuple[int, list[str]]:
    """What memu can check of a run the agent schedules itself: the binary the prompt calls
    resolves, and the traces a run leaves (the cursor, an unfinished run)."""
    import shutil
    import time

    base, task = where(spec, base_dir)
    lines: list[str] = []
    found = shutil.which(spec.binary)
    lines.append(
        f"{'ok':<5}binary: {found}" if found else f"{'FAIL':<5}binary: {spec.binary} is not on PATH for the agent"
    )
    cursor = base / f".session_manifest.{spec.id}.json"
    try:
        age = (time.time() - cursor.stat().st_mtime) / 60
    except OSError:
        lines.append(f"{'WARN':<5}last run: none has committed yet; check `{task}` exists in {spec.display}")
    else:
        lines.append(f"{'ok':<5}last run: a commit moved the cursor {age:.0f} min ago")
    if (base / f".bridging_run.{spec.id}.json").exists():
        lines.append(f"{'WARN':<5}unfinished run: jobs are waiting in {base / 'jobs'}; the next run works them first")
    lines.append("memu cannot see inside the agent's scheduler; the rows above are the traces runs leave")
    return (0 if found else 1), lines


def verify(spec: HostSpec, *, base_dir: str | None = None, runner_fn: Runner = run_tool) -> tuple[int, list[str]]:
    """Check the registration, then run the wrapper as the scheduler would, in dry-run mode."""
    if not spec.scheduled_by_os:
        return verify_native(spec, base_dir)
    plan = installed_plan(spec, base_dir)
    lines: list[str] = []
    registered = backends.get(plan.backend, runner_fn).installed(plan)
    lines.append(
        f"{'ok':<5}registered: {plan.task_name} in {plan.backend}"
        if registered
        else f"{'FAIL':<5}registered: {plan.backend} has no {plan.task_name}; run {spec.binary} schedule install"
    )
    try:
        done = subprocess.run(bare_command(plan, "--dry-run"), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        lines.append(f"{'FAIL':<5}wrapper: could not run it ({type(exc).__name__}); run {spec.binary} schedule install")
        return 1, lines
    lines += [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 and not done.stdout.strip():
        error = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        lines.append(f"{'FAIL':<5}wrapper: {error}")
    failed = not registered or done.returncode != 0
    lines.append("verify failed" if failed else "all checks passed: the scheduler can run it")
    return (1 if failed else 0), lines


def run_now(spec: HostSpec, base_dir: str | None = None) -> tuple[int, list[str]]:
    """Start one run now, exactly as the scheduler would, and wait for it."""
    plan = installed_plan(spec, base_dir)
    done = subprocess.run(bare_command(plan), capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    lines.append(f"run finished with exit code {done.returncode}; its output is in {plan.log}")
    return done.returncode, lines


def scheduled(spec: HostSpec, *, dry_run: bool, base_dir: str | None = None) -> int:
    """``schedule run --scheduled``: what the wrapper starts."""
    try:
        plan = installed_plan(spec, base_dir)
    except UsageError as exc:
        raise ScheduleError(str(exc)) from None

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")

    return runner.run(plan, dry_run=dry_run, say=say)
