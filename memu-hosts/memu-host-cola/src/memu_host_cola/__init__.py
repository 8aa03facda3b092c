"""memu's Cola host: mines ``~/.cola/sessions``."""
