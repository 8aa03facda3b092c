"""The repository's test suites share memu's fixtures (``memu_home``, ``fresh_plugins``…).

The pytest plugin is opt-in (installing memu-core changes no other project's tests), so it is
loaded here; pytest honours ``pytest_plugins`` only in the rootdir's conftest.
"""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["memu_core.testing.plugin"]


def pytest_configure(config: pytest.Config) -> None:
    """Every test shares the user's exported ONNX model, even the many that move ``HOME`` to a
    temporary folder: exporting takes torch half a minute, and once per machine is enough."""
    from memu_core.settings import models_dir

    os.environ.setdefault("MEMU_MODELS_DIR", str(models_dir()))
