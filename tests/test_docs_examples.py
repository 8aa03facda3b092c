"""The examples of the Python API page and the plugin guide run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
TUTORIAL = DOCS / "tutorial" / "memu-event-log"


def _blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)


def test_the_python_api_page_runs_top_to_bottom(
    memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = _blocks("python-api.md", "python")
    assert len(blocks) >= 4
    namespace: dict[str, object] = {"__name__": "python_api_page"}
    for number, code in enumerate(blocks, 1):
        exec(compile(code, f"docs/python-api.md (block {number})", "exec"), namespace)
    assert (tmp_path / "notes.sqlite3").is_file()
    assert "release" in capsys.readouterr().out


def test_the_tutorial_package_is_the_code_the_guide_shows() -> None:
    text = (DOCS / "plugins.md").read_text(encoding="utf-8")
    plugin = (TUTORIAL / "memu_event_log" / "plugin.py").read_text(encoding="utf-8")
    project = (TUTORIAL / "pyproject.toml").read_text(encoding="utf-8")
    assert f"```python\n{plugin}```" in text, "docs/plugins.md's plugin block and the tutorial package differ"
    assert f"```toml\n{project}```" in text, "docs/plugins.md's pyproject block and the tutorial package differ"


def test_the_tutorial_shell_session_runs(tmp_path: Path) -> None:
    """The guide's shell block, run from the repository root in a fresh home. Its `pip install -e .`
    installs into a private folder on PYTHONPATH instead of the shared environment."""
    (block,) = [b for b in _blocks("plugins.md", "sh") if "pip install -e ." in b]
    site, home = tmp_path / "site", tmp_path / "home"
    home.mkdir()
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(
        HOME=str(home),
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(site),
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
    )
    pip = (
        f'pip() {{ "{sys.executable}" -m pip install -q --no-deps --no-build-isolation --no-index '
        f'--target "{site}" "${{@: -1}}"; }}\n'
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", pip + block], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "memu-event-log" in done.stdout and "memu_register_event_sinks" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert '"event": "memory_commit_succeeded"' in last and '"recall_file_count": 4' in last


def test_the_store_contract_snippet_defines_a_passing_test_class(tmp_path: Path) -> None:
    (code,) = _blocks("plugin-components.md", "python")
    from memu_core._stores.sqlite.store import SqliteStore

    namespace: dict[str, object] = {"MyStore": SqliteStore}
    exec(compile(code, "docs/plugin-components.md", "exec"), namespace)
    test_class = namespace["TestMyStore"]
    store = test_class().make_store(tmp_path)  # type: ignore[operator]
    assert store.list_files is not None and (tmp_path / "store.db").is_file()
    store.close()


def test_the_host_guides_template_command_runs(tmp_path: Path) -> None:
    text = (DOCS / "plugin-hosts.md").read_text(encoding="utf-8")
    found = re.search(r"```sh\n(.*?)```", text, re.S)
    assert found is not None, "docs/plugin-hosts.md lost its copier command"
    command = "\n".join(line.strip() for line in found.group(1).splitlines())
    (tmp_path / "templates").symlink_to(REPO / "templates", target_is_directory=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["/bin/sh", "-ec", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    project = (tmp_path / "memu-host-acme" / "pyproject.toml").read_text(encoding="utf-8")
    assert "memu-acme" in project


def test_the_command_snippet_adds_a_verb_to_host_binaries() -> None:
    from typer.testing import CliRunner

    from memu_core.host import HostSpec, build_host_app
    from memu_core.testing import registered

    blocks = [b for b in _blocks("plugins.md", "python") if "memu_register_host_commands" in b]
    assert len(blocks) == 1, "docs/plugins.md's command example"
    namespace: dict[str, object] = {"__name__": "snippet_plugin"}
    exec(compile(blocks[0], "docs/plugins.md (command example)", "exec"), namespace)
    plugin = type(sys)("snippet_plugin")
    plugin.__dict__.update(namespace)
    spec = HostSpec(id="snippet", display="Snippet", source="memu_core.testing:none", package="memu_core")
    with registered(plugin):
        result = CliRunner().invoke(build_host_app(spec), ["hello"])
    assert result.exit_code == 0, result.output
    assert "hello from my plugin" in result.output
