"""Settings: process env > config file > defaults, validation as one-line ConfigErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core.errors import ConfigError
from memu_core.settings import DEFAULT_CLOUD_BASE_URL, load_settings, redact_dsn


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_defaults(cfg_home: Path) -> None:
    s = load_settings()
    assert s.db == str(cfg_home / ".memu" / "memu.sqlite3")
    assert s.memory_mode == "local"
    assert s.embed_provider is None and s.provider is None
    assert (s.embed_batch_size, s.embed_concurrency, s.embed_timeout) == (64, 4, 60.0)
    assert s.cloud_base_url == DEFAULT_CLOUD_BASE_URL
    assert (s.user_id, s.agent_id) == ("default", "default")
    assert s.serve_autostart is True and s.serve_idle == 1800
    assert s.telemetry is False and s.debug is False
    assert s.api_key is None and s.cloud_api_key is None


@pytest.mark.parametrize(
    ("file_value", "env_value", "expected"),
    [
        (None, None, "default"),
        ("from-file", None, "from-file"),
        ("from-file", "from-env", "from-env"),
        ("from-file", "", "from-file"),  # an empty env var does not shadow the file
        ("", None, "default"),
        (None, "from-env", "from-env"),
    ],
)
def test_precedence(
    config_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    file_value: str | None,
    env_value: str | None,
    expected: str,
) -> None:
    if file_value is not None:
        _write(config_file, f"MEMU_USER_ID={file_value}\n")
    if env_value is not None:
        monkeypatch.setenv("MEMU_USER_ID", env_value)
    assert load_settings().user_id == expected


def test_config_env_moves_the_file(cfg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(cfg_home / ".memu" / "config.env", "MEMU_EMBED_MODEL=home-model\n")
    _write(cfg_home / "team.env", "MEMU_EMBED_MODEL=team-model\n")
    assert load_settings().embed_model == "home-model"
    monkeypatch.setenv("MEMU_CONFIG_ENV", str(cfg_home / "team.env"))
    assert load_settings().embed_model == "team-model"


def test_file_uses_memu_reader_rules(config_file: Path) -> None:
    _write(
        config_file,
        "export MEMU_EMBED_PROVIDER=local  # inline comment\n"
        "MEMU_API_KEY=\"sk-'quoted'\"\n"
        "MEMU_EMBED_BATCH_SIZE=16\n"
        "MEMU_SERVE_AUTOSTART=off\n"
        "MEMU_MEMORY_MODE= Cloud \n"
        "MEMU_EMBED_DEVICE=cpu\n",
    )
    s = load_settings()
    assert s.embed_provider == "local"
    assert s.api_key is not None and s.api_key.get_secret_value() == "sk-'quoted'"
    assert s.embed_batch_size == 16
    assert s.serve_autostart is False
    assert s.memory_mode == "cloud"
    assert s.embed_device == "cpu"


def test_overrides_win(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(config_file, "MEMU_DB=/file.sqlite3\n")
    monkeypatch.setenv("MEMU_DB", "/env.sqlite3")
    assert load_settings(db=":memory:").db == ":memory:"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (":memory:", ":memory:"),
        ("sqlite:////abs/x.db", "sqlite:////abs/x.db"),
        ("postgres://u@h/db", "postgres://u@h/db"),
        ("postgresql://u:p@h:5432/db", "postgresql://u:p@h:5432/db"),
        ("postgresql+psycopg://u:p@h/db", "postgresql+psycopg://u:p@h/db"),
        ("~/stores/m.sqlite3", "{home}/stores/m.sqlite3"),
        # Relative forms are made absolute against the current folder, so every process agrees.
        ("rel/m.sqlite3", "{cwd}/rel/m.sqlite3"),
        ("./m.sqlite3", "{cwd}/m.sqlite3"),
        ("sqlite:///rel/x.db", "sqlite:///{cwd}/rel/x.db"),
    ],
)
def test_db_forms(cfg_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, raw: str, expected: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMU_DB", raw)
    assert load_settings().db == expected.format(home=cfg_home, cwd=Path.cwd())


def test_llm_provider_is_a_fallback(cfg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_LLM_PROVIDER", "openai")
    assert load_settings().provider == "openai"
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "local")
    assert load_settings().provider == "local"


def test_declared_empty_telemetry_is_off(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(config_file, "MEMU_TELEMETRY=1\n")
    assert load_settings().telemetry is True
    monkeypatch.setenv("MEMU_TELEMETRY", "")
    assert load_settings().telemetry is False


def test_debug_is_read_from_the_process_only(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(config_file, "MEMU_DEBUG=1\n")
    assert load_settings().debug is False
    monkeypatch.setenv("MEMU_DEBUG", "1")
    assert load_settings().debug is True


@pytest.mark.parametrize(
    ("name", "value", "needles"),
    [
        ("MEMU_MEMORY_MODE", "remote", ["MEMU_MEMORY_MODE", "'remote'", "local or cloud"]),
        ("MEMU_EMBED_BATCH_SIZE", "0", ["MEMU_EMBED_BATCH_SIZE", "'0'", "at least 1"]),
        ("MEMU_EMBED_CONCURRENCY", "many", ["MEMU_EMBED_CONCURRENCY", "'many'"]),
        ("MEMU_EMBED_TIMEOUT", "-1", ["MEMU_EMBED_TIMEOUT", "greater than 0"]),
        ("MEMU_SERVE_AUTOSTART", "perhaps", ["MEMU_SERVE_AUTOSTART", "1 or 0"]),
    ],
)
def test_bad_values_are_one_line_config_errors(
    cfg_home: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, needles: list[str]
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_bad_value_from_the_file_is_reported(config_file: Path) -> None:
    _write(config_file, "MEMU_MEMORY_MODE=hybrid\n")
    with pytest.raises(ConfigError, match="MEMU_MEMORY_MODE='hybrid'"):
        load_settings()


def test_secrets_stay_hidden(cfg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_DB", "postgresql://me:hunter2@db.local/memu")
    monkeypatch.setenv("MEMU_API_KEY", "sk-secret-1")
    monkeypatch.setenv("MEMU_CLOUD_API_KEY", "cloud-secret-2")
    shown = repr(load_settings()) + str(load_settings())
    for secret in ("hunter2", "sk-secret-1", "cloud-secret-2"):
        assert secret not in shown
    assert "me:***@db.local" in shown


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
        ("postgresql+psycopg://u:p%40ss@h:5432/db", "postgresql+psycopg://u:***@h:5432/db"),
        ("postgres://u:a@b@h/db", "postgres://u:***@h/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql://h/db?user=u&password=pw", "postgresql://h/db?user=u&password=***"),
        ("/plain/path.sqlite3", "/plain/path.sqlite3"),
        (":memory:", ":memory:"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_redact_dsn(url: str, expected: str) -> None:
    assert redact_dsn(url) == expected
