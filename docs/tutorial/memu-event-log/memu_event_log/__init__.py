"""The plugin tutorial's finished example: every memu event appended to a JSON Lines file."""
