"""The wrapper script a scheduler starts: every variable it needs set inside, nothing looked up.

A scheduler gives a job a bare environment (cron: ``SHELL=/bin/sh``, a minimal ``PATH``, no
profile). The wrapper sets ``HOME``, a UTF-8 locale, a ``PATH`` holding the binary's and the
agent's folders, memu's own settings from the installing shell and ``MEMU_BRIDGING_RUN``, then
hands over to ``memu-<host> schedule run --scheduled``. It sets ``PATH`` for this one job only:
the user's crontab gains no global line.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from memu_core._schedule.plan import Plan

POSIX_NAME = "bridge.sh"
WINDOWS_NAME = "memu-bridge.ps1"


def _sh(value: str) -> str:
    """``value`` as one single-quoted POSIX shell word."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def _ps(value: str) -> str:
    """``value`` as one single-quoted PowerShell string."""
    return "'" + value.replace("'", "''") + "'"


def variables(plan: Plan, home: str) -> dict[str, str]:
    """Every variable the wrapper sets, in order."""
    values = {"HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    values["PATH"] = os.pathsep.join(plan.path)
    values.update(plan.env)
    values["MEMU_BRIDGING_RUN"] = "1"
    return values


def posix_text(plan: Plan, home: str) -> str:
    """The ``/bin/sh`` wrapper."""
    lines = [
        "#!/bin/sh",
        f"# {plan.task_name}: the scheduled memu bridging run, written by `memu-{plan.host} schedule install`.",
        f"# Edits are lost on the next install; `memu-{plan.host} schedule verify` reports them.",
    ]
    values = variables(plan, home)
    lines += [f"{key}={_sh(value)}" for key, value in values.items()]
    lines.append("export " + " ".join(values))
    lines.append(f"cd {_sh(plan.base)} || exit 1")
    lines.append(f'exec {_sh(plan.binary)} schedule run --scheduled --base-dir {_sh(plan.base)} "$@"')
    return "\n".join(lines) + "\n"


def windows_text(plan: Plan, home: str) -> str:
    """The PowerShell wrapper the Task Scheduler starts."""
    lines = [
        f"# {plan.task_name}: the scheduled memu bridging run, written by `memu-{plan.host} schedule install`.",
        f"# Edits are lost on the next install; `memu-{plan.host} schedule verify` reports them.",
        "$ErrorActionPreference = 'Stop'",
    ]
    for key, value in variables(plan, home).items():
        if key in ("LANG", "LC_ALL"):
            continue  # Windows consoles take UTF-8 from the runner's own stream setup
        lines.append(f"$env:{key} = {_ps(value)}")
    lines.append(f"Set-Location -LiteralPath {_ps(plan.base)}")
    lines.append(f"& {_ps(plan.binary)} schedule run --scheduled --base-dir {_ps(plan.base)} @args")
    lines.append("exit $LASTEXITCODE")
    return "\r\n".join(lines) + "\r\n"


def text_for(plan: Plan, home: str, *, windows: bool) -> str:
    """The wrapper of the platform."""
    return windows_text(plan, home) if windows else posix_text(plan, home)


def digest(text: str) -> str:
    """The content hash recorded at install and compared by ``verify``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def current_digest(path: Path) -> str | None:
    """The hash of the wrapper on disk (``utf-8-sig`` tolerated), or ``None`` when it is gone."""
    try:
        return digest(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError):
        return None
