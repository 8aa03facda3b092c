"""The ``memu-claude-code`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host


def main() -> None:
    """Run ``memu-claude-code``."""
    sys.exit(run_host("claude-code"))
