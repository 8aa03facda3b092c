"""The ``memu-openclaw`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host
from memu_host_openclaw.spec import SPEC


def main() -> None:
    """Run ``memu-openclaw``."""
    sys.exit(run_host(SPEC))
