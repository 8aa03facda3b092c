"""``memu-claude-code schedule`` under the real cron daemon: installed as a user would, it runs
on its own, mines and commits, and leaves the user's crontab exactly as it found it.

The "agent" is a small script that does what an agent does with the prompt: ``prepare``, write a
memory file where the mirror is, ``commit``. Everything else is real: the console script in this
venv, ``crontab``, the ``cron`` daemon (started here when none runs; ``.ci/run`` installs it),
the wrapper running in cron's bare environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

THEIRS = "# my own jobs\nMAILTO=me@example.invalid\n*/7 * * * * /usr/bin/true # keep me\n"
FACT = "The release train leaves every Tuesday at 09:30 from the main branch."
AGENT = """#!/bin/sh
set -e
memu-claude-code prepare
mkdir -p "$HOME/.memu/hosts/claude-code/memory"
printf -- '---\\nname: release-train\\ndescription: When releases ship\\n---\\n{fact}\\n' \\
  > "$HOME/.memu/hosts/claude-code/memory/release-train.md"
memu-claude-code commit
"""


def _crontab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crontab", *args], input=stdin, capture_output=True, text=True, timeout=30)


def _current() -> str | None:
    done = _crontab("-l")
    return done.stdout if done.returncode == 0 else None


@pytest.fixture
def cron_daemon() -> Iterator[None]:
    """A running cron daemon, and this user's crontab put back as it was afterwards."""
    if shutil.which("crontab") is None or (shutil.which("cron") is None and not Path("/usr/sbin/cron").exists()):
        pytest.skip("cron is not installed (.ci/run installs it)")
    before = _current()
    started: subprocess.Popen[bytes] | None = None
    if subprocess.run(["pgrep", "-x", "cron"], capture_output=True).returncode != 0:
        if os.geteuid() != 0:
            pytest.skip("no cron daemon runs and only root can start one")
        cron = shutil.which("cron") or "/usr/sbin/cron"
        started = subprocess.Popen([cron, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # cron notices a new crontab by the spool folder's mtime, in whole seconds: a crontab
        # written in the second the daemon read the spool at start-up would go unseen.
        time.sleep(2)
    try:
        yield
    finally:
        if started is not None:
            started.terminate()
            started.wait(timeout=30)
        if before is None:
            _crontab("-r")
        else:
            _crontab("-", stdin=before)


def _home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    session = home / ".claude" / "projects" / "-home-u-app" / "0b5e2c9a-1111-4222-8333-444455556666.jsonl"
    session.parent.mkdir(parents=True)
    records = [
        {"type": "user", "timestamp": "2026-08-20T10:00:00Z", "message": {"role": "user", "content": FACT}},
        {
            "type": "assistant",
            "timestamp": "2026-08-20T10:00:05Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        },
    ]
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "CLAUDE_CODE_"))}
    env.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    return home, env


def _agent(tmp_path: Path) -> Path:
    agent = tmp_path / "bin" / "fake-claude"
    agent.parent.mkdir(parents=True)
    agent.write_text(AGENT.format(fact=FACT), encoding="utf-8")
    agent.chmod(0o755)
    return agent


def _binary(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_binary("memu-claude-code"), *args], env=env, capture_output=True, text=True, timeout=180)


