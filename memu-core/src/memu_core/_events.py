"""Emitting lifecycle events to the registered :class:`~memu_core.interfaces.EventSink` s.

The one place memu records events, at the points memU records them: a host's ``retrieve``
(``memory_search_*``), the store listing of ``prepare`` and ``memu list-files``
(``memory_list_*``), a host's ``commit`` (``memory_commit_*``), a scheduled bridging run
(``memory_update_started``/``_succeeded``), ``init`` (``cli_install_started``), ``docs
install|uninstall`` (``*_guide_opened``), the ``report`` verbs, and any command that fails in the
CLI shell (``cli_error``). :mod:`memu_core.events` holds the catalogue and builds each event; only
the properties its allow-list names reach a sink.

Nothing here raises or prints: an event is a side channel, and a command's output and exit code
must not depend on it. A sink that raises is skipped; the others still receive the event.

Cheap on the per-turn ``retrieve``: when the user opted out (``MEMU_TELEMETRY=0``,
``DO_NOT_TRACK=1``) nothing is loaded at all; with telemetry off (the default) only plugins registered
in the process hear events, so no sink plugin is imported; with it on, only plugins that
declare sinks (entry point group ``memu.event_sinks``) are loaded. ``retrieve`` emits one event and never
flushes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memu_core.interfaces import EventSink
    from memu_core.types import EventValue

MAX_FRAMES = 20
"""``cli_error`` keeps the innermost frames, at most this many."""
MAX_DETAIL_CHARS = 1000
"""``report error --detail`` is cut to this many characters (after the CLI scrubbed it)."""
DEDUP_SECONDS = 3600
"""The same ``report error`` (stage and detail) is recorded once per hour."""
MAX_LEDGER_ENTRIES = 200


def _sinks() -> list[EventSink]:
    # The switches' own module, not the catalogue (memu_core.events with its line format): an
    # event nobody hears needs neither (ADR 0026's sixth pass).
    from memu_core._config import telemetry as switches

    if switches.opted_out():
        return []
    from memu_core._plugins.manager import get_plugins

    manager = get_plugins()
    # Telemetry is off by default: then no sink plugin is imported for an event (the per-turn
    # path stays as light as with none installed); plugins registered in process still hear.
    if not switches.telemetry_on() and not manager.has_in_process_plugins():
        return []
    return manager.sinks()


def emit(name: str, properties: Mapping[str, object] | None = None, *, host: str = "", session_env: str = "") -> None:
    """Give every registered sink the event ``name``; a sink that raises is skipped."""
    try:
        sinks = _sinks()
        if not sinks:
            return
        from memu_core.events import make_event

        event = make_event(name, properties, host=host, session_env=session_env)
        for sink in sinks:
            with contextlib.suppress(Exception):  # one broken sink must not silence the others
                sink.emit(event)
    except Exception:  # events are best effort by contract: never the command's failure
        return


def flush() -> tuple[int, int]:
    """Ask every sink to deliver what it kept; ``(accepted, rejected)`` summed over them."""
    accepted = rejected = 0
    try:
        for sink in _sinks():
            with contextlib.suppress(Exception):
                done = sink.flush()
                accepted, rejected = accepted + int(done[0]), rejected + int(done[1])
    except Exception:
        pass
    return accepted, rejected


def recording() -> bool:
    """Whether an event recorded now would be kept: telemetry is on and a sink is installed."""
    try:
        from memu_core._config import telemetry as switches

        return switches.telemetry_on() and bool(_sinks())
    except Exception:
        return False


@contextlib.contextmanager
def step(name: str, *, host: str = "", session_env: str = "") -> Iterator[dict[str, EventValue]]:
    """Time the body and emit ``<name>_succeeded`` or, when it raises, ``<name>_failed``.

    The body may add counts to the yielded dict; ``latency_ms`` is added here. The allow-list
    decides which of them leave the process.
    """
    properties: dict[str, EventValue] = {}
    started = time.monotonic()
    try:
        yield properties
    except Exception:
        properties["latency_ms"] = round((time.monotonic() - started) * 1000)
        emit(f"{name}_failed", properties, host=host, session_env=session_env)
        raise
    properties["latency_ms"] = round((time.monotonic() - started) * 1000)
    emit(f"{name}_succeeded", properties, host=host, session_env=session_env)


def result_count(result: Mapping[str, object]) -> int:
    """How many items a retrieve answer holds (its segments, files and resources)."""
    return sum(len(items) for key in ("segments", "files", "resources") if isinstance(items := result.get(key), list))


# -- code-observed errors ----------------------------------------------------------------------
def frames(tb: TracebackType | None) -> tuple[list[str], bool]:
    """``module:function:line`` of each frame, innermost last, at most :data:`MAX_FRAMES`.

    A frame of memu's own code names its module (``memu_core._bridge.pipeline``); any other is
    ``<external>``. No file path and no message: those hold DSNs, tokens and user names.
    """
    labels: list[str] = []
    while tb is not None:
        frame = tb.tb_frame
        module = str(frame.f_globals.get("__name__", ""))
        if module.split(".")[0].startswith("memu_"):
            labels.append(f"{module}:{frame.f_code.co_name}:{tb.tb_lineno}")
        else:
            labels.append("<external>")
        tb = tb.tb_next
    return labels[-MAX_FRAMES:], len(labels) > MAX_FRAMES


def cli_error(exc: BaseException, command: str, *, host: str = "", session_env: str = "") -> None:
    """Record ``cli_error`` for a command that failed, then flush unless it was ``retrieve``
    (the per-turn path must not drain a spool because the store is broken)."""
    try:
        labels, truncated = frames(exc.__traceback__)
        emit(
            "cli_error",
            {
                "command": command or "none",
                "error_type": type(exc).__name__,
                "frames": "\n".join(labels),
                "frames_truncated": truncated,
            },
            host=host,
            session_env=session_env,
        )
        if command != "retrieve":
            flush()
    except Exception:
        return


# -- the bridging run --------------------------------------------------------------------------
def update_started(*, host: str, session_env: str) -> None:
    """``memory_update_started``, when ``prepare`` runs as the scheduled bridging run."""
    emit("memory_update_started", host=host, session_env=session_env)


def update_succeeded(marker: object, counts: Mapping[str, int], *, bridging: bool, host: str, session_env: str) -> None:
    """``memory_update_succeeded`` after a commit that closes a bridging run (the run marker
    existed, or ``bridging``: ``MEMU_BRIDGING_RUN`` is set); ``duration_ms`` from the marker's
    start, omitted when the marker is unreadable or the span is negative or over a day."""
    if marker is None and not bridging:
        return
    properties: dict[str, object] = dict(counts)
    started = marker.get("started_at") if isinstance(marker, Mapping) else None
    if isinstance(started, int | float) and not isinstance(started, bool):
        span = time.time() - started
        if 0 <= span <= 86_400:
            properties["duration_ms"] = round(span * 1000)
    emit("memory_update_succeeded", properties, host=host, session_env=session_env)


# -- agent-reported errors ---------------------------------------------------------------------
def _fresh_report(stage: str, detail: str) -> bool:
    """Whether this (stage, detail) was not reported within the hour; records it in the ledger.
    A ledger that cannot be read or written fails open (a duplicate, never a loss)."""
    import hashlib
    import json
    import os

    from memu_core.events import companion

    ledger = companion("errors")
    fingerprint = hashlib.sha256(f"{stage}\x00{detail}".encode()).hexdigest()[:16]
    now = time.time()
    kept: list[dict[str, object]] = []
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in ledger.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                at = entry.get("at") if isinstance(entry, dict) else None
                if isinstance(at, int | float) and now - at < DEDUP_SECONDS:
                    kept.append(entry)
    if any(entry.get("fingerprint") == fingerprint for entry in kept):
        return False
    kept = [*kept[-(MAX_LEDGER_ENTRIES - 1) :], {"fingerprint": fingerprint, "at": now}]
    with contextlib.suppress(OSError):
        ledger.parent.mkdir(parents=True, exist_ok=True)
        partial = ledger.with_name(ledger.name + ".partial")
        partial.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
        os.replace(partial, ledger)
    return True


_STAGE_EVENTS = {
    "install": "cli_install_failed",
    "uninstall": "cli_uninstall_failed",
    "remember": "memory_update_failed",
}


def report_error(stage: str, detail: str, *, host: str, session_env: str) -> None:
    """``report error``: ``agent_error_reported`` (stage, ``detail`` already scrubbed by the
    caller) and, for install, uninstall and remember, the matching failure event; once per hour
    for the same report."""
    clipped = detail[:MAX_DETAIL_CHARS]
    if not _fresh_report(stage, clipped):
        return
    emit("agent_error_reported", {"stage": stage, "detail": clipped}, host=host, session_env=session_env)
    if stage in _STAGE_EVENTS:
        emit(_STAGE_EVENTS[stage], host=host, session_env=session_env)
