"""The spool sink: memu's events, kept on disk and sent only when the user turned telemetry on.

``emit`` appends one line to the spool (never sends: it runs on the command's path, the per-turn
``retrieve`` included); ``flush`` delivers at memU's flush points. Off unless ``MEMU_TELEMETRY=1``
(``memu config --telemetry on``); ``MEMU_TELEMETRY=0`` and ``DO_NOT_TRACK=1`` always win; nothing
is sent until ``MEMU_EVENTS_BASE_URL`` names an endpoint.
"""

from __future__ import annotations

from typing import ClassVar

from memu_core import events
from memu_core.interfaces import EventSink
from memu_core.types import Event


class SpoolSink(EventSink):
    """Appends each event's envelope to ``~/.memu/events.jsonl``; flushes by POSTing it."""

    name: ClassVar[str] = "spool"

    def emit(self, event: Event) -> None:
        """Spool ``event`` when telemetry is on; a lost line raises the drop counter."""
        if not events.telemetry_on():
            return
        from memu_telemetry import spool

        spool.append(event.envelope())

    def flush(self) -> tuple[int, int]:
        """Send the spool (bounded); ``(accepted, rejected)``."""
        from memu_telemetry import send

        return send.flush()
