"""``memu mcp install``: round trips on real config files in a temp HOME, idempotent, the rest kept."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from memu_core._mcp.install import install_for_host, memu_command
from memu_core.errors import UsageError


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path


@pytest.mark.parametrize(("host", "rel"), [("claude-code", ".claude.json"), ("cursor", ".cursor/mcp.json")])
def test_json_hosts_round_trip_keeping_other_settings(home: Path, host: str, rel: str) -> None:
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    original = {
        "theme": "dark",
        "mcpServers": {"other": {"command": "x", "args": []}},
        "projects": {"/a": {"k": 1}},
    }
    path.write_text(json.dumps(original, indent=2), encoding="utf-8")

    assert install_for_host(host).startswith("added memu to")
    data = json.loads(path.read_text())
    assert data["mcpServers"]["memu"]["args"] == ["mcp"]
    assert data["mcpServers"]["memu"]["command"] == memu_command()[0]
    assert data["mcpServers"]["other"] == original["mcpServers"]["other"]
    assert data["theme"] == "dark" and data["projects"] == original["projects"]
    once = path.read_bytes()
    assert install_for_host(host).startswith("memu is already configured")
    assert path.read_bytes() == once

    assert install_for_host(host, remove=True).startswith("removed memu from")
    assert json.loads(path.read_text()) == original
    assert install_for_host(host, remove=True).startswith("memu was not configured")


def test_json_host_without_a_file_creates_one(home: Path) -> None:
    install_for_host("cursor")
    assert json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["memu"]["args"] == ["mcp"]


def test_broken_json_is_refused_untouched(home: Path) -> None:
    path = home / ".claude.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        install_for_host("claude-code")
    assert path.read_text() == "{not json"


CODEX = """# my codex settings
model = "o4-mini"

[mcp_servers.other]
command = "other-server"
args = ["--flag"]

[profiles.fast]
model = "gpt-4.1"
"""


def test_codex_toml_round_trip_keeps_comments_and_tables(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX, encoding="utf-8")
    install_for_host("codex")
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memu"] == {"command": memu_command()[0], "args": ["mcp"]}
    assert data["mcp_servers"]["other"]["args"] == ["--flag"] and data["profiles"]["fast"]["model"] == "gpt-4.1"
    assert text.startswith("# my codex settings\n")
    install_for_host("codex")
    assert path.read_text() == text
    install_for_host("codex", remove=True)
    assert path.read_text() == CODEX


def test_codex_home_is_honoured_and_unknown_hosts_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(home / "elsewhere"))
    install_for_host("codex")
    assert "memu" in tomllib.loads((home / "elsewhere" / "config.toml").read_text())["mcp_servers"]
    with pytest.raises(UsageError, match="claude-code, cursor, codex"):
        install_for_host("vscode")


def test_cli_install_and_remove(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_core._cli.app import build_app
    from memu_core._cli.main import run_app

    assert run_app(lambda: build_app(with_plugins=False), ["mcp", "install", "--host", "cursor"]) == 0
    assert "added memu to" in capsys.readouterr().out
    assert run_app(lambda: build_app(with_plugins=False), ["mcp", "install", "--host", "cursor", "--remove"]) == 0
    assert "removed memu from" in capsys.readouterr().out


def test_install_refuses_when_the_mcp_sdk_is_missing_and_names_memus_extra(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memu_core._cli.main import MEMU
    from memu_core._cli.shell import run

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # the SDK is not installed: importing it fails
    assert run(MEMU, ["mcp", "install", "--host", "cursor"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'memu-core[mcp]'" in err[0] and "mcp>=2" not in err[0], err
    assert not (home / ".cursor" / "mcp.json").exists()  # nothing registered that cannot start
