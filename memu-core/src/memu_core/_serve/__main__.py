"""``python -m memu_core._serve``: the process a background start launches (see :mod:`.client`)."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the warm server; a start that lost the race to another one exits 0 quietly.

    Not the CLI shell (the warm server stays clear of the CLI), but the same contract: a handled
    error is one line, and ``MEMU_DEBUG=1`` adds debug events and the traceback to the server's log.
    """
    from memu_core import _log
    from memu_core._serve.server import run
    from memu_core.errors import MemuError

    debug = _log.debug_from_env()
    _log.configure(verbose=debug)
    try:
        return run(quiet_busy="--background" in sys.argv)
    except MemuError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
