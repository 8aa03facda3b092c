"""``memu-server serve --templates DIR`` publishes a team's templates, and memu clients resolve
from it: the real server process on 127.0.0.1, the real resolver in this process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from memu_server.testing import child_env, free_port, start_process

from memu_core._bridge import template_fetch, templates
from memu_core.host import run_host

SKILL_JOB = "<!-- memu-template skill-job v7 -->\nTEAM skill job {input_path} {track_dir} {resource_log}\n"
GUIDE = (
    "<!-- memu-template docs/hermes/BRIDGING_TASK.md v2 -->\n"
    "TEAM task {{task_name}} (was {{former_task_names}}; all {{all_task_names}})\n"
)


@pytest.fixture
def team_server(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "team-templates"
    (folder / "instructions").mkdir(parents=True)
    (folder / "docs" / "hermes").mkdir(parents=True)
    (folder / "instructions" / "skill-job.txt").write_text(SKILL_JOB)
    (folder / "docs" / "hermes" / "BRIDGING_TASK.md").write_text(GUIDE)
    (folder / "secret.env").write_text("NOT=served\n")
    port = free_port()
    env = child_env(str(tmp_path / "server-home"), MEMU_DB=str(tmp_path / "server.sqlite3"))
    (tmp_path / "server-home").mkdir()
    proc = start_process(port, env, "--templates", str(folder))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(15)


def test_memu_resolves_from_a_published_folder(
    memu_home: Path, team_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    template_fetch.forget()
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", f"{team_server}/templates/instructions")
    monkeypatch.setenv("MEMU_DOCS_BASE_URL", f"{team_server}/templates/docs")
    chosen = templates.choose("skill-job")
    assert (chosen.source, chosen.version_text) == ("server", "v7")
    assert templates.choose("memory-job").source == "embedded"  # not published: the installed text
    assert run_host("hermes", ["docs", "task"]) == 0
    assert capsys.readouterr().out.startswith("TEAM task memu-bridging-hermes")


@pytest.mark.parametrize("path", ["secret.env", "../server.sqlite3", "instructions/", "instructions/none.txt"])
def test_only_template_files_inside_the_folder_are_served(team_server: str, path: str) -> None:
    answer = httpx.get(f"{team_server}/templates/{path}", trust_env=False)
    assert answer.status_code == 404


def test_a_missing_templates_folder_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = child_env(str(tmp_path), MEMU_DB=str(tmp_path / "s.sqlite3"))
    done = subprocess.run(
        [sys.executable, "-m", "memu_server", "serve", "--port", "0", "--templates", str(tmp_path / "nope")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: --templates ") and "not a folder" in done.stderr
    assert done.stderr.count("\n") == 1
