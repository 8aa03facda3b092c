"""The generic adapter's extra verb: ``detect``."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from memu_core.host import HostSpec

if TYPE_CHECKING:
    import typer


def add_detect(app: "typer.Typer", spec: HostSpec) -> None:
    """Add ``detect [PATH] [--json]``."""
    import typer

    @app.command()
    def detect(
        path: Annotated[
            str | None, typer.Argument(help="An agent's folder to probe (default: survey ~).")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Find agents under ~ (or probe PATH): can memu memorize from them, retrieve into them?"""
        from memu_core.errors import UsageError
        from memu_host_generic import detect as d

        if path is not None and not Path(path).expanduser().is_dir():
            raise UsageError(
                f"detect: {path} is not a folder; pass an agent's data folder such as ~/.myagent"
            )
        sys.stdout.write(d.report(path, as_json=as_json) + "\n")
