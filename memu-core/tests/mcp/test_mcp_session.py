"""``memu mcp`` driven by the official SDK's client over stdio: a real subprocess, a real store."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="memu mcp needs the mcp SDK 2.x (pip install 'memu-core[mcp]')")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update({"HOME": str(home), "MEMU_EMBED_PROVIDER": "none", "MEMU_SERVE_AUTOSTART": "0", "HF_HUB_OFFLINE": "1"})
    return env


def _payload(result: Any) -> Any:
    assert not result.is_error, result
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _session(home: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memu_core._cli.main", "mcp"], env=_env(home), cwd=str(home)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        seen["instructions"] = init.instructions
        tools = await session.list_tools()
        seen["tools"] = {t.name: t for t in tools.tools}
        seen["remember"] = _payload(
            await session.call_tool(
                "remember",
                {"name": "profile", "content": "- drinks green tea\n- lives in Berlin", "description": "who"},
            )
        )
        seen["retrieve"] = _payload(await session.call_tool("retrieve", {"query": "green tea", "top_k": 2}))
        seen["list"] = _payload(await session.call_tool("list_files", {}))
        seen["forget"] = _payload(await session.call_tool("forget", {"name": "profile"}))
        seen["after"] = _payload(await session.call_tool("list_files", {}))
        seen["bad"] = await session.call_tool("retrieve", {"query": "   "})
    return seen


def test_mcp_client_session_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    seen = asyncio.run(_session(home))
    assert set(seen["tools"]) == {"retrieve", "remember", "list_files", "forget"}
    for tool in seen["tools"].values():
        assert "Call" in (tool.description or ""), tool.name  # each says when to call it
    assert "retrieve" in (seen["instructions"] or "")
    assert seen["remember"]["stored"] == [{"track": "memory", "name": "profile"}]
    assert seen["retrieve"]["segments"][0]["text"] == "- drinks green tea"
    assert seen["retrieve"]["segments"][0]["source_file"] == "memory/profile"
    assert [f["name"] for f in seen["list"]["recall_files"]] == ["profile"]
    assert seen["forget"]["forgotten"] == [{"track": "memory", "name": "profile"}]
    assert seen["after"]["recall_files"] == []
    assert seen["bad"].is_error and "empty query" in seen["bad"].content[0].text
