"""The typer mount: ``init`` and ``config`` on any app, usage errors exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from memu_core._config import dotenv
from memu_core._config.commands import build_config_commands


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """A host binary stand-in."""

    build_config_commands(app, "memu-demo")
    return app


def test_init_then_show(app: typer.Typer, config_file: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["init"])
    assert result.exit_code == 0, result.output
    assert "ready — continue with `memu-demo docs install`" in result.stdout
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:2] == [f"config    {config_file}", "mode      local"]


def test_config_local_with_flags(app: typer.Typer, config_file: Path) -> None:
    result = CliRunner().invoke(
        app, ["config", "--local", "--db", "/s.sqlite3", "--embed-model", "m", "--embed-api-key", "sk-x"]
    )
    assert result.exit_code == 0, result.output
    values = dotenv.read_file(config_file)[0]
    assert (values["MEMU_DB"], values["MEMU_EMBED_MODEL"], values["MEMU_API_KEY"]) == (
        "/s.sqlite3",
        "m",
        "sk-x",
    )
    assert "sk-x" not in result.output


def test_config_telemetry(app: typer.Typer, config_file: Path) -> None:
    result = CliRunner().invoke(app, ["config", "--telemetry", "on"])
    assert result.exit_code == 0, result.output
    assert dotenv.read_file(config_file)[0] == {"MEMU_TELEMETRY": "1"}
    result = CliRunner().invoke(app, ["config", "--telemetry", "sometimes"])
    assert result.exit_code == 2 and dotenv.read_file(config_file)[0] == {"MEMU_TELEMETRY": "1"}


@pytest.mark.parametrize(
    "argv",
    [
        ["config"],
        ["config", "--local", "--cloud"],
        ["config", "bogus"],
        ["config", "--unknown-flag"],
    ],
)
def test_usage_errors_exit_2(app: typer.Typer, config_file: Path, argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert not config_file.exists()


def test_refusal_exits_2(app: typer.Typer, config_file: Path) -> None:
    config_file.parent.mkdir()
    config_file.write_text("MEMU_DB=/s.sqlite3\n")
    result = CliRunner().invoke(app, ["config", "--cloud", "--cloud-api-key", "k"])
    assert result.exit_code == 2
    assert "error: " in result.stderr
    assert CliRunner().invoke(app, ["config", "--cloud", "--cloud-api-key", "k", "--force"]).exit_code == 0


def test_memu_error_is_one_line(app: typer.Typer, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_core._cli.main import run_app

    config_file.parent.mkdir()
    config_file.write_bytes(b"MEMU_DB=\xff\n")
    assert run_app(lambda: app, ["config", "show"]) == 2  # the CLI shell turns the error into its code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
