"""Entry point (group ``memu``): registers the Hermes host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_hermes.spec import SPEC

if TYPE_CHECKING:
    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The Hermes host spec."""
    return [SPEC]
