"""Reading memu settings without depending on how they are built.

``memu_core.settings.Settings`` resolves the environment and ``~/.memu/config.env``; when a
caller passes ``None`` (a script, a test) the process environment is read directly.
"""

from __future__ import annotations

import os
from typing import Any


def setting(settings: Any, attr: str, env: str, default: Any = None) -> Any:
    """``settings.<attr>`` when set, else the ``env`` variable when non-empty, else ``default``.

    A pydantic ``SecretStr`` is unwrapped; an empty string counts as unset (memU's rule).
    """
    value = getattr(settings, attr, None) if settings is not None else None
    if value is not None and hasattr(value, "get_secret_value"):
        value = value.get_secret_value()
    if value is None or value == "":
        value = os.environ.get(env) or None
    return default if value is None else value


def int_setting(settings: Any, attr: str, env: str, default: int, *, minimum: int = 1) -> int:
    """An integer setting at least ``minimum``; a bad value is a ``ConfigError`` naming ``env``."""
    from memu_core.errors import ConfigError

    raw = setting(settings, attr, env, default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{env}={raw!r} is not an integer: set it to a whole number >= {minimum}") from None
    if value < minimum:
        raise ConfigError(f"{env}={value} is too small: set it to a whole number >= {minimum}")
    return value


def float_setting(settings: Any, attr: str, env: str, default: float) -> float:
    """A positive number of seconds; a bad value is a ``ConfigError`` naming ``env``."""
    from memu_core.errors import ConfigError

    raw = setting(settings, attr, env, default)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{env}={raw!r} is not a number: set it to seconds, e.g. 60") from None
    if value <= 0:
        raise ConfigError(f"{env}={value} must be positive: set it to seconds, e.g. 60")
    return value
