"""memu's Hermes host: mines Hermes's ``state.db`` read-only."""
