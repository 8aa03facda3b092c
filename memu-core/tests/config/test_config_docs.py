"""The example file in docs/configuration.md reads the way the guide says it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memu_core._config import dotenv

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


@pytest.mark.skipif(not GUIDE.is_file(), reason="docs are not shipped with the distribution")
def test_guide_example_parses() -> None:
    block = re.search(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None
    values, problems = dotenv.parse(block.group(1))
    assert problems == []
    assert values == {
        "MEMU_MEMORY_MODE": "local",
        "MEMU_DB": "~/.memu/memu.sqlite3",
        "MEMU_EMBED_MODEL": "all-MiniLM-L6-v2",
        "MEMU_BASE_URL": "http://127.0.0.1:8000/v1",
        "NO_PROXY": "localhost,127.0.0.1",
    }
