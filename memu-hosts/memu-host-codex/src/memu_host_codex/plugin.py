"""Entry point (group ``memu``): registers the Codex host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_codex.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The Codex host spec."""
    return [SPEC]
