"""The ``memu-agent`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host
from memu_host_generic.spec import SPEC


def main() -> None:
    """Run ``memu-agent``."""
    sys.exit(run_host(SPEC))
