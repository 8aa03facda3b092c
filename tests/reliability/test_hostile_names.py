"""Hostile names at every door (issue 14): the CLI's ``memu commit``, the MCP ``remember`` tool,
``memu-server``'s commit route over HTTP and a host's commit of its mirror all accept exactly
the names :func:`memu_core.names.name_problem` accepts, refuse the rest with one line naming the
name, and whatever the store ends up holding never stops a bridging cycle or loses a file."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memu_server.app import create_app
from memu_server.testing import serve_in_thread

from memu_core import names
from memu_core._bridge import pipeline, sync
from memu_core._cli.memory_cmds import run_commit
from memu_core._engine.engine import LocalEngine
from memu_core._layout import Layout
from memu_core._markdown import quote
from memu_core._mcp.server import build_server
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import UsageError

_PIECES = st.sampled_from(
    ["\x00", "/", "\\", ".", "..", " ", "-", "\n", "\t", "\u2028", "\x7f", "é", "東京", "🚀", "deploy", "notes", "~"]
)
HOSTILE = st.one_of(
    st.lists(_PIECES, min_size=1, max_size=6).map("".join),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
    st.integers(40, 120).map(lambda n: "é" * n),  # around the 200-byte limit
)
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hostile")
    engine = LocalEngine(SqliteStore.open(str(root / "memu.sqlite3")))
    with serve_in_thread(create_app(engine, keys=None)) as url:
        yield {"root": root, "engine": engine, "url": url, "mcp": build_server(lambda: engine)}
    engine.close()


def _stored(engine: LocalEngine) -> set[str]:
    """Every stored name, page by page. The soak stores more than one page (200) in the shared
    store: a first-page check then saw the name a new, earlier-sorting one pushed off the page
    as forgotten (test_mirror_names.py has that example)."""
    return {doc.name for doc in sync.store_docs(engine)}


def _expect(name: str, refusal: str | None) -> None:
    """A refusal exactly when the rules say so, naming the name on one line."""
    problem = names.name_problem(name)
    if problem is None:
        assert refusal is None, refusal
    else:
        assert refusal is not None and "\n" not in refusal and names.show(name) in refusal, (name, refusal)


@EXAMPLES
@given(name=HOSTILE)
def test_cli_commit(world: dict[str, Any], name: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMU_DB", str(world["root"] / "memu.sqlite3"))
        mp.setenv("MEMU_EMBED_PROVIDER", "none")
        payload = world["root"] / "payload.json"
        payload.write_text(json.dumps({"recall_files": [{"name": name, "content": "- cli"}]}))
        try:
            run_commit(str(payload), None, True)
            refusal = None
        except UsageError as exc:
            refusal = str(exc)
    _expect(name, refusal)


@EXAMPLES
@given(name=HOSTILE)
def test_mcp_remember(world: dict[str, Any], name: str) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        asyncio.run(world["mcp"].call_tool("remember", {"name": name, "content": "- mcp"}))
        refusal = None
    except ToolError as exc:  # what the agent reads: the refusal as one line
        refusal = str(exc)
    _expect(name, refusal)


@EXAMPLES
@given(name=HOSTILE)
def test_server_commit(world: dict[str, Any], name: str) -> None:
    response = httpx.post(world["url"] + "/api/v4/memory", json={"recall_files": [{"name": name, "content": "- api"}]})
    assert response.status_code in (200, 422), response.text
    _expect(name, response.json()["message"] if response.status_code == 422 else None)


@EXAMPLES
@given(name=HOSTILE)
def test_host_commit_and_every_cycle_after(world: dict[str, Any], name: str) -> None:
    engine: LocalEngine = world["engine"]
    layout = Layout.at(world["root"] / "tree", "toy")
    sync.sync(layout, engine)
    before = _stored(engine)
    # A new file each time: rewriting one file's name would be the agent renaming (forgetting) it.
    path = layout.base / "memory" / f"agent-{uuid.uuid4().hex}.md"
    path.write_text(f"---\nname: {quote(name)}\n---\n- host\n", encoding="utf-8")
    try:
        pipeline.commit(layout, lambda: engine, "toy")
        refusal = None
    except UsageError as exc:
        refusal = str(exc)
        path.unlink()
    _expect(name or path.stem, refusal)  # a file without a name is named after itself
    # Whatever the doors let in: two more cycles never fail and never forget a stored file.
    for _ in range(2):
        sync.sync(layout, engine)
        report = pipeline.commit(layout, lambda: engine, "toy")
        assert report.forgotten == [] or all(n not in before for _, n in report.forgotten)
    assert before <= _stored(engine)
