"""Entry point (group ``memu``): registers the Claude Code host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_claude_code.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The Claude Code host spec."""
    return [SPEC]
