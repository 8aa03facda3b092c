"""The CLI every ``memu-<host>`` binary shares, built from the host's :class:`HostSpec`."""