@pytest.mark.usefixtures("cron_daemon")
def test_a_scheduled_run_under_cron_mines_and_commits(tmp_path: Path) -> None:
    home, env = _home(tmp_path)
    agent = _agent(tmp_path)
    assert _crontab("-", stdin=THEIRS).returncode == 0
    installed = _run(env, "schedule", "install", "--interval", "1", "--agent-command", f"{agent} -p {{prompt}}")
    assert installed.returncode == 0, installed.stderr
    table = _current() or ""
    assert table.startswith(THEIRS) and not any(line.startswith("PATH=") for line in table.splitlines())

    state = home / ".memu" / "hosts" / "claude-code" / ".schedule.claude-code.last.json"
    deadline = time.monotonic() + 180  # cron starts jobs on the minute
    while not state.exists() and time.monotonic() < deadline:
        time.sleep(2)
    log = home / ".memu" / "hosts" / "claude-code" / "bridge.log"
    if not state.exists():
        daemons = subprocess.run(["pgrep", "-a", "cron"], capture_output=True, text=True).stdout
        seen = log.read_text(encoding="utf-8") if log.exists() else "no log: cron never started the wrapper"
        raise AssertionError(f"{seen}\ncron daemons: {daemons!r}\ncrontab: {_current()!r}")
    outcome = json.loads(state.read_text(encoding="utf-8"))
    assert outcome["exit"] == 0, log.read_text(encoding="utf-8")

    listed = subprocess.run([_binary("memu"), "list-files"], env=env, capture_output=True, text=True, timeout=60)
    assert "release-train" in listed.stdout, listed.stdout + listed.stderr
    assert (home / ".memu" / "hosts" / "claude-code" / ".session_manifest.claude-code.json").exists()
    status = json.loads(_run(env, "schedule", "status", "--json").stdout)
    assert status["installed"] and status["backend"] == "cron" and status["last_run"]["exit"] == 0

    removed = _run(env, "schedule", "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert _current() == THEIRS, "uninstall leaves the crontab byte-identical to before"


@pytest.mark.usefixtures("cron_daemon")
def test_verify_passes_in_a_bare_environment_and_names_a_missing_agent(tmp_path: Path) -> None:
    _, env = _home(tmp_path)
    agent = _agent(tmp_path)
    assert _run(env, "schedule", "install", "--agent-command", f"{agent} -p {{prompt}}").returncode == 0
    verified = _run(env, "schedule", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "all checks passed" in verified.stdout
    agent.unlink()
    failed = _run(env, "schedule", "verify")
    assert failed.returncode == 1
    assert f"FAIL agent: {agent} is gone or not executable" in failed.stdout
    _run(env, "schedule", "uninstall")


def test_install_names_an_agent_that_is_not_on_path(tmp_path: Path) -> None:
    _, env = _home(tmp_path)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin"
    done = _run(env, "schedule", "install", "--backend", "cron")
    assert done.returncode == 2
    assert "the agent command 'claude' is not on PATH" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("host", ["codex", "openclaw", "workbuddy", "cola"])
def test_hosts_with_their_own_scheduler_get_the_exact_steps(tmp_path: Path, host: str) -> None:
    _, env = _home(tmp_path)
    done = subprocess.run(
        [_binary(f"memu-{host}"), "schedule", "install"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert f"memu-bridging-{host}" in done.stdout
    assert f"memu-{host} prepare" in done.stdout and f"memu-{host} commit" in done.stdout
    assert _current() is None or f"memu-bridging-{host}" not in (_current() or "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    verified = subprocess.run(
        [_binary(f"memu-{host}"), "schedule", "verify"], env=env, capture_output=True, text=True, timeout=60
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "none has committed yet" in verified.stdout


def test_each_agent_on_the_generic_adapter_gets_its_own_entry(tmp_path: Path) -> None:
    if shutil.which("crontab") is None:
        pytest.skip("cron is not installed (.ci/run installs it)")
    home, env = _home(tmp_path)
    agent = _agent(tmp_path)
    before = _current()
    generic = _binary("memu-agent")
    tree = home / ".memu" / "hosts" / "agent-foo"
    try:
        where = ["--base-dir", str(tree), "--session-dir", str(home / "logs")]
        done = subprocess.run(
            [generic, "schedule", "install", *where, "--agent-command", f"{agent} --headless {{prompt}}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "# memu:memu-bridging-agent-foo" in (_current() or "")
        prompt = (tree / "bridge-prompt.txt").read_text(encoding="utf-8")
        assert f"memu-agent prepare --base-dir {tree} --session-dir {home / 'logs'}" in prompt
        assert f"memu-agent commit --base-dir {tree}" in prompt
        wrapper = (tree / "bridge.sh").read_text(encoding="utf-8")
        assert f"schedule run --scheduled --base-dir '{tree}'" in wrapper
        status = subprocess.run(
            [generic, "schedule", "status", "--json", "--base-dir", str(tree)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(status.stdout)["task_name"] == "memu-bridging-agent-foo"
        gone = subprocess.run(
            [generic, "schedule", "uninstall", "--base-dir", str(tree)], env=env, capture_output=True, text=True
        )
        assert gone.returncode == 0 and "removed memu-bridging-agent-foo" in gone.stdout
        assert _current() == before
    finally:
        if before is None:
            _crontab("-r")
        else:
            _crontab("-", stdin=before)
