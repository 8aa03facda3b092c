"""memu-server: the v4 memory HTTP API served warm over any local store."""
