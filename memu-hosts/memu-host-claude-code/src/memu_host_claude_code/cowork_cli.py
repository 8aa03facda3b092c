"""``memu-claude-code cowork verify``: a read-only look at what Cowork discovery finds.

It prints counts only, never paths of sessions or any message text.
"""

# No ``from __future__ import annotations``: typer reads the (locally imported) annotations
# at definition time.

import sys
from pathlib import Path
from typing import Annotated, Any

from memu_core.host import HostSpec, RecordKind


def _row(label: str, value: object) -> str:
    return f"  {label:<27}{value}"


def add_cowork_commands(app: Any, spec: HostSpec) -> None:
    """Mount the ``cowork`` group on the host app."""
    import typer

    cowork = typer.Typer(help="Claude Desktop Cowork sessions (read-only diagnostics).", no_args_is_help=True)

    @cowork.command()
    def verify(
        root: Annotated[
            list[Path] | None, typer.Option("--root", help="A Claude Desktop data root (repeatable).")
        ] = None,
    ) -> None:
        """Show how many Cowork sessions and messages memu can read, per data root."""
        from memu_host_claude_code.source import CoworkSource

        for r in root or []:
            if not r.is_dir():
                raise typer.BadParameter(f"{r} is not a directory", param_hint="--root")
        source = CoworkSource(list(root) if root else None)
        sessions = source.discover()
        out = sys.stdout
        out.write("Cowork verification\n\n")
        out.write(_row("platform", sys.platform) + "\n")
        out.write(_row("roots", len(source.roots)) + "\n")
        for r in source.roots:
            count = sum(
                1 for s in sessions if source.owns(s.path) and source.scan_region(s.path) == f"cowork:{r}"
            )
            out.write(_row(f"root {r}", f"{count} session(s)") + "\n")
        readable = unreadable = records = messages = 0
        for s in sessions:
            try:
                read = source.read_incremental(s, None)
            except Exception:
                unreadable += 1
                continue
            readable += 1
            records += len(read.records)
            messages += sum(1 for rec in read.records if rec.kind is RecordKind.MESSAGE)
        status = "FAIL" if unreadable else ("WARN" if not messages else "PASS")
        out.write(_row("Cowork sessions", len(sessions)) + "\n")
        out.write(_row("readable sessions", f"{readable} / {len(sessions)}") + "\n")
        out.write(_row("normalized records", records) + "\n")
        out.write(_row("normalized messages", messages) + "\n")
        out.write(f"\nRESULT {status}\n")
        if status == "FAIL":
            raise typer.Exit(1)

    app.add_typer(cowork, name="cowork")
