"""The repository's test suites share memu's fixtures (``memu_home``, ``fresh_plugins``…).

The pytest plugin is opt-in (installing memu-core changes no other project's tests), so it is
loaded here; pytest honours ``pytest_plugins`` only in the rootdir's conftest.
"""

pytest_plugins = ["memu_core.testing.plugin"]
