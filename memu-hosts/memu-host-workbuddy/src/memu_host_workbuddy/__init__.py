"""memu's WorkBuddy host: mines ``~/.workbuddy/projects``."""
