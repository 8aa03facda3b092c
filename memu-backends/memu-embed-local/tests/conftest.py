"""Registers the ``minilm`` marker: tests that load the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker so ``-m minilm`` selects these tests (they also run by default)."""
    config.addinivalue_line("markers", "minilm: loads the real all-MiniLM-L6-v2 model (torch, CPU)")
