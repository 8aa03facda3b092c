# memu_event_log/plugin.py
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import ClassVar

from memu_core import hookimpl
from memu_core.interfaces import EventSink
from memu_core.types import Event


class JsonlEventLog(EventSink):
    """Appends one JSON object per event to $MEMU_EVENT_LOG (default ~/.memu/events.log.jsonl)."""

    name: ClassVar[str] = "jsonl-event-log"

    def emit(self, event: Event) -> None:
        path = Path(os.environ.get("MEMU_EVENT_LOG", "~/.memu/events.log.jsonl")).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        line = {"event": event.name, "at": event.occurred_at.isoformat(), "host": event.host, **event.properties}
        with path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")


@hookimpl
def memu_register_event_sinks() -> list[type[EventSink]]:
    return [JsonlEventLog]
