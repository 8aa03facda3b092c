"""The `memu` command as a user runs it: real processes, a real SQLite store in a temp home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("litellm", "torch", "sentence_transformers", "faiss", "sqlalchemy", "alembic", "fastapi", "numpy", "pydantic")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    clean.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0", HF_HUB_OFFLINE="1")
    return clean


def memu(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_imports_nothing_heavy(env: dict[str, str]) -> None:
    code = (
        "import sys\nfrom memu_core._cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "LOADED []" in out.stdout, out.stdout[-500:] + out.stderr[-500:]


def test_help_builds_the_commands_without_their_bodies(env: dict[str, str]) -> None:
    # Built-ins come through memu_register_commands, but listing them must not import what they
    # run: that kept `memu --help` no slower than before the commands went through the hook.
    bodies = (
        "memu_core._cli.memory_cmds",
        "memu_core._events",
        "memu_core._config.commands",
        "memu_core._layout",
        "memu_core._plugins.registry",
    )
    code = (
        "import sys\nfrom memu_core._cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(set(sys.modules) & set({bodies!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "retrieve" in out.stdout and "LOADED []" in out.stdout, out.stdout[-500:] + out.stderr[-500:]


def test_the_readme_loop_commit_retrieve_list_forget(env: dict[str, str]) -> None:
    committed = memu(env, "commit", "--from-dir", str(REPO / "examples"))
    assert committed.returncode == 0, committed.stderr
    assert "committed 4 recall file(s)" in committed.stdout
    assert (Path(env["HOME"]) / ".memu" / "memu.sqlite3").is_file()

    found = memu(env, "retrieve", "how do we cut a release")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["mode"] == "lexical"
    assert result["files"][0]["name"] == "release-checklist"
    assert {"segments", "files", "resources"} <= set(result)

    listed = json.loads(memu(env, "list-files", "--json").stdout)["recall_files"]
    assert sorted(f["name"] for f in listed) == [
        "debug-flaky-test",
        "project-billing-service",
        "release-checklist",
        "user-preferences",
    ]
    assert memu(env, "forget", "release-checklist", "--track", "skill").returncode == 0
    again = json.loads(memu(env, "search", "cut a release twine upload").stdout)
    assert all(f["name"] != "release-checklist" for f in again["files"])
    missing = memu(env, "forget", "release-checklist", "--track", "skill")
    assert missing.returncode == 1 and missing.stderr.startswith("error: no skill file named")


def test_commit_from_stdin_and_recommit_is_a_no_op(env: dict[str, str]) -> None:
    payload = json.dumps(
        {"recall_files": [{"name": "n", "content": "- fact one"}], "resource": [{"path": "/x", "description": "d"}]}
    )
    first = memu(env, "commit", "-", "--json", stdin=payload)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["stats"]["files_written"] == 1
    second = memu(env, "commit", "-", "--json", stdin=payload)
    assert json.loads(second.stdout)["stats"] == {"files_written": 0, "resources_written": 0, "texts_embedded": 0}


@pytest.mark.parametrize(
    ("args", "stdin", "code", "message"),
    [
        (["commit", "-"], "{not json", 2, "stdin is not valid JSON"),
        (["commit", "-"], "[1, 2]", 2, "must hold a JSON object"),
        (["commit", "/nonexistent/payload.json"], None, 2, "no such payload file"),
        (["commit", "-"], '{"recall_files": [{"content": "x"}]}', 2, "recall_files[0] has no name"),
        (["commit"], None, 2, "exactly one of PAYLOAD"),
        (["retrieve", "   "], None, 2, "empty query"),
        (["list-files", "--user-id", ""], None, 0, "recall file(s)"),
    ],
)
def test_bad_input_gets_one_line_and_an_exit_code(
    env: dict[str, str], args: list[str], stdin: str | None, code: int, message: str
) -> None:
    out = memu(env, *args, stdin=stdin)
    assert out.returncode == code, out.stderr
    assert message in (out.stderr if code else out.stdout)
    if code:
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "Traceback" not in out.stderr


def test_verbose_shows_the_traceback(env: dict[str, str]) -> None:
    out = memu(env, "-v", "retrieve", "  ")
    assert out.returncode == 2 and "Traceback" in out.stderr


def test_a_bad_store_url_is_a_config_error(env: dict[str, str]) -> None:
    out = memu({**env, "MEMU_DB": "mysql://x/y"}, "retrieve", "q")
    assert out.returncode == 2 and "unknown scheme 'mysql'" in out.stderr


def test_version(env: dict[str, str]) -> None:
    out = memu(env, "--version")
    assert out.returncode == 0 and out.stdout.startswith("memu ")


def test_plugins_lists_builtins_and_a_broken_plugin(env: dict[str, str], tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "memu_broken_demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memu-broken-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memu]\nmemu-broken-demo = memu_broken_demo\n")
    (site / "memu_broken_demo.py").write_text("import a_module_that_does_not_exist\n")
    broken_env = {**env, "PYTHONPATH": str(site)}
    out = memu(broken_env, "plugins")
    assert out.returncode == 0, out.stderr
    assert "memu_core._plugins.builtin" in out.stdout
    assert "stores: memory, " in out.stdout and "sqlite" in out.stdout
    assert "memu-broken-demo  (memu-broken-demo 1.0, entry point)" in out.stdout
    assert "LOAD ERROR: ModuleNotFoundError" in out.stdout
    # the broken plugin does not stop ordinary commands
    assert memu(broken_env, "list-files").returncode == 0
    strict = memu({**broken_env, "MEMU_STRICT_PLUGINS": "1"}, "list-files")
    assert strict.returncode == 1 and "memu-broken-demo" in strict.stderr


def test_db_upgrade_and_current(env: dict[str, str]) -> None:
    assert memu(env, "db", "current").stdout.startswith("none")
    up = memu(env, "db", "upgrade")
    assert up.returncode == 0, up.stderr
    current = memu(env, "db", "current").stdout.strip()
    assert current and current in up.stdout


def test_a_cold_lexical_retrieve_loads_no_framework(env: dict[str, str]) -> None:
    assert memu(env, "commit", "--from-dir", str(REPO / "examples")).returncode == 0
    code = (
        "import sys\nfrom memu_core._cli.main import main\n"
        "try:\n    main(['retrieve', 'release checklist', '--top-k', '3'])\n"
        "except SystemExit as e:\n    assert e.code == 0\n"
        "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & "
        "{'typer', 'pydantic', 'pydantic_settings', 'sqlalchemy', 'alembic', 'torch', 'litellm', 'structlog'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.rstrip().endswith("LOADED []"), out.stdout[-300:] + out.stderr[-300:]
    assert '"name": "release-checklist"' in out.stdout


def test_builtin_command_list_matches_the_app() -> None:
    from typer.main import get_command

    from memu_core._cli.app import BUILTIN_COMMANDS, build_app
    from memu_core.testing import registered

    with registered():  # a fresh manager: plugins an earlier test loaded would add commands
        commands = set(get_command(build_app(with_plugins=False)).commands)  # type: ignore[attr-defined]
    assert commands == BUILTIN_COMMANDS


def test_a_plugin_command_is_dispatched_and_help_stays_light(env: dict[str, str], tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "memu_hello-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memu-hello\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memu]\nmemu-hello = memu_hello\n")
    (site / "memu_hello.py").write_text(
        "from memu_core import hookimpl\n\n"
        "@hookimpl\ndef memu_register_commands(app):\n"
        "    @app.command('hello')\n    def hello():\n        print('hello from a plugin')\n"
    )
    plugin_env = {**env, "PYTHONPATH": str(site)}
    out = memu(plugin_env, "hello")
    assert out.returncode == 0 and out.stdout.strip() == "hello from a plugin", out.stderr
    listed = memu(plugin_env, "plugins").stdout
    assert "memu-hello  (memu-hello 1.0, entry point)\n    hooks: memu_register_commands\n" in listed
    code = (
        "import sys\nfrom memu_core._cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('PLUGIN', 'memu_hello' in sys.modules)"
    )
    helped = subprocess.run([sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True, timeout=60)
    assert "PLUGIN False" in helped.stdout and "memu plugins" in helped.stdout


def test_a_plain_commit_loads_no_framework(env: dict[str, str]) -> None:
    assert memu(env, "db", "upgrade").returncode == 0  # creating the schema is alembic's job
    code = (
        "import sys\nfrom memu_core._cli.main import main\n"
        f"try:\n    main(['commit', '--from-dir', {str(REPO / 'examples')!r}])\n"
        "except SystemExit as e:\n    assert e.code == 0\n"
        "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'pydantic', 'sqlalchemy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.rstrip().endswith("LOADED []"), out.stdout[-300:] + out.stderr[-300:]
    assert "committed 4 recall file(s)" in out.stdout
