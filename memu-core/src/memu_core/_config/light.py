"""The few settings a lexical ``retrieve`` needs, read without pydantic.

The per-turn path runs as a fresh process, where importing pydantic-settings alone costs more
than the whole search. :func:`light_settings` reads the same variables through the stdlib
resolver with the same defaults; whenever a command needs anything more (an API key, cloud
mode, a value that does not validate), callers fall back to :func:`memu_core.settings.load_settings`,
which also produces the proper error. A test keeps both readings equal.
"""

from __future__ import annotations

from memu_core._config import resolve
from memu_core._config.dsn import normalise_db
from memu_core._value import Frozen


class LightSettings(Frozen):
    """The fields of :class:`~memu_core.settings.Settings` the local read path uses."""

    __slots__ = (
        "agent_id",
        "db",
        "embed_model",
        "embed_provider",
        "history_keep",
        "llm_provider",
        "memory_mode",
        "user_id",
    )
    _fields = (
        "db",
        "memory_mode",
        "embed_provider",
        "llm_provider",
        "embed_model",
        "user_id",
        "agent_id",
        "history_keep",
    )
    db: str
    memory_mode: str
    embed_provider: str | None
    llm_provider: str | None
    embed_model: str | None
    user_id: str
    agent_id: str
    history_keep: int

    def __init__(
        self,
        db: str,
        memory_mode: str,
        embed_provider: str | None,
        llm_provider: str | None,
        embed_model: str | None,
        user_id: str,
        agent_id: str,
        history_keep: int,
    ) -> None:
        self._init(db, memory_mode, embed_provider, llm_provider, embed_model, user_id, agent_id, history_keep)


def light_settings() -> LightSettings | None:
    """The local read-path settings, or ``None`` when the full model must decide (cloud mode or
    a value the light reading cannot vouch for)."""
    mode = (resolve.lookup("MEMU_MEMORY_MODE") or "local").strip().lower()
    if mode != "local":
        return None
    keep = (resolve.lookup("MEMU_HISTORY_KEEP") or "20").strip() or "20"
    if not keep.isdigit():
        return None  # the full model says what is wrong with it
    return LightSettings(
        db=normalise_db(resolve.lookup("MEMU_DB") or ""),
        memory_mode=mode,
        embed_provider=_optional("MEMU_EMBED_PROVIDER"),
        llm_provider=_optional("MEMU_LLM_PROVIDER"),
        embed_model=_optional("MEMU_EMBED_MODEL"),
        user_id=(resolve.lookup("MEMU_USER_ID") or "default").strip() or "default",
        agent_id=(resolve.lookup("MEMU_AGENT_ID") or "default").strip() or "default",
        history_keep=int(keep),
    )


def _optional(name: str) -> str | None:
    value = resolve.lookup(name)
    return value.strip() or None if value is not None else None
