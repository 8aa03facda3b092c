"""memu's pytest plugin (fixtures such as ``memu_home``); pytest reads ``pytest_plugins`` only here."""

pytest_plugins = ["memu_core.testing.plugin"]
