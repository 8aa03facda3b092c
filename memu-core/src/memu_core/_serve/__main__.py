"""``python -m memu_core._serve``: the process a background start launches (see :mod:`.client`)."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the warm server; a start that lost the race to another one exits 0 quietly."""
    from memu_core._serve.server import run
    from memu_core.errors import MemuError

    try:
        return run(quiet_busy="--background" in sys.argv)
    except MemuError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
