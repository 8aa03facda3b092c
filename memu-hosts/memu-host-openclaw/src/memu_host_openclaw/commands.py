"""OpenClaw's extra verb: ``register-cron-job``."""

import sys
from typing import TYPE_CHECKING, Annotated

from memu_core.host import HostSpec

if TYPE_CHECKING:
    import typer


def add_openclaw_commands(app: "typer.Typer", spec: HostSpec) -> None:
    """Add ``register-cron-job`` (what ``prepare`` needs to recognise the bridging runs)."""
    import typer

    @app.command("register-cron-job")
    def register_cron_job(
        job_id: Annotated[
            str, typer.Option("--job-id", help="The bridging task's id from `openclaw cron list`.")
        ],
        base_dir: Annotated[
            str | None, typer.Option("--base-dir", help=f"Working tree (default ~/.memu/hosts/{spec.id}).")
        ] = None,
    ) -> None:
        """Register the cron job that runs the bridging task, so its own sessions are never mined."""
        from memu_core.host import Layout
        from memu_host_openclaw import cron

        layout = Layout.at(base_dir or spec.default_base(), spec.id)
        path = cron.register(layout.base, job_id)
        sys.stdout.write(f"registered cron job {job_id.strip()} in {path}\n")
