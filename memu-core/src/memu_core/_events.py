"""Emitting lifecycle events to the registered :class:`~memu_core.interfaces.EventSink` s.

The pipeline calls :func:`emit` (or wraps a step in :func:`step`) after ``init``, a host's
``docs``, ``prepare``, ``commit`` and ``retrieve``, and ``memu commit``/``retrieve``. Both never
raise and never print: an event is a side channel, and the command's output and exit code must
not depend on it.

The events and their properties are listed in :data:`memu_core.hookspecs.EVENTS`.

It has to stay cheap on the per-turn ``retrieve``, where most installs have no sink at all.
Only plugins that declare sinks are asked (entry point group ``memu.event_sinks``; memu-core
registers none), so with none declared this costs one read of the installed metadata and
imports no plugin module. Loading every plugin to ask would cost more than the search, and
"any third-party entry point installed" is true of every install with a host.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memu_core.types import EventValue



def emit(name: str, properties: Mapping[str, EventValue] | None = None, *, host: str = "") -> None:
    """Give every registered sink the event ``name``; a sink that raises is skipped."""
    try:
        from memu_core._plugins.manager import get_plugins

        sinks = get_plugins().sinks()
        if not sinks:
            return
        from memu_core.types import Event, utcnow

        event = Event(name, utcnow(), dict(properties or {}), host)
        for sink in sinks:
            with contextlib.suppress(Exception):  # one broken sink must not silence the others
                sink.emit(event)
    except Exception:  # events are best effort by contract: never the command's failure
        return


@contextlib.contextmanager
def step(name: str, *, host: str = "") -> Iterator[dict[str, EventValue]]:
    """Time the body and emit ``<name>_succeeded`` or, when it raises, ``<name>_failed``.

    The body may add properties (counts) to the yielded dict; ``latency_ms`` is added here, and
    on failure ``error_type`` (the exception's class name, never its message).
    """
    properties: dict[str, EventValue] = {}
    started = time.monotonic()
    try:
        yield properties
    except Exception as exc:
        properties.update(latency_ms=round((time.monotonic() - started) * 1000), error_type=type(exc).__name__)
        emit(f"{name}_failed", properties, host=host)
        raise
    properties["latency_ms"] = round((time.monotonic() - started) * 1000)
    emit(f"{name}_succeeded", properties, host=host)


def result_count(result: Mapping[str, object]) -> int:
    """How many items a retrieve answer holds (its segments, files and resources)."""
    return sum(len(items) for key in ("segments", "files", "resources") if isinstance(items := result.get(key), list))
