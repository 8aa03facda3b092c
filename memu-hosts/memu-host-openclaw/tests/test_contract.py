"""The OpenClaw source honours the transcript-source contract (a real WAL agent store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memu_host_openclaw.source import OpenClawSource

from memu_core.testing.source_contract import SourceContract, SourceFixture


class TestOpenClawContract(SourceContract):
    @pytest.fixture(autouse=True)
    def _builders(self, make_store: Any, msg: Any) -> None:
        self.make_store, self.msg = make_store, msg

    def make(self, tmp_path: Path) -> SourceFixture:
        agents = tmp_path / "agents"
        store = self.make_store(agents, "main")
        clock = [1_700_000_000_000]

        def add(session: str, texts: list[str]) -> None:
            store.window(session)
            for text in texts:
                clock[0] += 1000
                store.events(session, self.msg("user", text), at_ms=clock[0])

        # Session ids are "<agent>/<session>": the contract names sessions without the agent.
        source = _AgentLess(agents)
        return SourceFixture(source, add)


class _AgentLess(OpenClawSource):
    def session_id(self, path: Path) -> str:
        return super().session_id(path).split("/", 1)[1]
