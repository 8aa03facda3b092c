"""The ``memu-hermes`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host
from memu_host_hermes.spec import SPEC


def main() -> None:
    """Run ``memu-hermes``."""
    sys.exit(run_host(SPEC))
