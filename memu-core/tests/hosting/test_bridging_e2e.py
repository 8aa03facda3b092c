"""The whole loop through the CLI with the real local backend (SQLite store, lexical search):
sessions → prepare → the agent's edits → commit → retrieve."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core.host import run_host

from .conftest import TOY, toy_line, write_session


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_host(TOY, list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _doc(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def _jobs(base: Path) -> list[str]:
    return sorted((base / "jobs").glob("*.txt"), key=lambda p: int(p.stem))  # type: ignore[return-value]


def test_prepare_agent_commit_retrieve(sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_session(
        sessions_root,
        "s1",
        toy_line("user", "I deploy the billing service with make ship, never by hand", "2026-01-01T10:00:00Z"),
        toy_line("tool", "ran make ship; wrote /tmp/x"),
        toy_line("assistant", "Deployed. Token used: ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        toy_line("meta", "ignored"),
    )
    code, out, _ = _run(capsys, "prepare")
    assert code == 0, out
    base = home / ".memu" / "hosts" / "toy"
    assert "prepared 1 session(s) -> 3 job(s)" in out
    assert "redacted 1 secret value(s)" in out
    conv = (base / "sessions" / "1.jsonl").read_text().splitlines()
    full = (base / "sessions" / "1_full.jsonl").read_text().splitlines()
    assert [json.loads(x)["role"] for x in conv] == ["user", "assistant"]
    assert [json.loads(x)["role"] for x in full] == ["user", "tool", "assistant"]
    assert "ghp_" not in "".join(full) and "[REDACTED:github]" in conv[1]
    jobs = _jobs(base)
    assert [p.name for p in jobs] == ["1.txt", "2.txt", "3.txt"]  # type: ignore[attr-defined]
    memory_job, skill_job, resource_job = (p.read_text() for p in jobs)  # type: ignore[attr-defined]
    assert str(base / "sessions" / "1.jsonl") in memory_job and str(base / "memory") in memory_job
    assert str(base / "sessions" / "1_full.jsonl") in skill_job and str(base / ".resource.tmp") in skill_job
    assert "memu-toy verify-resources" in resource_job and str(base / "resources.md") in resource_job
    assert not (base / ".session_manifest.toy.json").exists()  # staged only

    # The agent: follow each job by writing where it says.
    memory_dir = Path(re.search(r"^  (/.*memory)$", memory_job, re.M).group(1))  # type: ignore[union-attr]
    skill_dir = Path(re.search(r"^  (/.*skill)$", skill_job, re.M).group(1))  # type: ignore[union-attr]
    memory_dir.mkdir(parents=True, exist_ok=True)
    skill_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "deploy-habits.md").write_text(
        _doc("deploy-habits", "How the user deploys services", "The billing service ships with make ship.\n")
    )
    (skill_dir / "ship-billing.md").write_text(
        _doc("ship-billing", "Deploying the billing service", "1. Run make ship.\n2. Check the dashboard.\n")
    )
    touched = home / "notes.txt"
    touched.write_text("release notes")
    with (base / ".resource.tmp").open("a") as fh:
        fh.write(f"{touched}\nrelative/path.txt\n{touched}\n")
    code, out, _ = _run(capsys, "verify-resources")
    assert out.startswith("1 resource(s) written to")
    resources_md = base / "resources.md"
    resources_md.write_text(resources_md.read_text().replace("description: ", "description: Release notes of billing"))

    code, out, _ = _run(capsys, "commit")
    assert code == 0
    assert "committed 2 recall file(s) and 1 resource(s)" in out
    assert "  - memory/deploy-habits" in out and "  - skill/ship-billing" in out
    assert json.loads((base / ".session_manifest.toy.json").read_text())["s1.jsonl"]["lines"] == 4
    assert not list((base / "jobs").glob("*.txt")) and not (base / "resources.md").exists()
    assert not (base / ".bridging_run.toy.json").exists()

    code, out, _ = _run(capsys, "retrieve", "how does the user deploy the billing service")
    assert code == 0
    result = json.loads(out)
    names = {f["name"] for f in result["files"]}
    assert {"deploy-habits", "ship-billing"} <= names
    seg = result["segments"][0]
    assert seg["source_file"] in ("memory/deploy-habits", "skill/ship-billing") and "recall_file_id" not in seg
    mirrored = next(f for f in result["files"] if f["name"] == "deploy-habits")
    assert mirrored["path"] == str(memory_dir / "deploy-habits.md") and "content" not in mirrored
    code, out, _ = _run(capsys, "retrieve", "release notes billing")
    assert json.loads(out)["resources"][0]["path"] == str(touched)

    # Nothing new: the next cycle mines nothing and re-submits nothing.
    code, out, _ = _run(capsys, "prepare")
    assert "prepared 0 session(s) -> 0 job(s)" in out and "nothing to mine" in out
    code, out, _ = _run(capsys, "commit")
    assert out.strip() == "nothing to commit"


def test_retrieve_writes_nothing(sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memu_core._bridge.backend import open_backend

    open_backend().commit_results(
        recall_files=[{"name": "coffee", "track": "memory", "description": "drinks", "content": "No sugar."}]
    )
    before = sorted(p for p in home.rglob("*") if p.is_file() and "sqlite" not in p.name)
    code, out, _ = _run(capsys, "retrieve", "sugar")
    assert code == 0
    [f] = json.loads(out)["files"]
    assert f["content"] == "No sugar." and "path" not in f  # no mirror copy yet: inline
    after = sorted(p for p in home.rglob("*") if p.is_file() and "sqlite" not in p.name)
    assert before == after


def test_empty_query_is_a_one_line_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "retrieve", "  ")
    assert code == 2 and err.startswith("error: the query is empty") and err.count("\n") == 1


def test_edits_deletions_and_trailing_newlines(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memu_core._bridge.backend import open_backend

    backend = open_backend()
    backend.commit_results(
        recall_files=[
            {"name": "keep me", "track": "memory", "description": "d1", "content": "line one"},
            {"name": "drop-me", "track": "memory", "description": "d2", "content": "obsolete"},
            {"name": "edit-me", "track": "skill", "description": "d3", "content": "step 1"},
        ]
    )
    write_session(sessions_root, "s", toy_line("user", "hello"))
    assert _run(capsys, "prepare")[0] == 0
    base = home / ".memu" / "hosts" / "toy"
    keep = base / "memory" / "keep-me.md"
    assert keep.read_text() == "---\nname: keep me\ndescription: d1\n---\nline one"
    keep.write_text(keep.read_text() + "\n")  # an editor adds a newline: not a change
    (base / "memory" / "drop-me.md").unlink()
    (base / "skill" / "edit-me.md").write_text(_doc("edit-me", "d3", "step 1\nstep 2\n"))
    (base / "memory" / ".edit-me.md.swp").write_text("editor noise")
    code, out, _ = _run(capsys, "commit")
    assert code == 0
    assert out.splitlines() == [
        "committed 1 recall file(s) and 0 resource(s)",
        "  - skill/edit-me",
        "  - forgot memory/drop-me",
    ]
    names = {f["name"] for f in backend.list_all_recall_files(limit=50)["recall_files"]}
    assert names == {"keep me", "edit-me"}


def test_unclosed_frontmatter_refuses_the_commit(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_session(sessions_root, "s", toy_line("user", "hello"))
    _run(capsys, "prepare")
    base = home / ".memu" / "hosts" / "toy"
    (base / "memory").mkdir(exist_ok=True)
    bad = base / "memory" / "bad.md"
    bad.write_text("---\nname: bad\nno closing line\n")
    code, _, err = _run(capsys, "commit")
    assert code == 2 and str(bad) in err and "never closed" in err
    assert (base / ".session_manifest.toy.json.pending").exists()  # nothing moved
    assert not (base / ".session_manifest.toy.json").exists()


@pytest.fixture
def private_umask() -> Iterator[None]:
    """What memu creates under ~/.memu is private (0700/0600): no permissions warning."""
    old = os.umask(0o077)
    yield
    os.umask(old)


@pytest.mark.usefixtures("private_umask")
def test_doctor_reports_each_check(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "doctor")
    assert code == 0
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out.splitlines() if not line.startswith(" ")}
    assert rows["mode"] == "local" and str(home / ".memu") in rows["store"]
    assert rows["embedder"].startswith("none (lexical search only")
    assert rows["vectors"] == "none stored yet" and rows["search"] == "lexical"
    assert rows["retrieval"].startswith("ok (0 hit(s)")
    # The host's own checks follow memu's, in the same format.
    assert rows["sessions"].startswith("WARN  no Toy session log at ")
    assert rows["instruction"].startswith(f"WARN  no memu block in {home / '.toy' / 'AGENTS.md'}")
    assert "own runs" not in out  # no sessions yet: nothing to keep its runs out of
    assert out.endswith("all checks passed (2 warning(s) above)\n")


@pytest.mark.usefixtures("private_umask")
def test_doctor_host_checks_pass_once_installed(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "install-instruction")[0] == 0
    code, out, err = _run(capsys, "doctor")
    assert code == 0 and err == ""
    assert f"sessions    {sessions_root}\n" in out
    assert f"instruction {home / '.toy' / 'AGENTS.md'}: memu block installed\n" in out
    assert "own runs    a scheduled run names its session through TOY_SESSION_ID\n" in out
    assert out.endswith("all checks passed\n")


def test_doctor_failure_is_one_line_with_exit_1(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = home / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("MEMU_DB", str(blocker / "memu.sqlite3"))
    code, out, err = _run(capsys, "doctor")
    assert code == 1 and err == "error: 1 check(s) failed (store); the FAIL rows above say how to fix them\n"
    assert "store       FAIL  cannot open: " in out and "            fix: point MEMU_DB at a writable place" in out
    assert "retrieval" not in out  # nothing after the store could be checked


def test_bad_flag_value_is_a_usage_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "prepare", "--max-jobs", "many")
    assert code == 2 and "--max-jobs" in err
    code, _, err = _run(capsys, "prepare", "--max-jobs", "-1")
    assert code == 2 and "--max-jobs -1" in err
    code, _, err = _run(capsys, "prepare", "--budget-kb", "0")
    assert code == 2 and "--budget-kb 0" in err
