"""The ``memu-cola`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host


def main() -> None:
    """Run ``memu-cola``."""
    sys.exit(run_host("cola"))
