"""Running the platform's scheduler tools (``crontab``, ``systemctl``, ``launchctl``,
``powershell.exe``): one function, so tests of the platforms this machine is not can record the
exact commands instead."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memu_core.errors import MemuError


@dataclass(frozen=True)
class Result:
    """What a tool answered."""

    code: int
    out: str
    err: str


Runner = Callable[[Sequence[str], "str | None"], Result]
"""``runner(argv, stdin_text)``: runs a tool and answers, never raises for a non-zero exit."""


class ScheduleError(MemuError):
    """The scheduler refused or could not be asked; the message names the tool and the fix."""


def run_tool(argv: Sequence[str], stdin: str | None = None) -> Result:
    """Run ``argv`` with a bounded wait; a missing tool is a :class:`ScheduleError`."""
    try:
        done = subprocess.run(
            list(argv), input=stdin, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=60
        )
    except FileNotFoundError:
        raise ScheduleError(f"{argv[0]} is not installed here; choose another --backend") from None
    except subprocess.TimeoutExpired:
        raise ScheduleError(f"{argv[0]} did not answer within 60 s; try again") from None
    return Result(done.returncode, done.stdout, done.stderr)
