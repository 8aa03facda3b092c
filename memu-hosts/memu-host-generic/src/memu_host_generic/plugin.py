"""Entry point (group ``memu``): registers the any agent host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_generic.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The any agent host spec."""
    return [SPEC]
