"""Entry point (group ``memu``): registers the WorkBuddy host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_workbuddy.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The WorkBuddy host spec."""
    return [SPEC]
