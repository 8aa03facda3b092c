"""The flag table: the fast parser and the typer commands read the same declarations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command

from memu_core._cli import flags

COMMANDS = [
    flags.RETRIEVE,
    flags.COMMIT,
    flags.LIST_FILES,
    flags.FORGET,
    flags.HOST_RETRIEVE,
    flags.HOST_PREPARE,
    flags.HOST_COMMIT,
    flags.HOST_VERIFY,
]


def _click_command(command: flags.Command, body: Any = None) -> Any:
    app = typer.Typer()
    context = {"host_id": "toy", "session_dir": "~/x"}
    flags.typer_command(app, command, body or (lambda **values: values), context=context)

    @app.command("other")  # a second command keeps typer from collapsing the app into one command
    def other() -> None:
        """Unused."""

    return get_command(app).commands[command.name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_typer_builds_each_parameter_from_the_table(command: flags.Command) -> None:
    params = {p.name: p for p in _click_command(command).params}
    assert list(params) == [p.dest for p in command.params]
    for declared in command.params:
        built = params[declared.dest]
        if declared.flag:
            assert built.opts == [declared.flag]
            assert built.multiple is declared.repeat
        else:
            assert built.param_type_name == "argument" and built.required is declared.required
        assert built.default == (None if declared.repeat else declared.default)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (flags.RETRIEVE, ["deploy steps", "--top-k", "3", "--track", "skill", "--track=memory", "--user-id", "u"]),
        (flags.RETRIEVE, ["x", "--agent-id=a"]),
        (flags.COMMIT, ["--from-dir", "notes", "--json"]),
        (flags.COMMIT, ["-"]),
        (flags.COMMIT, []),
        (flags.FORGET, ["name", "--track", "skill"]),
        (flags.HOST_PREPARE, ["--base-dir", "/b", "--session-dir=/s", "--max-jobs", "3"]),
        (flags.HOST_COMMIT, []),
    ],
)
def test_the_fast_parser_agrees_with_typer(command: flags.Command, args: list[str]) -> None:
    received: list[dict[str, Any]] = []
    _click_command(command, lambda **values: received.append(values)).main(list(args), standalone_mode=False)
    assert command.parse(args) == received[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["x", "--top-k"],
        ["x", "--top-k", "many"],
        ["x", "y"],
        ["x", "--nope"],
        ["x", "--user-id", "--track"],
    ],
)
def test_the_fast_parser_leaves_anything_unusual_to_typer(args: list[str]) -> None:
    assert flags.RETRIEVE.parse(args) is None


def test_values_are_converted_as_declared() -> None:
    overrides = dict.fromkeys(("db", "provider", "embed_model", "base_url", "api_key"))
    assert flags.COMMIT.parse(["--from-dir", "d"]) == {
        "payload": None,
        "from_dir": Path("d"),
        "prune": False,
        "as_json": False,
        **overrides,
    }
    assert flags.HOST_PREPARE.parse([]) == {
        "base_dir": None,
        "session_dir": "",
        "max_jobs": 0,
        "budget_kb": None,
        "as_json": False,
        "abandon_unfinished": False,
    }


def test_help_is_filled_from_the_context() -> None:
    built = {p.name: p for p in _click_command(flags.HOST_PREPARE).params}
    assert built["base_dir"].help == "Working tree (default ~/.memu/hosts/toy)."
    assert built["session_dir"].help == "Session logs (default ~/x)."
