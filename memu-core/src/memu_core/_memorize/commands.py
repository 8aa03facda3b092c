"""``memu memorize …``: the typer glue over :mod:`memu_core._memorize.actions`."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

import json
import sys
from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    import typer


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def add_memorize_commands(app: "typer.Typer") -> None:
    """Add the ``memorize`` group to ``memu``."""
    import typer

    from memu_core._cli.apps import sub_app

    group = sub_app("Developer runs: memorize 1-10 sessions your application recorded (one private run each).")
    app.add_typer(group, name="memorize")

    @group.command("prepare")
    def prepare(
        sessions: Annotated[list[str], typer.Argument(help="Session files (JSONL, one turn per line); - for stdin.")],
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    ) -> None:
        """Allocate a run, stage the sessions and print the run id, jobs, prompt and next command."""
        from memu_core._memorize import actions

        stdin_text = sys.stdin.read() if "-" in sessions else None
        result = actions.prepare(sessions, stdin_text)
        if as_json:
            _out(json.dumps(result, indent=2, ensure_ascii=False))
            return
        for warning in result["warnings"]:
            sys.stderr.write(f"warning: {warning}\n")
        _out(f"run:        {result['run']}")
        _out(f"workspace:  {result['workspace']}")
        _out(f"sessions:   {result['sessions']}")
        _out("jobs, in order:")
        for job in result["jobs"]:
            _out(f"  {job}")
        _out(f"prompt:     {result['prompt']}")
        _out(f"next:       {result['next']}")

    @group.command("commit")
    def commit(
        run: Annotated[str, typer.Argument(help="The run id prepare printed.")],
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    ) -> None:
        """Store what the executor wrote, then remove the run."""
        from memu_core._memorize import actions

        summary, cleanup = actions.commit(run)
        if as_json:
            _out(json.dumps({**summary, "cleanup_failed": cleanup}, indent=2, ensure_ascii=False))
        else:
            _out(f"committed {len(summary['committed'])} file(s) from {run}")
            for name in summary["committed"]:
                _out(f"  - {name}")
            for name in summary["forgotten"]:
                _out(f"  - forgot {name}")
        if cleanup:
            sys.stderr.write(f"warning: {cleanup}\n")

    @group.command("verify-resources")
    def verify_resources(run: Annotated[str, typer.Argument(help="The run id.")]) -> None:
        """The run's resource job: keep the touched files that exist."""
        from memu_core._memorize import actions

        _out(f"{actions.verify_resources(run)} resource(s) kept for {run}")

    @group.command("discard")
    def discard(run: Annotated[str, typer.Argument(help="The run id.")]) -> None:
        """Remove a run without storing anything (does not undo a commit)."""
        from memu_core._memorize import actions

        _out(f"discarded {run} ({actions.discard(run)})")
