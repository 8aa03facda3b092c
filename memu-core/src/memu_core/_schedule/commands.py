"""``memu-<host> schedule …``: the typer glue over :mod:`memu_core._schedule.actions`."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

import json
import sys
from typing import TYPE_CHECKING, Annotated

from memu_core._hostkit.spec import HostSpec

if TYPE_CHECKING:
    import typer


def _say(lines: list[str]) -> None:
    for line in lines:
        sys.stdout.write(line + "\n")


def add_schedule_commands(spec: HostSpec, app: "typer.Typer") -> None:
    """Add the ``schedule`` group to a host binary."""
    import typer

    from memu_core._cli.apps import sub_app
    from memu_core._schedule import plan as plans

    tree_help = "Working tree (default ~/.memu/hosts/<id>; one per agent on the generic adapter)."

    group = sub_app(f"Run the bridging task for {spec.display} on a schedule (install, status, verify…).")
    app.add_typer(group, name="schedule")

    @group.command("install")
    def install(
        interval: Annotated[int, typer.Option(help="Minutes between runs.")] = plans.DEFAULT_INTERVAL,
        backend: Annotated[
            str | None, typer.Option(help="cron | systemd | launchd | taskscheduler (default: the platform's).")
        ] = None,
        agent_command: Annotated[
            str | None,
            typer.Option(help="The agent's headless command with {prompt} where the prompt goes."),
        ] = None,
        session_dir: Annotated[str | None, typer.Option(help="Sessions folder passed to prepare on every run.")] = None,
        timeout: Annotated[int, typer.Option(help="Seconds an agent run may take.")] = plans.DEFAULT_TIMEOUT,
        replace: Annotated[
            bool, typer.Option("--replace", help="Replace an entry memU (or a pasted guide) wrote for this host.")
        ] = False,
        base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None,
        keep_env: Annotated[
            list[str] | None,
            typer.Option("--keep-env", help="A variable of this shell the runs need too (repeatable)."),
        ] = None,
    ) -> None:
        """Register the bridging run with the scheduler (native hosts: print the steps)."""
        from memu_core._schedule import actions

        _say(
            actions.install(
                spec,
                interval=interval,
                backend_name=backend,
                agent_command=agent_command,
                session_dir=session_dir,
                timeout=timeout,
                replace=replace,
                base_dir=base_dir,
                keep_env=keep_env,
            )
        )

    @group.command("uninstall")
    def uninstall(base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None) -> None:
        """Remove memu's scheduled entry and its wrapper; other entries are untouched."""
        from memu_core._schedule import actions

        _say(actions.uninstall(spec, base_dir=base_dir))

    @group.command("status")
    def status(
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
        base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None,
    ) -> None:
        """Installed? backend, interval, last run, next run, backlog and the log's tail."""
        from memu_core._schedule import actions

        report = actions.status(spec, base_dir=base_dir)
        if as_json:
            _say([json.dumps(report, indent=2, ensure_ascii=False)])
            return
        _say(_status_lines(report))

    @group.command("verify")
    def verify(base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None) -> None:
        """Run the installed command in the scheduler's bare environment, without the agent."""
        from memu_core._schedule import actions

        code, lines = actions.verify(spec, base_dir=base_dir)
        _say(lines)
        if code:
            raise typer.Exit(code)

    @group.command("run")
    def run(
        scheduled: Annotated[bool, typer.Option("--scheduled", hidden=True)] = False,
        dry_run: Annotated[bool, typer.Option("--dry-run", hidden=True)] = False,
        base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None,
    ) -> None:
        """Start one scheduled run now, exactly as the scheduler would, and wait for it."""
        from memu_core._schedule import actions

        if scheduled or dry_run:
            code = actions.scheduled(spec, dry_run=dry_run, base_dir=base_dir)
        else:
            code, lines = actions.run_now(spec, base_dir)
            _say(lines)
        if code:
            raise typer.Exit(code)

    @group.command("prompt")
    def prompt(
        session_dir: Annotated[str | None, typer.Option(help="Sessions folder for prepare.")] = None,
        base_dir: Annotated[str | None, typer.Option(help=tree_help)] = None,
    ) -> None:
        """Print the prompt a scheduled run gives the agent (for a scheduler set up by hand)."""
        from memu_core._schedule.actions import where
        from memu_core._schedule.prompt import bridging_prompt

        base, _ = where(spec, base_dir)
        _say([bridging_prompt(spec, str(base), session_dir, base_dir=str(base) if base_dir else None)])


def _status_lines(report: dict[str, object]) -> list[str]:
    if not report.get("backend"):
        by = report.get("scheduled_by")
        return [f"not scheduled: {report['task_name']} (scheduled by {by})"]
    lines = [
        f"task:      {report['task_name']} ({'installed' if report['installed'] else 'MISSING from the scheduler'})",
        f"backend:   {report['backend']}, every {report['interval_minutes']} min",
        f"next run:  {report.get('next_run') or 'ask the scheduler'}",
    ]
    last = report.get("last_run")
    if isinstance(last, dict):
        lines.append(f"last run:  {last.get('started_at')} exit {last.get('exit')} ({last.get('outcome')})")
    else:
        lines.append("last run:  none yet")
    if report.get("sessions_remaining") is not None:
        lines.append(f"backlog:   {report['sessions_remaining']} session(s) left for later runs")
    if report.get("wrapper_edited"):
        lines.append("warning:   the wrapper was edited by hand; schedule install rewrites it")
    tail = report.get("log_tail") or []
    if isinstance(tail, list) and tail:
        lines.append(f"log ({report['log']}):")
        lines += [f"  {line}" for line in tail]
    return lines
