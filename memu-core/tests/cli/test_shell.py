"""The CLI shell in process: exit codes, one stderr line per failure, -v and MEMU_DEBUG."""

from __future__ import annotations

import pytest
import typer

from memu_core._cli import shell
from memu_core.errors import LockBusy, UsageError


def _fail(exc: BaseException) -> None:
    raise exc


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (
            UsageError("--top-k -1 is not positive; pass 1 or more"),
            2,
            "error: --top-k -1 is not positive; pass 1 or more",
        ),
        (LockBusy("another prepare runs\nwait for it"), 3, "error: another prepare runs; wait for it"),
        (ZeroDivisionError("division by zero"), 1, "error: internal error: ZeroDivisionError: division by zero"),
    ],
)
def test_a_failure_is_one_line_and_a_code(
    capsys: pytest.CaptureFixture[str], exc: BaseException, code: int, line: str
) -> None:
    assert shell.handled(lambda: _fail(exc), verbose=False) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(line), err
    assert "Traceback" not in err


def test_an_internal_error_says_how_to_see_more(capsys: pytest.CaptureFixture[str]) -> None:
    shell.handled(lambda: _fail(KeyError("k")), verbose=False)
    assert "rerun with -v" in capsys.readouterr().err


def test_verbose_adds_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert shell.handled(lambda: _fail(UsageError("bad")), verbose=True) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().endswith("error: bad")


def test_results_and_exits() -> None:
    assert shell.handled(lambda: None, verbose=False) == 0
    assert shell.handled(lambda: 4, verbose=False) == 4
    assert shell.handled(lambda: _fail(KeyboardInterrupt()), verbose=False) == 130
    assert shell.handled(lambda: _fail(SystemExit(5)), verbose=False) == 5


@pytest.mark.parametrize(
    ("argv", "env", "verbose", "rest"),
    [
        (["retrieve", "x"], None, False, ["retrieve", "x"]),
        (["-v", "retrieve", "x"], None, True, ["retrieve", "x"]),
        (["retrieve", "x", "--verbose"], None, True, ["retrieve", "x"]),
        (["retrieve", "--", "-v"], None, False, ["retrieve", "--", "-v"]),
        (["retrieve", "x"], "1", True, ["retrieve", "x"]),
        (["retrieve", "x"], "0", False, ["retrieve", "x"]),
    ],
)
def test_verbose_flags_and_memu_debug(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: str | None, verbose: bool, rest: list[str]
) -> None:
    if env is None:
        monkeypatch.delenv("MEMU_DEBUG", raising=False)
    else:
        monkeypatch.setenv("MEMU_DEBUG", env)
    assert shell.split_verbose(argv) == (verbose, rest)


def test_usage_mistakes_are_one_line_naming_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    from memu_core._cli.apps import new_app

    app = new_app("memu-demo", "A demo.")

    @app.command()
    def greet(name: str) -> None:
        """Greet NAME."""

    binary = shell.Binary("memu-demo", lambda _args: app)
    assert shell.run(binary, ["greet"]) == 2
    assert capsys.readouterr().err == "error: Missing argument 'name'. (see `memu-demo greet --help`)\n"
    assert shell.run(binary, ["--version"]) == 0
    assert capsys.readouterr().out.startswith("memu-demo ")
    assert shell.run(binary, ["greet", "--version"]) == 2


def test_a_fast_path_runs_without_typer_and_in_the_same_shell(capsys: pytest.CaptureFixture[str]) -> None:
    def fast(args: list[str]) -> object:
        return (lambda: _fail(UsageError("fast and handled"))) if args == ["go"] else None

    binary = shell.Binary("memu-demo", lambda _args: typer.Typer(), fast=fast)  # type: ignore[arg-type]
    assert shell.run(binary, ["go", "-v"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "error: fast and handled" in err


def test_versions_come_from_the_installed_distributions() -> None:
    assert shell.distribution_version("memu-core") == shell.distribution_version("memu_core") != "0+unknown"
    assert shell.distribution_version("pluggy") != "0+unknown"
    assert shell.distribution_version("no-such-distribution-here") == "0+unknown"
    assert shell.version_line("memu-demo", "memu-core").startswith("memu-demo ")
    assert "(memu-core " in shell.version_line("memu-demo", "pluggy")
