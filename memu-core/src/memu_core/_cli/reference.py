"""Render the CLI reference (``docs/cli.md``) from the ``memu`` command's own ``--help``.

A test compares it with the checked-in file. Regenerate with
``python -m memu_core._cli.reference > docs/cli.md``.
"""

from __future__ import annotations

import contextlib
import io

SHELL = """\
## Every memu binary

`memu`, each `memu-<host>` and `memu-server` run in one command shell and behave alike:

- The result goes to stdout, as UTF-8 whatever the console's encoding (JSON where a program
  reads it). Logs and errors go to stderr.
- A failure is one line, `error: <what was wrong and how to fix it>`, and an exit code: `2` for
  a usage or configuration mistake, `3` when another run holds the lock this command needs, `1`
  for anything else (an unexpected failure says `internal error` and how to see more).
- `-v`/`--verbose`, anywhere before `--`, or `MEMU_DEBUG=1` in the environment add debug logs
  (`key=value` events: store opened, embedder chosen, sessions scanned, files written) and the
  traceback of a failure.
- `--version` prints the binary's version (and memu-core's, for binaries from other
  distributions); `--install-completion` and `--show-completion` set up shell completion.
"""


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
        *SHELL.splitlines(),
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
