"""``memu plugins available|install|uninstall`` in this environment: the catalogue marked, the
snapshot diff, and that managing plugins never imports one (the install itself runs in a fresh
venv, tests/test_wheels.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core._cli.plugins_cmds import changes


def memu(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A plugin whose import leaves a marker file, on the path of every command."""
    site = tmp_path / "site"
    dist = site / "memu_tripwire-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memu-tripwire\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memu]\nmemu-tripwire = memu_tripwire\n")
    marker = tmp_path / "imported"
    (site / "memu_tripwire.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('broken')\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    return {**clean, "HOME": str(tmp_path), "PYTHONPATH": str(site), "MEMU_SERVE_AUTOSTART": "0"}


def test_available_marks_what_is_installed_and_imports_no_plugin(env: dict[str, str], tmp_path: Path) -> None:
    out = memu(env, "plugins", "available", "--json")
    assert out.returncode == 0, out.stderr
    rows = {row["distribution"]: row for row in json.loads(out.stdout)["available"]}
    assert rows["memu-core"]["installed"] and rows["memu-host-cursor"]["installed"]
    assert rows["memu-host-cursor"]["install"] == "memu plugins install memu-host-cursor"
    assert not (tmp_path / "imported").exists()
    text = memu(env, "plugins", "available").stdout
    assert "memu-host-cursor " in text and "installed 0." in text


def test_uninstall_refuses_memu_core_before_loading_anything(env: dict[str, str], tmp_path: Path) -> None:
    out = memu(env, "plugins", "uninstall", "memu_core")
    assert out.returncode == 2 and "memu-core is memu itself" in out.stderr
    assert not (tmp_path / "imported").exists()


def test_list_is_what_plugins_shows(env: dict[str, str], tmp_path: Path) -> None:
    listed, plain = memu(env, "plugins", "list"), memu(env, "plugins")
    assert listed.stdout == plain.stdout and "LOAD ERROR: RuntimeError: broken" in listed.stdout
    assert (tmp_path / "imported").exists()  # listing does load them, in its own process


def test_the_snapshot_runs_with_a_broken_plugin_and_the_diff_names_the_change(env: dict[str, str]) -> None:
    code = "from memu_core._cli.plugins_cmds import print_snapshot; print_snapshot()"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    after = json.loads(done.stdout)
    assert "RuntimeError: broken" in after["plugins"]["memu-tripwire"]["error"]
    assert after["registered"]["hosts"]["cursor"] == "memu-host-cursor"
    before = json.loads(json.dumps(after))
    del before["plugins"]["memu-tripwire"], before["registered"]["hosts"]["cursor"]
    diff = changes(before, after)
    assert set(diff["added"]) == {"memu-tripwire"} and diff["registered"] == {"hosts": ["cursor"]}
    assert set(diff["load_errors"]) == {"memu-tripwire"}
    back = changes(after, before)
    assert set(back["removed"]) == {"memu-tripwire"} and back["unregistered"] == {"hosts": ["cursor"]}
