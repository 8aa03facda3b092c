"""Entry point (group ``memu``): registers the Cursor host."""

from __future__ import annotations

from typing import Any

import memu_core
from memu_host_cursor.spec import SPEC


@memu_core.hookimpl
def memu_register_hosts() -> list[Any]:
    """The Cursor host spec."""
    return [SPEC]
