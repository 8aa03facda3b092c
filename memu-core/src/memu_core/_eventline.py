"""The pieces of an event that the light warm client shares with :mod:`memu_core.events`.

Stdlib only (``os``, ``sys``, ``time``, ``_json``), nothing that the interpreter has not loaded by
itself: the warm per-turn ``retrieve`` (:mod:`memu_core._serve.turn`) records its event with
these functions without importing ``memu_core.events`` (pathlib, typing, the settings resolver:
about as much as the whole light turn). :mod:`memu_core.events` builds every other event from the
same catalogue, context and ids, and the spool sink (memu-telemetry) appends through
:func:`append_line`, so the two writers cannot disagree on the allow-list, the envelope or the cap.
"""

from __future__ import annotations

import os
import sys

CODE = "code"
"""``reported_by`` of an event memu's code observed."""
AGENT = "agent"
"""``reported_by`` of an event an agent reported with a ``report`` verb."""
CLIENT_TYPE = "memu_cli"

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

MAX_SPOOL_BYTES = 1024 * 1024
"""The live spool takes no line once it holds this much (the line that crosses it is kept)."""

_PLATFORMS = {"claude-code": "claude_code", "agent": "generic", "generic": "generic"}
_OSES = {"darwin": "macos", "win32": "windows", "linux": "linux"}


def agent_platform(host: str) -> str:
    """The host id as memU's ingest names it (``claude-code`` → ``claude_code``); ``none`` for ``memu``."""
    if not host:
        return "none"
    return _PLATFORMS.get(host, host.replace("-", "_"))


def uuid4() -> str:
    """A version-4 UUID (122 random bits) without the uuid module's import."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def clean(value: object) -> str | int | float | bool | None:
    """A property value as an event carries it (anything but a JSON scalar becomes text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def allowed(name: str, properties: object) -> tuple[str, dict[str, str | int | float | bool | None]]:
    """``(reported_by, the properties the catalogue lets event name carry)``."""
    reported_by, keys = CATALOGUE.get(name, (CODE, ()))
    items = properties.items() if isinstance(properties, dict) else ()
    return reported_by, {key: clean(value) for key, value in items if key in keys}


def context(*, version: str, host: str, mode: str, reported_by: str, session: str) -> dict[str, str]:
    """The envelope's ``context``; ``session_id`` only when the host exported one."""
    mode = mode.strip().lower() or "local"
    found = {
        "client_version": version,
        "agent_platform": agent_platform(host),
        "os": _OSES.get(sys.platform, "other"),
        "deployment_mode": mode if mode in ("local", "cloud") else "other",
        "reported_by": reported_by,
    }
    if session.strip():
        found["session_id"] = session.strip()
    return found


def timestamp(seconds: float) -> str:
    """``occurred_at`` as the envelope writes it: UTC, milliseconds, ``Z``."""
    import time

    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((seconds - whole) * 1000):03d}Z"


def encode(value: object) -> str:
    """Compact JSON (as ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``) of an
    envelope: dicts, text, numbers, booleans and null."""
    import _json

    if isinstance(value, dict):
        return "{" + ",".join(f"{_json.encode_basestring(str(k))}:{encode(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return str(_json.encode_basestring(str(value)))


def read_dropped(path: str) -> int:
    """The drop counter in ``path`` (0 when absent or unreadable)."""
    try:
        with open(path, "rb") as handle:
            return max(0, int(handle.read().strip() or 0))
    except (OSError, ValueError):
        return 0


def count_dropped(path: str, n: int) -> None:
    """Raise the drop counter in ``path`` by ``n``; best effort."""
    if n <= 0:
        return
    try:
        os.makedirs(os.path.dirname(path) or ".", 0o700, exist_ok=True)
        total = str(read_dropped(path) + n).encode()
        with open(path, "wb") as handle:
            handle.write(total)
    except OSError:
        return


def append_line(spool: str, dropped: str, line: bytes) -> bool:
    """Append one envelope's line to ``spool``; ``False`` (and the counter in ``dropped`` raised)
    when it was lost. O(1): one ``open``, one ``fstat``, one one-byte ``pread`` (to heal a line a
    full disk cut short), one ``write``; no line once the spool holds :data:`MAX_SPOOL_BYTES`."""
    try:
        os.makedirs(os.path.dirname(spool) or ".", 0o700, exist_ok=True)
        fd = os.open(spool, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        count_dropped(dropped, 1)
        return False
    try:
        size = os.fstat(fd).st_size
        if size >= MAX_SPOOL_BYTES:
            count_dropped(dropped, 1)
            return False
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a write a full disk cut short: keep this line whole
        if os.write(fd, line) != len(line):
            count_dropped(dropped, 1)  # the short line is skipped (and not counted again) when read
            return False
        return True
    except OSError:
        count_dropped(dropped, 1)
        return False
    finally:
        os.close(fd)
