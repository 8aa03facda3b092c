"""Entry point (group ``memu``): registers the Codex host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_codex.spec import SPEC

if TYPE_CHECKING:
    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The Codex host spec."""
    return [SPEC]
