"""Fixtures for the Claude Code host tests: a copy of the hand-written session tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """A writable copy of ``fixtures/projects`` (Claude Code's ``~/.claude/projects`` shape)."""
    dest = tmp_path / "projects"
    shutil.copytree(FIXTURES / "projects", dest)
    return dest


@pytest.fixture
def cowork_root(tmp_path: Path) -> Path:
    """A writable copy of a Claude Desktop data root holding one Cowork session."""
    dest = tmp_path / "Claude"
    shutil.copytree(FIXTURES / "cowork", dest)
    return dest
