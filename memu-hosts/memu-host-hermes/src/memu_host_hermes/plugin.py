"""Entry point (group ``memu``): registers the Hermes host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_hermes.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The Hermes host spec."""
    return [SPEC]
