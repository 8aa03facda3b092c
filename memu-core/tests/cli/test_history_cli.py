"""``memu show/edit/history/diff/restore/stats`` and ``retrieve --format text`` (issue 19) on a
real SQLite store; ``memu edit`` runs a real editor (a small Python script as ``$EDITOR``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core._cli.main import MEMU
from memu_core._cli.shell import run

EDITOR = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
text = path.read_text(encoding="utf-8")
mode = pathlib.Path(sys.argv[0]).with_suffix(".mode").read_text().strip()
if mode == "append":
    path.write_text(text + "\\n- then push the tag", encoding="utf-8")
elif mode == "break":
    path.write_text(text.replace("---\\n-", "\\n-", 1), encoding="utf-8")
elif mode == "rename":
    path.write_text(text.replace("name: deploy", "name: other"), encoding="utf-8")
elif mode == "race":
    # Someone else (a bridging run) commits while the editor is open.
    import subprocess
    payload = pathlib.Path(sys.argv[0]).with_suffix(".json")
    subprocess.run([sys.executable, "-m", "memu_core._cli.main", "commit", str(payload)], check=True,
                   capture_output=True)
    path.write_text(text + "\\n- my edit", encoding="utf-8")
elif mode == "fail":
    sys.exit(3)
"""


@pytest.fixture
def env(memu_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "MEMU_DB": str(tmp_path / "memu.sqlite3"),
        "MEMU_EMBED_PROVIDER": "none",
        "MEMU_SERVE_AUTOSTART": "0",
        "TMPDIR": str(tmp_path),
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return {**os.environ, **values}


def memu(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(MEMU, list(args))
    out, err = capsys.readouterr()
    return code, out, err


def commit(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, name: str = "deploy") -> None:
    payload = tmp_path / "payload.json"
    item = {"name": name, "description": "how we deploy", "content": content}
    payload.write_text(json.dumps({"recall_files": [item]}), encoding="utf-8")
    assert memu(capsys, "commit", str(payload))[0] == 0


def test_show_history_diff_restore_and_undo_forget(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(capsys, tmp_path, "- run make deploy")
    commit(capsys, tmp_path, "- run make deploy\n- tag it")
    code, out, _ = memu(capsys, "show", "deploy")
    assert code == 0
    assert out == "---\nname: deploy\ndescription: how we deploy\ntrack: memory\n---\n- run make deploy\n- tag it\n"
    shown = json.loads(memu(capsys, "show", "deploy", "--json")[1])
    assert (shown["version"], shown["actor"], shown["action"], shown["current"]) == (2, "memu commit", "commit", True)
    assert json.loads(memu(capsys, "show", "deploy", "--version", "1", "--json")[1])["content"] == "- run make deploy"

    code, out, _ = memu(capsys, "history", "deploy")
    assert code == 0 and out.splitlines()[0] == "memory/deploy: 2 version(s), newest first"
    assert "v2" in out.splitlines()[1] and "memu commit" in out and "(+9 B)" in out and "(current)" in out
    listed = json.loads(memu(capsys, "history", "deploy", "--json")[1])["versions"]
    assert [(v["version"], v["size_change"]) for v in listed] == [(2, 9), (1, None)]
    assert "content" not in listed[0]

    code, out, _ = memu(capsys, "diff", "deploy")
    assert code == 0 and "--- memory/deploy v1" in out and "+++ memory/deploy v2" in out and "\n+- tag it\n" in out
    assert json.loads(memu(capsys, "diff", "deploy", "2", "1", "--json")[1])["diff"].count("\n-- tag it") == 1

    code, out, _ = memu(capsys, "restore", "deploy", "1")
    assert (code, out) == (0, "restored version 1 of memory/deploy: now version 3\n")
    assert memu(capsys, "forget", "deploy")[0] == 0
    code, out, err = memu(capsys, "show", "deploy")
    assert code == 2 and "was forgotten (version 4); `memu restore deploy --undo-forget` brings it back" in err
    back = json.loads(memu(capsys, "restore", "deploy", "--undo-forget", "--json")[1])
    assert (back["version"], back["action"], back["content"]) == (5, "restore", "- run make deploy")


def test_bad_input_is_one_line_naming_the_fix(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(capsys, tmp_path, "- one")
    cases = {
        ("show", "absent"): "no recall file 'absent' in this scope; `memu list-files` shows what exists",
        ("history", "absent"): "'absent' has no history in this scope",
        ("diff", "deploy"): "memory/deploy has one version only: nothing to compare it with",
        ("restore", "deploy", "7"): "'deploy' has no version 7; kept are 1 (see `memu history deploy`)",
        ("restore", "deploy"): "restore needs exactly one of VERSION (see `memu history NAME`) or --undo-forget",
        ("restore", "deploy", "--undo-forget"): "memory/deploy is stored (version 1); there is no forget to undo",
        ("show", "../etc"): "name",
        ("history", "deploy", "--track", "notes"): "unknown track 'notes'; use one of memory, skill",
    }
    for args, message in cases.items():
        code, out, err = memu(capsys, *args)
        assert code == 2, args
        assert out == "" and err.count("\n") == 1 and err.startswith("error: ") and message in err, (args, err)


def test_stats_counts_per_track_and_host(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(capsys, tmp_path, "- one\n- two")
    commit(capsys, tmp_path, "- one\n- three")
    stats = json.loads(memu(capsys, "stats", "--json")[1])
    assert (stats["files"], stats["segments"], stats["vectors"], stats["versions"]) == (1, 3, 0, 1)
    assert stats["tracks"] == {"memory": 1} and stats["hosts"] == {"memu": 1}
    assert stats["embedder"] is None and stats["size_bytes"] > 0 and stats["history_keep"] == 20
    code, out, _ = memu(capsys, "stats")
    assert code == 0 and "files      1  (memory 1)" in out and "embedder   none (lexical only)" in out


def test_retrieve_text_format(env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(capsys, tmp_path, "- run make deploy\n- the cat is called Tom")
    code, out, _ = memu(capsys, "retrieve", "cat called", "--format", "text")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith("lexical search, best first:")
    assert lines[1].startswith(" 1. ") and "memory/deploy  - the cat is called Tom" in lines[1]
    assert "files:" in lines and any("memory/deploy - how we deploy" in line for line in lines)
    assert json.loads(memu(capsys, "retrieve", "cat called")[1])["mode"] == "lexical"  # JSON stays the default
    code, _, err = memu(capsys, "retrieve", "cat", "--format", "yaml")
    assert code == 2 and "--format 'yaml' is not known; use --format json (the default) or --format text" in err
    forgot = json.loads(memu(capsys, "forget", "deploy", "--json")[1])
    assert forgot["forgotten"][0]["name"] == "deploy"


def _edit(env: dict[str, str], tmp_path: Path, mode: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR, encoding="utf-8")
    script.with_suffix(".mode").write_text(mode)
    editor_env = {**env, "EDITOR": f"{sys.executable} {script}"}
    editor_env.pop("VISUAL", None)
    return subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "edit", "deploy", *args],
        env=editor_env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_edit_commits_on_save_refuses_bad_frontmatter_and_conflicts(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(capsys, tmp_path, "- run make deploy")
    done = _edit(env, tmp_path, "append")
    assert (done.returncode, done.stdout, done.stderr) == (0, "saved memory/deploy as version 2\n", "")
    version = json.loads(memu(capsys, "show", "deploy", "--json")[1])
    assert version["content"] == "- run make deploy\n- then push the tag" and version["actor"] == "memu edit"
    assert version["action"] == "edit"
    assert _edit(env, tmp_path, "none").stdout == "no change to memory/deploy: nothing saved\n"

    broken = _edit(env, tmp_path, "break")
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1
    assert "the frontmatter opened with '---' is never closed" in broken.stderr
    kept = Path(broken.stderr.split("--from ")[1].rstrip("`\n"))
    assert kept.is_file() and "then push the tag" in kept.read_text(encoding="utf-8")
    assert json.loads(memu(capsys, "show", "deploy", "--json")[1])["version"] == 2  # nothing written

    renamed = _edit(env, tmp_path, "rename")
    assert renamed.returncode == 2 and "the name was changed to 'other'; set it back to 'deploy'" in renamed.stderr

    failed = _edit(env, tmp_path, "fail")
    assert failed.returncode == 1 and "exited with code 3; nothing was saved" in failed.stderr

    (tmp_path / "editor.json").write_text(
        json.dumps({"recall_files": [{"name": "deploy", "content": "- a bridging run wrote this"}]}), encoding="utf-8"
    )
    race = _edit(env, tmp_path, "race")
    assert race.returncode == 4 and race.stderr.count("\n") == 1
    assert "memory/deploy: it changed meanwhile (now version 3) by someone else; nothing was written" in race.stderr
    saved_edit = Path(race.stderr.rsplit("kept in ", 1)[1].strip())
    assert "- my edit" in saved_edit.read_text(encoding="utf-8")
    assert json.loads(memu(capsys, "show", "deploy", "--json")[1])["content"] == "- a bridging run wrote this"
    # The kept edit still names the version it started from, so carrying on conflicts again.
    again = _edit(env, tmp_path, "none", "--from", str(saved_edit))
    assert again.returncode == 4 and "changed meanwhile" in again.stderr
