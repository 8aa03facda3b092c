"""The ``memu-hermes`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host


def main() -> None:
    """Run ``memu-hermes``."""
    sys.exit(run_host("hermes"))
