"""The MCP server: memu's memory as four tools over stdio, built on the official ``mcp`` SDK.

The process lives as long as the MCP client's session, so it is itself a warm path: the backend
(store, index, embedder) is opened on the first tool call and kept. Tool descriptions are written
for the agent: they say *when* to call each tool, not just what it does.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

INSTRUCTIONS = (
    "memu is the user's long-term memory across sessions and agents: preferences, decisions, project "
    "conventions and reusable skills. Call `retrieve` before answering anything that may depend on them. "
    "Call `remember` when the user states a lasting preference or you learn a reusable procedure."
)

RETRIEVE = (
    "Search the user's memory and skills. Call it at the start of a task or before answering whenever "
    "the answer may depend on the user's preferences, earlier decisions, project conventions, people, "
    "or a known procedure. Pass the user's request or a few keywords. Returns ranked `segments` (lines), "
    "their `files` and workspace `resources`, each with a score; an empty result means nothing relevant "
    "is stored."
)
REMEMBER = (
    "Store one Markdown memory or skill file, replacing that file's whole content. Call it when the user "
    "states a lasting preference or fact, or when you worked out a reusable procedure (track `skill`). "
    "Keep one topic per file (e.g. `profile`, `coding-style`); to add to an existing file, `retrieve` or "
    "`list_files` it first and send the complete updated content. Unchanged content costs nothing."
)
LIST_FILES = (
    "List stored memory and skill files (one page; pass `next_cursor` back as `cursor` for more). Call it "
    "to see which topics exist before adding to one, or when the user asks what is remembered."
)
FORGET = (
    "Delete one memory or skill file and everything indexed from it. Call it only when the user asks to "
    "forget something or a file is plainly wrong or obsolete."
)


class _Backend:
    """The configured backend, opened on first use and closed at exit."""

    def __init__(self) -> None:
        self._backend: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._backend is None:
                from memu_core._compose import open_backend

                self._backend = open_backend()
                atexit.register(self.close)
            return self._backend

    def close(self) -> None:
        with self._lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None


INSTALL_LINE = "pip install 'memu-core[mcp]'"
"""memu's own extra for the MCP SDK (2.x), the line every hint names."""
SDK_MISSING = f"`memu mcp` needs the MCP SDK 2.x, which is not installed: run `{INSTALL_LINE}`"


def sdk_installed() -> bool:
    """Whether the MCP SDK 2.x that ``memu mcp`` serves with can be imported."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        return False
    return True


def build_server(backend_provider: Any = None) -> Any:
    """The ``MCPServer`` with memu's four tools (``backend_provider()`` returns the backend)."""
    from memu_core.errors import ConfigError, MemuError

    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise ConfigError(SDK_MISSING) from None

    backends = _Backend() if backend_provider is None else None
    provide = backend_provider or backends.get  # type: ignore[union-attr]
    server = MCPServer(name="memu", instructions=INSTRUCTIONS)

    def call(fn: Any) -> Any:
        try:
            return fn(provide())
        except MemuError as exc:
            # The agent sees one actionable line, never a traceback.
            raise ToolError(str(exc)) from exc

    @server.tool(name="retrieve", description=RETRIEVE)
    def retrieve(query: str, top_k: int = 5, track: str | None = None) -> dict[str, Any]:
        from memu_core._retrieve_output import shape_for_agent

        tracks = [track] if track else None
        return shape_for_agent(call(lambda b: b.progressive_retrieve(query, None, top_k=top_k, tracks=tracks)))

    @server.tool(name="remember", description=REMEMBER)
    def remember(name: str, content: str, description: str = "", track: str = "memory") -> dict[str, Any]:
        from memu_core.names import check_name, check_track

        record = {"name": name, "content": content, "description": description, "track": track or "memory"}
        try:  # the rules of every door, before the backend (a remote one may not check them)
            check_name(name, "remember")
            check_track(track, "remember")
        except MemuError as exc:
            raise ToolError(str(exc)) from exc
        result = call(lambda b: b.commit_results(recall_files=[record]))
        stored = result.get("recall_files") or []
        return {
            "stored": [{"track": f["track"], "name": f["name"]} for f in stored],
            "stats": result.get("stats"),
        }

    @server.tool(name="list_files", description=LIST_FILES)
    def list_files(cursor: str | None = None, limit: int = 50, track: str | None = None) -> dict[str, Any]:
        page = call(lambda b: b.list_all_recall_files(None, cursor=cursor, limit=limit))
        files = [
            {"track": f["track"], "name": f["name"], "description": f.get("description") or ""}
            for f in page["recall_files"]
            if track is None or f["track"] == track
        ]
        return {"recall_files": files, "next_cursor": page.get("next_cursor")}

    @server.tool(name="forget", description=FORGET)
    def forget(name: str, track: str = "memory") -> dict[str, Any]:
        result = call(lambda b: b.forget(name, track=track or "memory"))
        return {"forgotten": [{"track": f["track"], "name": f["name"]} for f in result["forgotten"]]}

    return server


def run_stdio() -> None:
    """``memu mcp``: serve on stdin/stdout until the client closes the session."""
    build_server().run("stdio")
