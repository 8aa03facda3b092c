"""memu as a user installs it: memu-core and the host adapters from their built wheels alone.

The wheels are built from this checkout (tests/dists.py, hatchling, offline) and installed with
``pip --no-index --find-links`` into a fresh venv. Third-party dependencies are not downloaded:
the venv sees the test environment's installed third-party packages through a site folder of
links to them, which leaves out every memu distribution, so each ``memu_*`` module and its
metadata can only come from a wheel (checked: their files live in the new venv). In that venv
the Cursor loop runs (prepare, commit, retrieve), then ``memu plugins``, ``memu doctor``,
``memu plugins install|uninstall`` of a plugin this test writes, and each other host
distribution in turn: installed, its binary's ``--help`` and ``doctor``, uninstalled.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from memu_core._plugins.catalogue import CATALOGUE

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import dists  # noqa: E402

HOSTS = {entry.distribution: entry.host for entry in CATALOGUE if entry.host}
FACT = "The release train leaves every Tuesday at 09:30 from the main branch."
OURS = re.compile(r"^(_?memu|__editable__|_editable_impl_memu)", re.I)

pytestmark = pytest.mark.slow


class Venv:
    def __init__(self, root: Path, wheels: Path, home: Path) -> None:
        self.root, self.wheels, self.home = root, wheels, home
        self.bin = root / "bin"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "PYTHON", "PIP_", "CURSOR_"))}
        self.env.update(
            HOME=str(home),
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            MEMU_EMBED_PROVIDER="none",
            MEMU_SERVE_AUTOSTART="0",
            VIRTUAL_ENV=str(root),
            # memu plugins install runs pip itself: offline, from the built wheels, and building a
            # local project with the hatchling the venv sees (0 turns build isolation off).
            PIP_NO_INDEX="1",
            PIP_FIND_LINKS=str(wheels),
            PIP_NO_BUILD_ISOLATION="0",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )

    def run(self, *args: str, ok: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        exe = args[0] if "/" in args[0] else str(self.bin / args[0])
        done = subprocess.run(
            [exe, *args[1:]], env=self.env, cwd=cwd or self.home, capture_output=True, text=True, timeout=300
        )
        if ok:
            assert done.returncode == 0, f"{' '.join(args)}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return done

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("python", "-m", "pip", *args)

    def locations(self, *distributions: str) -> dict[str, str]:
        code = (
            "import json, sys\nfrom importlib import metadata\n"
            "print(json.dumps({d: str(metadata.distribution(d).locate_file('')) for d in sys.argv[1:]}))"
        )
        return json.loads(self.run("python", "-c", code, *distributions).stdout)


def third_party_site(into: Path) -> Path:
    """A folder of links to every entry of this environment's site-packages except memu's."""
    site = Path(sysconfig.get_paths()["purelib"])
    into.mkdir()
    for entry in site.iterdir():
        if not OURS.match(entry.name):
            (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    base = tmp_path_factory.mktemp("wheels")
    wheels = base / "wheels"
    members = ["memu-core", *(f"memu-hosts/{d}" for d in HOSTS)]
    built = subprocess.run(
        [sys.executable, str(REPO / "tests" / "dists.py"), "wheels", str(wheels), *members],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    for member in members:
        (wheel,) = wheels.glob(f"{dists.project(member)['project']['name'].replace('-', '_')}-*.whl")  # type: ignore[index]
        assert dists.check_wheel(member, wheel) == [], wheel.name
    root = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    overlay = third_party_site(base / "third-party")
    (purelib,) = root.glob("lib/python*/site-packages")
    (purelib / "_third_party_site.pth").write_text(f"import site; site.addsitedir({str(overlay)!r})\n")
    home = base / "home"
    home.mkdir()
    env = Venv(root, wheels, home)
    env.pip("install", "--no-index", "--find-links", str(wheels), "memu-core", "memu-host-cursor")
    return env


def test_memu_core_and_the_cursor_host_come_from_their_wheels(venv: Venv) -> None:
    for name, location in venv.locations("memu-core", "memu-host-cursor").items():
        assert Path(location).resolve().is_relative_to(venv.root.resolve()), (name, location)
    shown = venv.pip("show", "-f", "memu-host-cursor").stdout
    assert "memu_host_cursor/py.typed" in shown and "../../../bin/memu-cursor" in shown
    # The test environment's own memu is out of sight: the editable finders are not linked.
    code = "import memu_core, sys; print(memu_core.__file__)"
    assert venv.run("python", "-c", code).stdout.startswith(str(venv.root))


def test_the_cursor_loop_runs_from_the_wheels(venv: Venv) -> None:
    home = venv.home
    sid = "c0ffee01-2222-4333-8444-555566667777"
    log = home / ".cursor" / "projects" / "-home-u-app" / "agent-transcripts" / sid / f"{sid}.jsonl"
    log.parent.mkdir(parents=True)
    records = [
        {"role": "user", "message": {"content": [{"type": "text", "text": FACT}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Noted."}]}},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert "prepared 1 session(s)" in venv.run("memu-cursor", "prepare").stdout
    job = (home / ".memu" / "hosts" / "cursor" / "jobs" / "1.txt").read_text(encoding="utf-8")
    memory = Path(re.search(r"^\s+(/\S*memory)\s*$", job, re.M).group(1))  # type: ignore[union-attr]
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "release-train.md").write_text(
        f"---\nname: release-train\ndescription: When releases ship\n---\n{FACT}\n"
    )
    assert "memory/release-train" in venv.run("memu-cursor", "commit").stdout
    found = json.loads(venv.run("memu-cursor", "retrieve", "when does the release train leave").stdout)
    assert "release-train" in {f["name"] for f in found["files"]}
    assert "release-train" in venv.run("memu", "list-files").stdout


def test_memu_plugins_and_doctor_in_the_wheel_install(venv: Venv) -> None:
    listed = venv.run("memu", "plugins").stdout
    assert "memu-host-cursor  (memu-host-cursor 0.1.0, entry point)" in listed and "LOAD ERROR" not in listed
    available = {
        r["distribution"]: r["installed"]
        for r in json.loads(venv.run("memu", "plugins", "available", "--json").stdout)["available"]
    }
    assert available["memu-host-cursor"] and available["memu-core"] and not available["memu-host-codex"]
    doctor = venv.run("memu", "doctor", ok=False)
    assert doctor.returncode in (0, 1) and "Traceback" not in doctor.stderr, doctor.stderr
    assert "store" in doctor.stdout.lower()


def test_memu_plugins_install_and_uninstall_a_local_plugin(venv: Venv, tmp_path: Path) -> None:
    project = tmp_path / "memu-hello"
    (project / "memu_hello").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "memu-hello"\nversion = "0.3.0"\ndependencies = ["memu-core"]\n\n'
        '[project.entry-points.memu]\nmemu-hello = "memu_hello"\n'
    )
    (project / "memu_hello" / "__init__.py").write_text(
        "from memu_core import hookimpl\n\n\n@hookimpl\ndef memu_register_commands(app):\n"
        "    @app.command('hello')\n    def hello() -> None:\n        print('hello from a plugin')\n"
    )
    installed = venv.run("memu", "plugins", "install", str(project))
    assert "added plugin memu-hello (memu-hello 0.3.0), hooks: memu_register_commands" in installed.stdout
    assert venv.run("memu", "hello").stdout.strip() == "hello from a plugin"
    gone = venv.run("memu", "plugins", "uninstall", "memu-hello")
    assert "removed plugin memu-hello (memu-hello 0.3.0)" in gone.stdout
    assert venv.run("memu", "hello", ok=False).returncode == 2
    again = venv.run("memu", "plugins", "uninstall", "memu-hello", ok=False)
    assert again.returncode == 0 and "no memu plugin changed" in again.stdout  # pip: not installed, skipped


@pytest.mark.parametrize("distribution", sorted(set(HOSTS) - {"memu-host-cursor"}))
def test_each_host_distribution_installs_runs_and_uninstalls(venv: Venv, distribution: str) -> None:
    binary = f"memu-{HOSTS[distribution]}"
    # --no-deps: its one dependency, memu-core, is installed from its wheel already.
    venv.pip("install", "--no-deps", "--no-index", "--find-links", str(venv.wheels), distribution)
    try:
        (location,) = venv.locations(distribution).values()
        assert Path(location).resolve().is_relative_to(venv.root.resolve())
        helped = venv.run(binary, "--help").stdout
        assert all(verb in helped for verb in ("retrieve", "prepare", "commit", "doctor")), helped
        doctor = venv.run(binary, "doctor", ok=False)
        assert doctor.returncode in (0, 1) and "Traceback" not in doctor.stderr, doctor.stderr
    finally:
        venv.pip("uninstall", "--yes", distribution)
    assert not (venv.bin / binary).exists()
