"""One scheduled run: the overlap guard, the agent under a time limit, the log, the outcome.

The wrapper hands over to ``memu-<host> schedule run --scheduled``, which lands here. Each run
appends ``key=value`` lines of its own to the log (``event=start``, ``event=end``,
``event=skipped``) around the agent's output, rotates the log past :data:`LOG_LIMIT`, and
records its outcome for ``schedule status``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from memu_core import _atomic
from memu_core._bridge.lock import host_lock
from memu_core._layout import ensure_private_dir, private_opener
from memu_core._schedule import wrapper as wrappers
from memu_core._schedule.plan import Plan, now, state_file
from memu_core.errors import LockBusy

LOG_LIMIT = 1_000_000
"""Bytes after which ``bridge.log`` is rotated to ``bridge.log.1`` (two old logs are kept)."""
KEPT_LOGS = 2
TIMED_OUT = 124
"""The exit code recorded for an agent stopped at its time limit (as ``timeout(1)`` uses)."""
GUARD_NAME = ".schedule.run.lock"


def log_line(log: Path, event: str, **fields: object) -> None:
    """Append one ``ts=… event=… key=value`` line to the run log."""
    parts = [f"ts={now()}", f"event={event}"]
    parts += [f"{key}={value}" for key, value in fields.items()]
    ensure_private_dir(log.parent)
    with open(log, "a", encoding="utf-8", opener=private_opener) as fh:
        fh.write(" ".join(parts) + "\n")
    os.chmod(log, 0o600)


def rotate(log: Path, limit: int = LOG_LIMIT, kept: int = KEPT_LOGS) -> None:
    """Shift ``log`` to ``log.1`` (``log.1`` to ``log.2``…) once it is past ``limit`` bytes."""
    try:
        if log.stat().st_size <= limit:
            return
    except OSError:
        return
    for index in range(kept, 0, -1):
        older = log.with_name(f"{log.name}.{index}")
        newer = log if index == 1 else log.with_name(f"{log.name}.{index - 1}")
        if newer.exists():
            os.replace(newer, older)


def agent_command(plan: Plan, prompt: str) -> list[str]:
    """The agent's argv with the prompt in place of ``{prompt}``."""
    return [prompt if part == "{prompt}" else part for part in plan.agent]


def checks(plan: Plan) -> list[tuple[str, bool, str]]:
    """What a run needs, checked from inside the scheduler's environment: ``(label, ok, detail)``."""
    found: list[tuple[str, bool, str]] = []
    wrapper = Path(plan.wrapper)
    digest = wrappers.current_digest(wrapper)
    if digest is None:
        found.append(("wrapper", False, f"{wrapper} is missing; run memu-{plan.host} schedule install"))
    elif plan.wrapper_sha256 and digest != plan.wrapper_sha256:
        found.append(("wrapper", False, f"{wrapper} was edited by hand; run memu-{plan.host} schedule install"))
    else:
        found.append(("wrapper", True, str(wrapper)))
    agent = Path(plan.agent[0])
    if agent.is_file() and os.access(agent, os.X_OK):
        found.append(("agent", True, str(agent)))
    else:
        found.append(
            ("agent", False, f"{agent} is gone or not executable; reinstall it, then memu-{plan.host} schedule install")
        )
    prompt = Path(plan.prompt)
    found.append(
        ("prompt", True, str(prompt))
        if prompt.is_file()
        else ("prompt", False, f"{prompt} is missing; run memu-{plan.host} schedule install")
    )
    base = Path(plan.base)
    writable = base.is_dir() and os.access(base, os.W_OK)
    found.append(("working tree", writable, str(base) if writable else f"{base} is not writable by this user"))
    found.append(_store_check())
    return found


def _store_check() -> tuple[str, bool, str]:
    """The configured store resolves from what the scheduler's environment and config.env give."""
    try:
        from memu_core._compose import store_target

        target = store_target()
    except Exception as exc:  # a bad config must read as a failed check, not a traceback
        return ("store", False, f"{exc}".splitlines()[0] if str(exc) else type(exc).__name__)
    from memu_core._config.dsn import redact_dsn

    return ("store", True, redact_dsn(target.url))


def run(plan: Plan, *, dry_run: bool = False, say: Callable[[str], None] = print) -> int:
    """One scheduled run of ``plan``; the exit code of the agent (0 when skipped for overlap)."""
    log = Path(plan.log)
    try:
        with host_lock(Path(plan.base) / GUARD_NAME, plan.host, wait=0):
            rotate(log)
            if dry_run:
                return _dry_run(plan, log, say)
            return _agent_run(plan, log)
    except LockBusy:
        log_line(log, "skipped", task=plan.task_name, reason="a-run-is-still-going")
        say("skipped: another scheduled run is still going (see the log)")
        return 0


def _dry_run(plan: Plan, log: Path, say: Callable[[str], None]) -> int:
    results = checks(plan)
    for label, ok, detail in results:
        say(f"{'ok' if ok else 'FAIL':<5}{label}: {detail}")
    failed = [label for label, ok, _ in results if not ok]
    log_line(log, "verify", task=plan.task_name, failed=",".join(failed) or "none")
    return 1 if failed else 0


def _agent_run(plan: Plan, log: Path) -> int:
    prompt = Path(plan.prompt).read_text(encoding="utf-8")
    started = time.monotonic()
    started_at = now()
    log_line(log, "start", task=plan.task_name, pid=os.getpid(), timeout=plan.timeout)
    env = {**os.environ, "MEMU_BRIDGING_RUN": "1"}
    code: int
    with open(log, "a", encoding="utf-8", opener=private_opener) as out:
        try:
            proc = subprocess.Popen(
                agent_command(plan, prompt),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=plan.base,
                env=env,
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            log_line(log, "end", task=plan.task_name, exit=127, error=type(exc).__name__)
            _record(plan, started_at, 127, time.monotonic() - started, "agent-not-startable")
            return 127
        try:
            code = proc.wait(timeout=plan.timeout)
            outcome = "ok" if code == 0 else "failed"
        except subprocess.TimeoutExpired:
            _stop(proc)
            code, outcome = TIMED_OUT, "timeout"
    seconds = time.monotonic() - started
    log_line(log, "end", task=plan.task_name, exit=code, seconds=f"{seconds:.1f}", outcome=outcome)
    _record(plan, started_at, code, seconds, outcome)
    return code


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the agent and everything it started (its own process group on POSIX)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGTERM)
        else:  # pragma: no cover - Windows
            proc.terminate()
        proc.wait(timeout=10)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
        proc.wait()


def _record(plan: Plan, started_at: str, code: int, seconds: float, outcome: str) -> None:
    _atomic.write_json(
        state_file(Path(plan.base), plan.host),
        {
            "started_at": started_at,
            "finished_at": now(),
            "exit": code,
            "seconds": round(seconds, 1),
            "outcome": outcome,
        },
    )


def last_run(plan: Plan) -> dict[str, object] | None:
    """The last run's recorded outcome, if any."""
    data = _atomic.read_json(state_file(Path(plan.base), plan.host), None)
    return data if isinstance(data, dict) else None
