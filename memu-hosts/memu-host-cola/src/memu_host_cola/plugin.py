"""Entry point (group ``memu``): registers the Cola host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_cola.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The Cola host spec."""
    return [SPEC]
