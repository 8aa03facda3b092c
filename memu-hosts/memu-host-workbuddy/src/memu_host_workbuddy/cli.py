"""The ``memu-workbuddy`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host
from memu_host_workbuddy.spec import SPEC


def main() -> None:
    """Run ``memu-workbuddy``."""
    sys.exit(run_host(SPEC))
