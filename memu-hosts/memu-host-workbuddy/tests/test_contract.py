"""The WorkBuddy source honours the transcript-source contract."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memu_host_workbuddy.source import WorkBuddySource

from memu_core.testing.source_contract import SourceContract, SourceFixture


class TestWorkBuddyContract(SourceContract):
    def make(self, tmp_path: Path) -> SourceFixture:
        root = tmp_path / "projects"
        clock = [1_700_000_000]

        def add(session: str, texts: list[str]) -> None:
            path = root / "d-Users-p" / f"{session}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as fh:
                for text in texts:
                    rec = {
                        "type": "message",
                        "role": "user",
                        "timestamp": clock[0] * 1000,
                        "content": [{"type": "input_text", "text": text}],
                    }
                    fh.write(json.dumps(rec) + "\n")
            clock[0] += 10
            os.utime(path, (clock[0], clock[0]))

        return SourceFixture(WorkBuddySource(root), add)
