"""Settings as the user wrote them, for an embedder that validates its own few values.

A per-turn ``retrieve`` answered in process builds the configured embedder. Building it from
:class:`memu_core.settings.Settings` imports pydantic, about 0.4 s of CPU in a fresh process,
which is most of what such a retrieve costs besides the model. An embedder class that sets
``raw_settings = True`` declares that its ``from_settings`` reads its values as optional strings
and checks them itself (memu-embed-local's does); the composition root then hands it a
:class:`RawSettings` instead. Precedence is the resolver's (process environment > config file),
the same the full model reads.
"""

from __future__ import annotations

from memu_core._config import resolve

PREFIX = "MEMU_"


class RawSettings:
    """Attribute ``x`` is ``MEMU_X`` resolved and stripped, or ``None`` when unset or empty."""

    def __getattr__(self, name: str) -> str | None:
        if name.startswith("_"):
            raise AttributeError(name)
        value = resolve.lookup(PREFIX + name.upper())
        return (value.strip() or None) if value is not None else None


def builds_from_raw(cls: object) -> bool:
    """Whether embedder class ``cls`` declares that it builds from :class:`RawSettings`."""
    return getattr(cls, "raw_settings", False) is True
