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
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core import _layout
from memu_core._config import resolve
from memu_core._config import telemetry as switches

if TYPE_CHECKING:
    from memu_core.types import Event, EventValue

__all__ = [
    "AGENT",
    "CATALOGUE",
    "CODE",
    "STAGES",
    "api_key",
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

CODE = "code"
"""``reported_by`` of an event memu's code observed."""
AGENT = "agent"
"""``reported_by`` of an event an agent reported with a ``report`` verb."""

_COUNTS = ("recall_file_count", "resource_count", "session_count")

CATALOGUE: dict[str, tuple[str, tuple[str, ...]]] = {
    "memory_search_succeeded": (CODE, ("result_count", "latency_ms")),
    "memory_search_failed": (CODE, ("result_count", "latency_ms")),
    "memory_list_succeeded": (CODE, ("result_count", "latency_ms")),
    "memory_list_failed": (CODE, ("result_count", "latency_ms")),
    "memory_commit_succeeded": (CODE, (*_COUNTS, "latency_ms")),
    "memory_commit_failed": (CODE, (*_COUNTS, "latency_ms")),
    "memory_update_started": (CODE, ()),
    "memory_update_succeeded": (CODE, (*_COUNTS, "duration_ms")),
    "memory_update_failed": (AGENT, ()),
    "cli_install_started": (CODE, ()),
    "install_guide_opened": (CODE, ()),
    "uninstall_guide_opened": (CODE, ()),
    "cli_install_succeeded": (AGENT, ()),
    "cli_install_failed": (AGENT, ()),
    "cli_uninstall_succeeded": (AGENT, ()),
    "cli_uninstall_failed": (AGENT, ()),
    "agent_error_reported": (AGENT, ("stage", "detail")),
    "cli_error": (CODE, ("command", "error_type", "frames", "frames_truncated")),
    "cli_events_dropped": (CODE, ("dropped_count",)),
}
"""Event name → (``reported_by``, the properties it may carry). A property not listed is dropped
before any sink sees it; an unknown name carries none."""

STAGES = ("install", "uninstall", "remember", "retrieve", "other")
"""The stages ``report error --stage`` accepts."""

_PLATFORMS = {"claude-code": "claude_code", "agent": "generic", "generic": "generic"}
_OSES = {"darwin": "macos", "win32": "windows", "linux": "linux"}


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
    if not host:
        return "none"
    return _PLATFORMS.get(host, host.replace("-", "_"))


def _uuid4() -> str:
    # The uuid module costs an import on the per-turn path; a version-4 UUID is 122 random bits.
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _client_id() -> str:
    """``MEMU_CLIENT_ID``; minted into config.env only when telemetry is on and none exists."""
    existing = (resolve.lookup(CLIENT_ID_ENV, "") or "").strip()
    if existing or not telemetry_on():
        return existing
    minted = _uuid4()
    try:
        from memu_core._config import dotenv

        dotenv.write_values(resolve.config_path(), {CLIENT_ID_ENV: minted})
        resolve.reload()
    except OSError:
        return minted  # an unwritable config still gets a stable id for this process
    return (resolve.lookup(CLIENT_ID_ENV, "") or "").strip() or minted


def _clean(value: object) -> EventValue:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


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

    reported_by, allowed = CATALOGUE.get(name, (CODE, ()))
    kept = {key: _clean(value) for key, value in (properties or {}).items() if key in allowed}
    mode = (resolve.lookup("MEMU_MEMORY_MODE", "") or "local").strip().lower()
    context = {
        "client_version": client_version(),
        "agent_platform": agent_platform(host),
        "os": _OSES.get(sys.platform, "other"),
        "deployment_mode": mode if mode in ("local", "cloud") else "other",
        "reported_by": reported_by,
    }
    session = os.environ.get(session_env, "").strip() if session_env else ""
    if session:
        context["session_id"] = session
    return Event(name, utcnow(), kept, host, _uuid4(), _client_id(), context)
