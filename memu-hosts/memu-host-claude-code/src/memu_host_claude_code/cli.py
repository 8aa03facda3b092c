"""The ``memu-claude-code`` console script."""

from __future__ import annotations

import sys

from memu_core.host import run_host
from memu_host_claude_code.spec import SPEC


def main() -> None:
    """Run ``memu-claude-code``."""
    sys.exit(run_host(SPEC))
