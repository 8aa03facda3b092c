"""A relative ``MEMU_DB`` names one store for every memu process started in the same folder.

``memu``, a host binary and the warm server's handshake resolve it the same way (against the
folder the process runs in); the same relative text from another folder is another store, and
the handshake tells the two apart, so a warm server never answers for the wrong store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RELATIVE = os.path.join("stores", "team.sqlite3")
FINGERPRINT = (
    "from memu_core._serve.stamp import config_fingerprint, store_in_use\n"
    "print(store_in_use()); print(config_fingerprint())"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    clean.update(HOME=str(home), MEMU_DB=RELATIVE, MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    return clean


def run(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def memu(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, env, "-m", "memu_core._cli.main", *args)


def codex(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys\nsys.argv = ['memu-codex', *{list(args)!r}]\nfrom memu_host_codex.cli import main\nmain()"
    return run(cwd, env, "-c", code)


def handshake(cwd: Path, env: dict[str, str]) -> tuple[str, str]:
    store, fingerprint = run(cwd, env, "-c", FINGERPRINT).stdout.split()
    return store, fingerprint


def test_memu_a_host_binary_and_the_serve_handshake_agree_on_a_relative_memu_db(
    tmp_path: Path, env: dict[str, str]
) -> None:
    pytest.importorskip("memu_host_codex")
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    # The folder a MEMU_DB names must exist (a mistyped path is refused, not created).
    (project / "stores").mkdir(parents=True)
    (elsewhere / "stores").mkdir(parents=True)
    memu(project, env, "commit", "--from-dir", str(REPO / "examples"))
    store = (project / RELATIVE).resolve()
    assert store.is_file()
    assert not (Path(env["HOME"]) / ".memu" / "memu.sqlite3").exists()

    found = json.loads(memu(project, env, "retrieve", "how do we cut a release").stdout)
    assert found["files"][0]["name"] == "release-checklist"
    assert '"release-checklist"' in codex(project, env, "retrieve", "how do we cut a release").stdout

    # The handshake names the same file, and equals the one of an absolute MEMU_DB naming it.
    resolved, fingerprint = handshake(project, env)
    assert Path(resolved).resolve() == store
    assert handshake(elsewhere, {**env, "MEMU_DB": str(store)})[1] == fingerprint
    # The same text from another folder is another store: a server started for the first
    # must not answer the second.
    other, other_fingerprint = handshake(elsewhere, env)
    assert Path(other).resolve() == (elsewhere / RELATIVE).resolve()
    assert other_fingerprint != fingerprint


def test_a_relative_memu_db_in_the_config_file_resolves_the_same_way(tmp_path: Path, env: dict[str, str]) -> None:
    config = tmp_path / "config.env"
    config.write_text(f"MEMU_DB={RELATIVE}\n", encoding="utf-8")
    from_file = {k: v for k, v in env.items() if k != "MEMU_DB"}
    from_file["MEMU_CONFIG_ENV"] = str(config)
    (tmp_path / "stores").mkdir()
    memu(tmp_path, from_file, "commit", "--from-dir", str(REPO / "examples"))
    assert (tmp_path / RELATIVE).is_file()
    assert Path(handshake(tmp_path, from_file)[0]).resolve() == (tmp_path / RELATIVE).resolve()
