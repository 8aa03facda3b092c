"""``memu events``: show the local spool, send it, or empty it.

No ``from __future__ import annotations``: typer reads the annotations at definition time.
"""

import json
import sys
from typing import Annotated

import typer


def add_events_commands(app: typer.Typer) -> None:
    """Add the ``events`` group to ``memu``."""
    from memu_core.cli import sub_app

    group = sub_app(
        "The telemetry spool: what was recorded and not yet sent (`memu events`), `flush`, `clear`.",
        no_args_is_help=False,
        invoke_without_command=True,
    )
    app.add_typer(group, name="events")

    @group.callback()
    def show(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="The envelopes as one JSON array.")] = False,
    ) -> None:
        """Show the events waiting in the spool (nothing leaves the machine)."""
        if ctx.invoked_subcommand is not None:
            return
        from memu_telemetry import spool

        waiting = spool.pending()
        if as_json:
            sys.stdout.write(json.dumps(waiting, ensure_ascii=False, indent=2) + "\n")
            return
        for line in table(waiting):
            print(line)
        print(status(len(waiting)))

    @group.command("flush")
    def flush() -> None:
        """Send the spool to MEMU_EVENTS_BASE_URL now (only when telemetry is on)."""
        from memu_core import events
        from memu_telemetry import send

        if not events.telemetry_on():
            print("telemetry is off; nothing sent (turn it on with `memu config --telemetry on`)")
            return
        if events.endpoint() is None:
            print("MEMU_EVENTS_BASE_URL is not set; nothing sent (events stay in the spool)")
            return
        accepted, rejected = send.flush()
        print(f"delivered {accepted} event(s)")
        if rejected:
            print(f"{rejected} event(s) discarded — the server rejected them", file=sys.stderr)

    @group.command("clear")
    def clear() -> None:
        """Delete every spooled event and the drop counter."""
        from memu_telemetry import spool

        print(f"deleted {spool.clear()} event(s)")


def table(waiting: list[dict[str, object]]) -> list[str]:
    """One row per event: when, what, which agent, its properties."""
    rows = [("occurred_at", "event", "agent", "properties")]
    for item in waiting:
        context = item.get("context")
        agent = context.get("agent_platform", "") if isinstance(context, dict) else ""
        props = item.get("properties")
        shown = " ".join(f"{k}={v}" for k, v in props.items()) if isinstance(props, dict) else ""
        rows.append((str(item.get("occurred_at", "")), str(item.get("event_name", "")), str(agent), shown))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() for r in rows]


def status(count: int) -> str:
    """The line under the table: counts, the switch, the endpoint."""
    from memu_core import events
    from memu_telemetry import spool

    state = "on" if events.telemetry_on() else "off"
    where = events.endpoint() or "unset (nothing is sent)"
    return (
        f"{count} event(s) waiting in {spool.spool()}, {len(spool.sending_files())} batch(es) being sent, "
        f"{spool.read_dropped()} dropped; telemetry {state}; endpoint {where}"
    )
