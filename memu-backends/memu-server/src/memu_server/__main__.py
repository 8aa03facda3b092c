"""``python -m memu_server``: same as the ``memu-server`` console script."""

from memu_server.cli import main

main()
