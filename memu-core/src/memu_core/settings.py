"""Typed settings for memu: every ``MEMU_*`` variable, validated once.

Precedence is the same as the hot-path resolver (:mod:`memu_core._config.resolve`): process
environment > ``~/.memu/config.env`` (or ``$MEMU_CONFIG_ENV``) > default, and an empty value on
either level counts as unset. The file is read by memu's own dotenv reader, not python-dotenv, so
a guard, a lookup and a Settings object can never disagree about what the file says.

Use :func:`load_settings`; it turns a validation failure into one :class:`ConfigError` line.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from memu_core._config import resolve
from memu_core._config.defaults import DEFAULT_CLOUD_BASE_URL
from memu_core._config.dsn import normalise_db, redact_dsn
from memu_core._layout import DEFAULT_DB, models_dir, plugin_dir
from memu_core.errors import ConfigError

__all__ = [
    "DEFAULT_CLOUD_BASE_URL",
    "DEFAULT_DB",
    "Settings",
    "load_settings",
    "models_dir",
    "plugin_dir",
    "redact_dsn",
]

ENV_PREFIX = "MEMU_"

# Read from the process only: a debug switch left in a shared file would turn every host's
# one-line errors into tracebacks.
_ENV_ONLY = frozenset({"debug"})
# A declared empty value wins over the default here, because empty means "off".
_DECLARED = frozenset({"telemetry"})
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

# What to tell the user when a field's value is rejected.
_FIXES: dict[str, str] = {
    "memory_mode": "set it to local or cloud (or run `config --local` or `config --cloud`)",
    "embed_batch_size": "set MEMU_EMBED_BATCH_SIZE to a whole number of at least 1",
    "embed_concurrency": "set MEMU_EMBED_CONCURRENCY to a whole number of at least 1",
    "embed_timeout": "set MEMU_EMBED_TIMEOUT to a number of seconds greater than 0",
    "serve_idle": "set MEMU_SERVE_IDLE to a number of seconds (0 or more)",
    "serve_autostart": "set MEMU_SERVE_AUTOSTART to 1 or 0",
    "telemetry": "set MEMU_TELEMETRY to 1 (on) or 0 (off)",
    "debug": "set MEMU_DEBUG to 1 or unset it",
    "history_keep": "set MEMU_HISTORY_KEEP to a whole number of versions (0 turns history off)",
}
_SECRET_FIELDS = frozenset({"api_key", "cloud_api_key"})


def _env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


class _ProcessEnvSource(PydanticBaseSettingsSource):
    """``MEMU_*`` values from ``os.environ``; empty values are skipped except for declared fields."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Return the raw process value of one field (pydantic-settings protocol)."""
        name = _env_name(field_name)
        value = os.environ.get(name)
        if value is None or (value == "" and field_name not in _DECLARED):
            return None, field_name, False
        return value, field_name, False

    def __call__(self) -> dict[str, Any]:
        return _collect(self)


class _ConfigFileSource(PydanticBaseSettingsSource):
    """``MEMU_*`` values from the config file, through memu's dotenv reader."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        self._values = resolve.file_values()

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Return the raw file value of one field (pydantic-settings protocol)."""
        if field_name in _ENV_ONLY:
            return None, field_name, False
        value = self._values.get(_env_name(field_name))
        if value is None or (value == "" and field_name not in _DECLARED):
            return None, field_name, False
        return value, field_name, False

    def __call__(self) -> dict[str, Any]:
        return _collect(self)


def _collect(source: PydanticBaseSettingsSource) -> dict[str, Any]:
    """Every field ``source`` has a value for (the one loop both sources share)."""
    out: dict[str, Any] = {}
    for field_name, field in source.settings_cls.model_fields.items():
        value, _, _ = source.get_field_value(field, field_name)
        if value is not None:
            out[field_name] = value
    return out


