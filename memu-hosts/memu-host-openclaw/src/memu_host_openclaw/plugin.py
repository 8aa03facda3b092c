"""Entry point (group ``memu``): registers the OpenClaw host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_openclaw.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The OpenClaw host spec."""
    return [SPEC]
