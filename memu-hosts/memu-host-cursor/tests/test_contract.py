"""The Cursor source honours the transcript-source contract."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memu_host_cursor.source import CursorSource

from memu_core.testing.source_contract import SourceContract, SourceFixture


class TestCursorContract(SourceContract):
    def make(self, tmp_path: Path) -> SourceFixture:
        root = tmp_path / "projects"
        clock = [1_700_000_000]

        def add(session: str, texts: list[str]) -> None:
            path = root / "-home-u-p" / "agent-transcripts" / session / f"{session}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as fh:
                for text in texts:
                    fh.write(
                        json.dumps({"role": "user", "message": {"content": [{"type": "text", "text": text}]}})
                        + "\n"
                    )
            clock[0] += 10
            os.utime(path, (clock[0], clock[0]))

        return SourceFixture(CursorSource(root), add)
