"""``memu mcp install --host claude-code|cursor|codex [--remove]``: add or remove memu's entry in a
host's MCP configuration, idempotently, leaving every other setting as it was.

- Claude Code: ``~/.claude.json``, key ``mcpServers.memu`` (user scope);
- Cursor: ``~/.cursor/mcp.json``, key ``mcpServers.memu``;
- Codex: ``$CODEX_HOME/config.toml`` (default ``~/.codex``), table ``[mcp_servers.memu]``.

JSON files are re-serialised (other keys kept, order kept); the TOML file is edited as text, only
memu's own table is touched, so comments and formatting elsewhere survive. Writes are atomic.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from memu_core._atomic import write_text
from memu_core.errors import ConfigError, UsageError

HOSTS = ("claude-code", "cursor", "codex")
ENTRY = "memu"


def memu_command() -> list[str]:
    """How a host should launch ``memu mcp``: the ``memu`` next to this Python, else on PATH."""
    beside = Path(sys.executable).with_name("memu")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside), "mcp"]
    found = shutil.which("memu")
    return [found or "memu", "mcp"]


def config_path(host: str) -> Path:
    """The MCP configuration file of ``host``."""
    home = Path.home()
    if host == "claude-code":
        return home / ".claude.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    raise UsageError(f"unknown --host {host!r}: use one of {', '.join(HOSTS)}")


def _edit_json(path: Path, remove: bool) -> bool:
    data: dict[str, Any] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8-sig")
        if text.strip():
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(
                    f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it, then re-run"
                ) from None
            if not isinstance(data, dict):
                raise UsageError(f"{path} must hold a JSON object; fix it, then re-run")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise UsageError(f"{path}: mcpServers must be a JSON object; fix it, then re-run")
    servers = dict(servers or {})
    command, *args = memu_command()
    wanted = {"type": "stdio", "command": command, "args": args, "env": {}}
    if remove:
        if ENTRY not in servers:
            return False
        del servers[ENTRY]
    else:
        if servers.get(ENTRY) == wanted:
            return False
        servers[ENTRY] = wanted
    data["mcpServers"] = servers
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _edit_toml(path: Path, remove: bool) -> bool:
    import tomllib

    text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML ({exc}); fix it, then re-run") from None
    lines = text.splitlines()
    header = f"[mcp_servers.{ENTRY}]"
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    end = start
    if start is not None:
        end = start + 1
        while end < len(lines) and not lines[end].lstrip().startswith("["):
            end += 1
        # keep blank lines that separate the next table
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
    command, *args = memu_command()
    block = [
        header,
        f"command = {_toml_string(command)}",
        f"args = [{', '.join(_toml_string(a) for a in args)}]",
    ]
    if remove:
        if start is None:
            return False
        new_lines = lines[:start] + lines[end:]
        while new_lines and not new_lines[-1].strip():
            new_lines.pop()
    elif start is not None:
        if lines[start:end] == block:
            return False
        new_lines = lines[:start] + block + lines[end:]
    else:
        new_lines = list(lines)
        while new_lines and not new_lines[-1].strip():
            new_lines.pop()
        new_lines += ([""] if new_lines else []) + block
    new_text = "\n".join(new_lines) + ("\n" if new_lines else "")
    tomllib.loads(new_text)  # never write a file the host cannot read
    write_text(path, new_text)
    return True


def install_for_host(host: str, *, remove: bool = False) -> str:
    """Add (or remove) memu in ``host``'s MCP configuration; the line to print."""
    path = config_path(host)
    if not remove:
        from memu_core._mcp.server import SDK_MISSING, sdk_installed

        # A registered server that cannot start fails silently inside the host: refuse instead.
        if not sdk_installed():
            raise ConfigError(f"{SDK_MISSING}, then rerun `memu mcp install --host {host}`; {path} is unchanged")
    changed = _edit_toml(path, remove) if host == "codex" else _edit_json(path, remove)
    if remove:
        return f"removed memu from {path}" if changed else f"memu was not configured in {path}"
    return f"added memu to {path}" if changed else f"memu is already configured in {path}"