def _flag(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("expected 1/0, true/false, yes/no or on/off")
    return value


class Settings(BaseSettings):
    """Every ``MEMU_*`` setting. Field ``x`` is read from ``MEMU_X``."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    db: str = Field(
        default=DEFAULT_DB,
        validate_default=True,
        description="Local store: path, sqlite URL, :memory: or Postgres DSN.",
    )
    memory_mode: Literal["local", "cloud"] = Field(default="local", description="local engine or cloud API.")
    embed_provider: str | None = Field(default=None, description="Embedding provider id; None = auto.")
    llm_provider: str | None = Field(default=None, description="Legacy name of MEMU_EMBED_PROVIDER.")
    embed_model: str | None = Field(default=None, description="Embedding model; None = provider default.")
    embed_device: str | None = Field(default=None, description="Local embedder device (cpu, cuda, mps).")
    embed_runtime: str | None = Field(
        default=None, description="Local embedder runtime (onnx or torch); None = onnx when installed."
    )
    api_key: SecretStr | None = Field(default=None, description="Embedding provider key (never the cloud key).")
    base_url: str | None = Field(default=None, description="Embedding endpoint (never the cloud endpoint).")
    embed_batch_size: int = Field(default=64, ge=1, description="Texts per embedding request.")
    embed_concurrency: int = Field(default=4, ge=1, description="Embedding requests in flight.")
    embed_timeout: float = Field(default=60.0, gt=0, description="Seconds per embedding request.")
    http_proxy: str | None = Field(default=None, description="Proxy for memu's own HTTP traffic.")
    cloud_api_key: SecretStr | None = Field(default=None, description="memU Cloud / memu-server key.")
    cloud_base_url: str = Field(default=DEFAULT_CLOUD_BASE_URL, description="Full v4 memory API base URL.")
    client_id: str | None = Field(default=None, description="Random per-machine id (minted by init).")
    telemetry: bool = Field(default=False, description="Opt-in telemetry; empty or 0 means off.")
    user_id: str = Field(default="default", description="Default scope user.")
    agent_id: str = Field(default="default", description="Default scope agent.")
    history_keep: int = Field(default=20, ge=0, description="Past versions kept per recall file; 0 turns history off.")
    serve_autostart: bool = Field(default=True, description="Start `memu serve` on demand.")
    serve_idle: float = Field(default=1800.0, ge=0, description="Seconds before an idle server exits.")
    debug: bool = Field(default=False, description="Tracebacks instead of one-line errors (env only).")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit arguments > process environment > config file > defaults."""
        return init_settings, _ProcessEnvSource(settings_cls), _ConfigFileSource(settings_cls)

    @field_validator("memory_mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("db", mode="before")
    @classmethod
    def _db(cls, value: Any) -> Any:
        return normalise_db(value) if isinstance(value, str) else value

    @field_validator("telemetry", "serve_autostart", "debug", mode="before")
    @classmethod
    def _flags(cls, value: Any) -> Any:
        return _flag(value)

    @field_validator(
        "embed_provider",
        "llm_provider",
        "embed_model",
        "embed_device",
        "embed_runtime",
        "base_url",
        "http_proxy",
        "client_id",
        mode="before",
    )
    @classmethod
    def _trimmed(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip() or None
        return value

    def __repr_args__(self) -> Any:
        # A Postgres DSN can carry a password; a logged Settings must not.
        for name, value in super().__repr_args__():
            yield name, (redact_dsn(value) if name == "db" and isinstance(value, str) else value)

    @property
    def provider(self) -> str | None:
        """The embedding provider to use: ``MEMU_EMBED_PROVIDER``, else the legacy ``MEMU_LLM_PROVIDER``."""
        return self.embed_provider or self.llm_provider


def load_settings(**overrides: Any) -> Settings:
    """Build a fresh :class:`Settings` (re-reading the config file); raise one-line ConfigError on bad input.

    ``overrides`` (field names) win over everything, e.g. a command-line ``--db``.
    """
    resolve.reload()
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise _config_error(exc) from None


def _config_error(exc: ValidationError) -> ConfigError:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "?"
    name = _env_name(field)
    reason = error["msg"]
    if reason.startswith("Value error, "):
        reason = reason[len("Value error, ") :]
    fix = _FIXES.get(field, f"fix or unset {name}")
    if field in _SECRET_FIELDS:
        return ConfigError(f"{name}: invalid value ({reason}); {fix}")
    shown = error.get("input")
    if isinstance(shown, str):
        shown = redact_dsn(shown)
    return ConfigError(f"{name}={shown!r} is invalid ({reason}); {fix}")
