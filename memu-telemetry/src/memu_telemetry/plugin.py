"""Entry point of memu-telemetry (groups ``memu`` and ``memu.event_sinks``).

Registers the spool sink and the ``memu events`` commands. Light on purpose: it is imported on
the per-turn ``retrieve`` of every install that has it, so it names classes and imports typer
only when a command is being built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookimpl

if TYPE_CHECKING:
    import typer

    from memu_core.interfaces import EventSink


@hookimpl
def memu_register_event_sinks() -> list[type[EventSink]]:
    """The spool sink (:class:`memu_telemetry.sink.SpoolSink`)."""
    from memu_telemetry.sink import SpoolSink

    return [SpoolSink]


@hookimpl
def memu_register_commands(app: typer.Typer) -> None:
    """``memu events [--json]``, ``memu events flush``, ``memu events clear``."""
    from memu_telemetry.commands import add_events_commands

    add_events_commands(app)
