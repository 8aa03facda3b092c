"""The host plugin template (``templates/host-plugin``) makes a plugin that works as generated.

Every dialect is generated and its own tests run against this checkout's memu. One plugin is
then installed for real, from its wheel as a user would, in a fresh virtual environment that
sees this environment's packages (nothing is installed here), and its binary runs a bridging
cycle: prepare → write a memory file where the job says → commit → retrieve; ``memu-agent
detect`` in that environment names the plugin's distribution for the agent's folder.
"""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import venv
from pathlib import Path

import copier
import pytest

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "templates" / "host-plugin"
DIALECTS = ("claude", "codex", "cursor", "pi", "chat", "custom")
INSTALLED_DIALECT = "claude"
"""The dialect of the plugin installed below, whose tests run there (not twice)."""
MEMORY_DIR = re.compile(r"^\s+(\S.*[/\\]memory)\s*$", re.M)


def generate(dest: Path, **data: str) -> Path:
    """Render the template into ``dest`` with ``data`` and every other answer defaulted."""
    copier.run_copy(str(TEMPLATE), str(dest), data=data, defaults=True, quiet=True, unsafe=False)
    return dest


def _clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "PYTHONPATH"}
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
        **extra,
    )
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 180) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_answers_shape_the_project(tmp_path: Path) -> None:
    project = generate(
        tmp_path / "p",
        agent_name="Acme Agent",
        host_id="acme",
        dialect="chat",
        session_dir="~/.acme/logs",
        instruction_path="~/.acme/ACME.md",
        session_id_env="ACME_SESSION_ID",
        schedule_command="acme run -p {prompt}",
    )
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert 'memu-acme = "memu_host_acme.cli:main"' in pyproject
    assert '[project.entry-points.memu]\nmemu-host-acme = "memu_host_acme.plugin"' in pyproject
    package = project / "src" / "memu_host_acme"
    spec = (package / "spec.py").read_text(encoding="utf-8")
    for field in (
        'id="acme"',
        'session_dir="~/.acme/logs"',
        'instruction_path="~/.acme/ACME.md"',
        'session_id_env="ACME_SESSION_ID"',
        'schedule_command="acme run -p {prompt}"',
    ):
        assert field in spec
    install = (package / "guides" / "INSTALL.md").read_text(encoding="utf-8")
    assert "memu-acme install-instruction" in install and "pip install --upgrade memu-core memu-host-acme" in install
    assert "{{instruction_path}}" in install and "[[" not in install  # memu's tokens are left for the binary
    workflow = (project / ".github" / "workflows" / "test.yml").read_text(encoding="utf-8")
    assert "${{ matrix.python }}" in workflow
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"memu_core\._|memu_core\.hosting", text), f"{path.name} imports a private module"
    with pytest.raises(ValueError):  # copier refuses an id that cannot name a binary
        generate(tmp_path / "bad", agent_name="X", host_id="Bad Id")
    assert not (tmp_path / "bad" / "pyproject.toml").exists()


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != INSTALLED_DIALECT])
def test_each_dialect_passes_its_own_tests(dialect: str, tmp_path: Path) -> None:
    project = generate(tmp_path / "p", agent_name=f"Acme {dialect}", dialect=dialect)
    env = _clean_env(tmp_path / "home", PYTHONPATH=str(project / "src"))
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"], project, env)
    assert re.search(r"\b12 passed\b", out), out


def _venv_seeing_this_one(where: Path) -> Path:
    """A fresh environment whose Python also sees this environment's packages (memu, pytest, pip,
    hatchling), through a ``.pth`` that adds them as site directories (their own ``.pth`` files,
    editable installs included, are honoured). Whatever it installs stays in ``where``."""
    venv.EnvBuilder(with_pip=False, system_site_packages=True).create(where)
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dirs = [d for d in site.getsitepackages() if Path(d).is_dir()]
    Path(own, "zz_parent_env.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in dirs), encoding="utf-8"
    )
    return python


def test_an_installed_plugin_runs_a_bridging_cycle_and_detect_names_it(tmp_path: Path) -> None:
    project = generate(tmp_path / "memu-host-acme", agent_name="Acme Agent", host_id="acme", dialect=INSTALLED_DIALECT)
    python = _venv_seeing_this_one(tmp_path / "venv")
    bindir = python.parent
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, MEMU_DB=str(home / "store.sqlite3"))
    _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "."],
        project,
        env,
    )
    binary = bindir / ("memu-acme.exe" if os.name == "nt" else "memu-acme")
    assert binary.exists() and not (Path(sys.executable).parent / binary.name).exists()

    # The plugin's own test suite, in the environment it is installed in.
    out = _run([str(python), "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"], project, env)
    assert re.search(r"\b12 passed\b", out), out

    # The agent's sessions where the spec says they are; then the binary, as a scheduled run calls it.
    sessions = home / ".acme" / "sessions" / "proj"
    sessions.mkdir(parents=True)
    fixture = project / "tests" / "fixtures" / "sessions" / "demo-session.jsonl"
    (sessions / "s1.jsonl").write_text(fixture.read_text(encoding="utf-8"), encoding="utf-8")
    report = json.loads(_run([str(binary), "prepare", "--json"], home, env))
    assert report["run"], report
    tree = home / ".memu" / "hosts" / "acme"
    job = (tree / "jobs" / "1.txt").read_text(encoding="utf-8")
    assert "blue-green script" in (tree / "sessions" / "1.jsonl").read_text(encoding="utf-8")
    where = MEMORY_DIR.search(job)
    assert where is not None, job
    memory = Path(where.group(1))
    (memory / "staging-deploys.md").write_text(
        "---\nname: staging-deploys\ndescription: How staging is deployed\n---\n"
        "Staging ships with ./deploy.sh --blue-green, never a plain restart.\n",
        encoding="utf-8",
    )
    _run([str(binary), "commit"], home, env)
    answer = json.loads(_run([str(binary), "retrieve", "how is staging deployed blue-green"], home, env))
    assert "staging-deploys" in {f["name"] for f in answer["files"]}

    # detect, from the installed metadata: the agent's folder is served by the plugin.
    memu_agent = [str(python), "-c", "from memu_host_generic.cli import main; main()"]
    found = json.loads(_run([*memu_agent, "detect", "--json"], home, env))
    [acme] = [a for a in found["agents"] if a["path"] == str(home / ".acme")]
    assert (acme["distribution"], acme["installed"], acme["binary"]) == ("memu-host-acme", True, "memu-acme")
    assert acme["session_dir"] == str(home / ".acme" / "sessions")
    assert acme["instruction_file"] == str(home / ".acme" / "AGENTS.md")
