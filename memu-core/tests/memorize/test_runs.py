"""Developer run workspaces (ADR 0019 of memU, docs/adr/0016 here): each prepare its own private
run, addressed only by id, kept on a backend error, removed after a commit, discarded without
the backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

FACT = "The release train leaves every Tuesday at 09:30 from the main branch."
SESSION = (
    json.dumps({"role": "user", "content": FACT}) + "\n" + json.dumps({"role": "assistant", "content": "Noted."}) + "\n"
)
UNREACHABLE = "postgresql://memu:pw@127.0.0.1:9/memu"
"""A store nothing answers at (port 9, discard): every backend call fails fast."""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    values = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    values.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    return values


def memu(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "memu")
    return subprocess.run([exe, *args], env=env, input=stdin, capture_output=True, text=True, timeout=120)


def prepare(env: dict[str, str], tmp_path: Path, name: str = "s.jsonl") -> dict[str, object]:
    session = tmp_path / name
    session.write_text(SESSION, encoding="utf-8")
    done = memu(env, "memorize", "prepare", str(session), "--json")
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def runs_root(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".memu" / "developer" / "runs"


def test_prepare_returns_everything_the_caller_needs(env: dict[str, str], tmp_path: Path) -> None:
    result = prepare(env, tmp_path)
    workspace = Path(str(result["workspace"]))
    assert workspace.parent == runs_root(env) and workspace.name == result["run"]
    assert oct(workspace.stat().st_mode & 0o777) == "0o700"
    jobs = [Path(p) for p in result["jobs"]]  # type: ignore[union-attr]
    assert [p.name for p in jobs] == ["1.txt", "2.txt", "3.txt"], "2N+1 jobs for one session"
    assert f"memu memorize verify-resources {result['run']}" in jobs[-1].read_text(encoding="utf-8")
    assert FACT in Path(str(result["transcripts"][0])).read_text(encoding="utf-8")  # type: ignore[index]
    assert result["next"] == f"memu memorize commit {result['run']}"


def test_concurrent_prepares_get_distinct_runs(env: dict[str, str], tmp_path: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: prepare(env, tmp_path, f"s{i}.jsonl"), range(4)))
    assert len({r["run"] for r in results}) == 4
    assert len(list(runs_root(env).iterdir())) == 4


def executor_writes(result: dict[str, object]) -> None:
    """What an executor does with the memory job: one memory file in the run's mirror."""
    memory = Path(str(result["workspace"])) / "memory"
    memory.mkdir(exist_ok=True)
    (memory / "release-train.md").write_text(
        f"---\nname: release-train\ndescription: When releases ship\n---\n{FACT}\n", encoding="utf-8"
    )


def test_a_commit_stores_the_executors_work_and_removes_the_run(env: dict[str, str], tmp_path: Path) -> None:
    result = prepare(env, tmp_path)
    executor_writes(result)
    done = memu(env, "memorize", "commit", str(result["run"]))
    assert done.returncode == 0, done.stderr
    assert "memory/release-train" in done.stdout
    assert not Path(str(result["workspace"])).exists()
    assert "release-train" in memu(env, "list-files").stdout


def test_a_backend_error_keeps_the_run_and_discard_needs_no_backend(env: dict[str, str], tmp_path: Path) -> None:
    result = prepare(env, tmp_path)
    executor_writes(result)
    broken = {**env, "MEMU_DB": UNREACHABLE}
    done = memu(broken, "memorize", "commit", str(result["run"]))
    assert done.returncode != 0
    assert "the run is kept" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert Path(str(result["workspace"])).is_dir()
    discarded = memu(broken, "memorize", "discard", str(result["run"]))
    assert discarded.returncode == 0, discarded.stderr
    assert not Path(str(result["workspace"])).exists()


@pytest.mark.parametrize("bad", ["../run-abcd1234", "/tmp/run-abcd1234", "run-abcd1234/..", "..", "latest", ""])
def test_path_syntax_is_refused(env: dict[str, str], bad: str) -> None:
    done = memu(env, "memorize", "commit", bad)
    assert done.returncode == 2
    assert "is not a run id" in done.stderr


def test_a_link_leading_out_of_the_runs_root_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    runs_root(env).mkdir(parents=True)
    (runs_root(env) / "run-evil1234").symlink_to(outside, target_is_directory=True)
    for verb in ("commit", "discard", "verify-resources"):
        done = memu(env, "memorize", verb, "run-evil1234")
        assert done.returncode == 2, verb
        assert "link" in done.stderr
    assert outside.is_dir(), "discard never follows the link"


def test_a_failed_prepare_leaves_no_directory(env: dict[str, str], tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(SESSION, encoding="utf-8")
    broken = {**env, "MEMU_DB": UNREACHABLE}
    done = memu(broken, "memorize", "prepare", str(good))
    assert done.returncode != 0
    assert not runs_root(env).exists() or not any(runs_root(env).iterdir())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "line 1 is not JSON"),
        ('{"role": "system", "content": "x"}\n', "no user or assistant turn"),
        ("[1, 2]\n", "is not a JSON object"),
    ],
)
def test_bad_sessions_are_refused_before_a_run_exists(
    env: dict[str, str], tmp_path: Path, content: str, message: str
) -> None:
    session = tmp_path / "bad.jsonl"
    session.write_text(content, encoding="utf-8")
    done = memu(env, "memorize", "prepare", str(session))
    assert done.returncode == 2 and message in done.stderr
    assert not runs_root(env).exists() or not any(runs_root(env).iterdir())


def test_stdin_and_the_session_count_bounds(env: dict[str, str], tmp_path: Path) -> None:
    from_stdin = memu(env, "memorize", "prepare", "-", "--json", stdin=SESSION)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert json.loads(from_stdin.stdout)["sessions"] == 1
    session = tmp_path / "s.jsonl"
    session.write_text(SESSION, encoding="utf-8")
    too_many = memu(env, "memorize", "prepare", *[str(session)] * 11)
    assert too_many.returncode == 2 and "1 to 10 sessions" in too_many.stderr
