"""Render the CLI references from each binary's own ``--help``.

``docs/cli.md`` holds ``memu``; ``docs/reference/cli/<binary>.md`` holds each host binary and
every other memu console script installed (``memu-server``), found through their console-script
entry points, so memu-core imports no plugin package by name. Tests compare every page with
the checked-in files. Regenerate with ``python -m memu_core._cli.reference > docs/cli.md`` and
``python -m memu_core._cli.reference --all docs`` (which writes every page).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

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


def _memu_app() -> Any:
    from memu_core._cli.app import build_app

    return build_app(with_plugins=False)


def _help(app: Any, prog: str, args: list[str]) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        app([*args, "--help"], prog_name=prog, standalone_mode=True)
    return buffer.getvalue().rstrip()


def _commands(app: Any, args: list[str]) -> list[str]:
    from typer.main import get_command

    command = get_command(app)
    for part in args:
        command = command.commands[part]  # type: ignore[attr-defined]
    return list(getattr(command, "commands", {}))


def _sections(app: Any, prog: str) -> list[str]:
    out: list[str] = []
    queue: list[list[str]] = [[]]
    while queue:
        args = queue.pop(0)
        title = " ".join([prog, *args])
        out += [f"## `{title}`", "", "```text", _help(app, prog, args), "```", ""]
        queue.extend([*args, sub] for sub in _commands(app, args))
    return out


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
        *_sections(_memu_app(), "memu"),
    ]
    return "\n".join(out).rstrip() + "\n"


def _host_apps() -> dict[str, Callable[[], Any]]:
    from memu_core._cli.host.app import build_host_app
    from memu_core._plugins.manager import get_plugins
    from memu_core._plugins.registry import HOSTS

    specs = sorted((get_plugins().host(host_id) for host_id in get_plugins().lookup(HOSTS)), key=lambda s: s.binary)
    return {spec.binary: partial(build_host_app, spec) for spec in specs}


def _script_apps() -> dict[str, Callable[[], Any]]:
    """Other memu console scripts (``memu-server``) whose module holds a typer ``app``."""
    import importlib
    from importlib.metadata import entry_points

    found: dict[str, Callable[[], Any]] = {}
    for entry in entry_points(group="console_scripts"):
        if not entry.name.startswith("memu-") or entry.module.startswith("memu_host_"):
            continue
        if entry.module.startswith("memu_core"):
            continue

        def load(module: str = entry.module) -> Any:
            return importlib.import_module(module).app

        try:
            if hasattr(importlib.import_module(entry.module), "app"):
                found[entry.name] = load
        except ImportError:
            continue
    return dict(sorted(found.items()))


def binaries() -> dict[str, Callable[[], Any]]:
    """Every memu binary beside ``memu`` that is installed: its name and how to build its app."""
    return {**_host_apps(), **_script_apps()}


def render_binary(prog: str) -> str:
    """Markdown with the help text of ``prog`` (a host binary or ``memu-server``) and its verbs."""
    build = binaries()[prog]
    out = [
        f"# `{prog}` command reference",
        "",
        "Generated from `--help` by `python -m memu_core._cli.reference --all docs` (the verbs of",
        f"`{prog}` with memu-core and its own distribution; other plugins may add more). A test keeps",
        "it in step with the code. Every memu binary runs in one command shell: see",
        "[the `memu` reference](../../cli.md#every-memu-binary).",
        "",
        *_sections(build(), prog),
    ]
    return "\n".join(out).rstrip() + "\n"


def write_all(docs: Path) -> list[Path]:
    """Write ``cli.md`` and ``reference/cli/<binary>.md`` under ``docs``; returns the paths."""
    written = [docs / "cli.md"]
    written[0].write_text(render(), encoding="utf-8")
    folder = docs / "reference" / "cli"
    folder.mkdir(parents=True, exist_ok=True)
    for prog in binaries():
        path = folder / f"{prog}.md"
        path.write_text(render_binary(prog), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    if sys.argv[1:2] == ["--all"]:
        for path in write_all(Path(sys.argv[2] if len(sys.argv) > 2 else "docs")):
            print(path)
    else:
        print(render(), end="")
