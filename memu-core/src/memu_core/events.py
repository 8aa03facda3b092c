"""What an :class:`~memu_core.interfaces.EventSink` receives, and the switches that govern it.

The public face of memu's events, for sink plugins (memu-telemetry) and readers of the catalogue:

- :data:`CATALOGUE`: every event name, who reports it, and the only properties it may carry (an
  allow-list: counts and durations; never a query, a path, a file name or content);
- :func:`telemetry_on`, :func:`opted_out`: the user's switches (``MEMU_TELEMETRY``,
  ``DO_NOT_TRACK``); :func:`endpoint`: where a sink may send (``MEMU_EVENTS_BASE_URL``, no
  default: nothing is sent until it is set);
- :func:`spool_path`, :func:`companion`: where a sink keeps what it has not sent yet;
- :func:`make_event`: the one place an :class:`~memu_core.types.Event` is built (envelope
  fields, context, the allow-list applied).

Stdlib only and nothing heavy at import: the per-turn ``retrieve`` may ask it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core import _eventline, _layout
from memu_core._config import resolve
from memu_core._config import telemetry as switches

if TYPE_CHECKING:
    from memu_core.types import Event

__all__ = [
    "AGENT",
    "CATALOGUE",
    "CODE",
    "MAX_SPOOL_BYTES",
    "STAGES",
    "api_key",
    "append_line",
    "client_version",
    "companion",
    "endpoint",
    "make_event",
    "opted_out",
    "spool_path",
    "telemetry_on",
]

TELEMETRY_ENV = switches.TELEMETRY_ENV
ENDPOINT_ENV = switches.ENDPOINT_ENV
CLIENT_ID_ENV = "MEMU_CLIENT_ID"
DO_NOT_TRACK_ENV = switches.DO_NOT_TRACK_ENV

CODE = _eventline.CODE
"""``reported_by`` of an event memu's code observed."""
AGENT = _eventline.AGENT
"""``reported_by`` of an event an agent reported with a ``report`` verb."""

CATALOGUE: dict[str, tuple[str, tuple[str, ...]]] = _eventline.CATALOGUE
"""Event name → (``reported_by``, the properties it may carry). A property not listed is dropped
before any sink sees it; an unknown name carries none."""

STAGES = ("install", "uninstall", "remember", "retrieve", "other")
"""The stages ``report error --stage`` accepts."""

MAX_SPOOL_BYTES = _eventline.MAX_SPOOL_BYTES
"""A spool takes no line once it holds this much (the line that crosses it is kept)."""


def opted_out() -> bool:
    """The user said no: ``MEMU_TELEMETRY`` is ``0/false/no/off`` or ``DO_NOT_TRACK`` is set to
    ``1/true/yes/on``. Then no sink receives anything, whatever else is configured."""
    return switches.opted_out()


def telemetry_on() -> bool:
    """The user said yes (``MEMU_TELEMETRY=1`` in the environment or config.env) and did not
    opt out. Telemetry is off by default."""
    return switches.telemetry_on()


def endpoint() -> str | None:
    """``MEMU_EVENTS_BASE_URL``: the URL events are POSTed to; ``None`` when unset (nothing is sent)."""
    return switches.endpoint()


def api_key() -> str:
    """``MEMU_CLOUD_API_KEY``: sent as the bearer key (memu-server's scoped keys), when set."""
    return (resolve.lookup("MEMU_CLOUD_API_KEY", "") or "").strip()


def client_version() -> str:
    """memu-core's version, as the envelope's ``client_version`` and the ``User-Agent`` say it."""
    from memu_core._version import version

    return version()


def spool_path() -> Path:
    """The spool: ``~/.memu/events.jsonl``, or ``MEMU_EVENTS_SPOOL``."""
    return _layout.events_spool()


def companion(suffix: str) -> Path:
    """A file beside the spool: ``dropped`` (drop counter), ``errors`` (report ledger)."""
    return _layout.events_companion(suffix)


def agent_platform(host: str) -> str:
    """The host id as memU's ingest names it (``claude-code`` → ``claude_code``); ``none`` for ``memu``."""
    return _eventline.agent_platform(host)


def append_line(line: bytes) -> bool:
    """Append one envelope's JSON line to the spool, within its cap; ``False`` (and the drop
    counter raised) when it was lost. The warm turn's light client writes through the same code."""
    return _eventline.append_line(str(spool_path()), str(companion("dropped")), line)


def _client_id() -> str:
    """``MEMU_CLIENT_ID``; minted into config.env only when telemetry is on and none exists."""
    existing = (resolve.lookup(CLIENT_ID_ENV, "") or "").strip()
    if existing or not telemetry_on():
        return existing
    minted = _eventline.uuid4()
    try:
        from memu_core._config import dotenv

        dotenv.write_values(resolve.config_path(), {CLIENT_ID_ENV: minted})
        resolve.reload()
    except OSError:
        return minted  # an unwritable config still gets a stable id for this process
    return (resolve.lookup(CLIENT_ID_ENV, "") or "").strip() or minted


def make_event(
    name: str,
    properties: Mapping[str, object] | None = None,
    *,
    host: str = "",
    session_env: str = "",
) -> Event:
    """Build event ``name``: a fresh id, the time now, the context, and only the allowed properties.

    ``session_env`` names the variable the host exports its session id in; the id is included
    only when that variable is set (never empty, never invented).
    """
    from memu_core.types import Event, utcnow

    reported_by, kept = _eventline.allowed(name, dict(properties or {}))
    session = os.environ.get(session_env, "") if session_env else ""
    context = _eventline.context(
        version=client_version(),
        host=host,
        mode=resolve.lookup("MEMU_MEMORY_MODE", "") or "",
        reported_by=reported_by,
        session=session,
    )
    return Event(name, utcnow(), kept, host, _eventline.uuid4(), _client_id(), context)
