"""The hot-path resolver: precedence, caching, NO_PROXY passthrough, import weight."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core._config import resolve


def test_config_path_default_and_override(cfg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve.config_path() == cfg_home / ".memu" / "config.env"
    monkeypatch.setenv("MEMU_CONFIG_ENV", "~/elsewhere.env")
    assert resolve.config_path() == cfg_home / "elsewhere.env"
    monkeypatch.setenv("MEMU_CONFIG_ENV", "")
    assert resolve.config_path() == cfg_home / ".memu" / "config.env"


def test_lookup_precedence(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file.parent.mkdir()
    config_file.write_text("MEMU_DB=/from/file\nMEMU_EMPTY=\nMEMU_MODEL=m\n")
    assert resolve.lookup("MEMU_DB") == "/from/file"
    assert resolve.lookup("MEMU_MISSING", "dflt") == "dflt"
    assert resolve.lookup("MEMU_EMPTY", "dflt") == "dflt"  # an empty file value is unset
    monkeypatch.setenv("MEMU_DB", "/from/env")
    assert resolve.lookup("MEMU_DB") == "/from/env"
    monkeypatch.setenv("MEMU_DB", "")
    assert resolve.lookup("MEMU_DB") == "/from/file"  # an empty process value does not shadow


def test_lookup_declared_keeps_empty(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file.parent.mkdir()
    config_file.write_text("MEMU_TELEMETRY=\n")
    assert resolve.lookup_declared("MEMU_TELEMETRY", "1") == ""
    assert resolve.lookup_declared("MEMU_OTHER", "1") == "1"
    monkeypatch.setenv("MEMU_TELEMETRY", "0")
    assert resolve.lookup_declared("MEMU_TELEMETRY", "1") == "0"


def test_cache_until_reload(config_file: Path) -> None:
    config_file.parent.mkdir()
    config_file.write_text("MEMU_DB=/one\n")
    assert resolve.lookup("MEMU_DB") == "/one"
    config_file.write_text("MEMU_DB=/two\n")
    assert resolve.lookup("MEMU_DB") == "/one"
    resolve.reload()
    assert resolve.lookup("MEMU_DB") == "/two"


def test_config_env_moves_the_file(cfg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = cfg_home / "team.env"
    other.write_text("MEMU_DB=/team\n")
    assert resolve.lookup("MEMU_DB") is None
    monkeypatch.setenv("MEMU_CONFIG_ENV", str(other))
    assert resolve.lookup("MEMU_DB") == "/team"


def test_bad_lines_are_skipped_and_reported(config_file: Path) -> None:
    config_file.parent.mkdir()
    config_file.write_text("oops\nMEMU_DB=/ok\n")
    assert resolve.lookup("MEMU_DB") == "/ok"
    assert [n for n, _ in resolve.file_problems()] == [1]


def test_no_proxy_passthrough_is_set_if_absent(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file.parent.mkdir()
    config_file.write_text("NO_PROXY=localhost,127.0.0.1\nno_proxy=.internal\nHTTP_PROXY=http://p:1\n")
    monkeypatch.setenv("no_proxy", "from-shell")
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    resolve.file_values()
    assert os.environ["NO_PROXY"] == "localhost,127.0.0.1"
    assert os.environ["no_proxy"] == "from-shell"  # the process value wins
    assert "HTTP_PROXY" not in os.environ  # only the allowlist is exported


def test_resolver_import_is_light(cfg_home: Path) -> None:
    code = (
        "import sys; import memu_core._config.resolve as r; r.lookup('MEMU_DB');"
        "heavy = {'pydantic', 'pydantic_settings', 'typer', 'click', 'sqlalchemy', 'numpy', 'litellm',"
        " 'torch', 'faiss', 'structlog', 'httpx'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ)
    )
    assert result.stdout.strip() == "[]"


def test_commands_import_is_light(cfg_home: Path) -> None:
    code = (
        "import sys; import memu_core._config.commands;"
        "print(sorted({'pydantic', 'typer', 'click', 'sqlalchemy', 'numpy'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ)
    )
    assert result.stdout.strip() == "[]"
