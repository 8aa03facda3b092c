"""Render the CLI reference (``docs/cli.md``) from the ``memu`` command's own ``--help``.

A test compares it with the checked-in file. Regenerate with
``python -m memu_core._cli.reference > docs/cli.md``.
"""

from __future__ import annotations

import contextlib
import io


def _help(args: list[str]) -> str:
    from memu_core._cli.app import build_app

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        build_app(with_plugins=False)([*args, "--help"], prog_name="memu", standalone_mode=True)
    return buffer.getvalue().rstrip()


def _commands(args: list[str]) -> list[str]:
    from typer.main import get_command

    from memu_core._cli.app import build_app

    command = get_command(build_app(with_plugins=False))
    for part in args:
        command = command.commands[part]  # type: ignore[attr-defined]
    return list(getattr(command, "commands", {}))


def render() -> str:
    """Markdown with the help text of ``memu`` and of every built-in (sub)command."""
    out = [
        "# `memu` command reference",
        "",
        "Generated from `--help` by `python -m memu_core._cli.reference` (built-in commands only;",
        "plugins may add more). A test keeps it in step with the code.",
        "",
    ]
    queue: list[list[str]] = [[]]
    while queue:
        args = queue.pop(0)
        title = " ".join(["memu", *args])
        out += [f"## `{title}`", "", "```text", _help(args), "```", ""]
        queue.extend([*args, sub] for sub in _commands(args))
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
