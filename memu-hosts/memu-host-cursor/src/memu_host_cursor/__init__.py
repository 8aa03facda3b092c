"""memu's Cursor host: mines the Cursor Agent's transcripts under ``~/.cursor/projects``."""
