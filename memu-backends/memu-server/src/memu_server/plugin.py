"""Entry point of memu-server in the ``memu`` group. The server registers no backend or store of
its own (it serves the configured local store); the module is here so the distribution loads
and shows up in ``memu plugins`` like every other member."""
