"""The generic source honours the transcript-source contract (one dialect per session)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memu_host_generic.source import GenericSource

from memu_core.testing.source_contract import SourceContract, SourceFixture


class TestGenericContract(SourceContract):
    def make(self, tmp_path: Path) -> SourceFixture:
        root = tmp_path / "logs"
        root.mkdir()
        clock = [1_700_000_000]

        def add(session: str, texts: list[str]) -> None:
            path = root / f"{session}.jsonl"
            with path.open("a") as fh:
                for text in texts:
                    fh.write(json.dumps({"type": "user", "message": {"content": text}}) + "\n")
            clock[0] += 10
            os.utime(path, (clock[0], clock[0]))

        return SourceFixture(GenericSource(root), add)
