"""memu's Codex host: mines ``~/.codex/sessions``."""
