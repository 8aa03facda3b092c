"""``memu-hermes``: guides, the inline SOUL.md block, and the bridging loop over a live ``state.db``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memu_host_hermes.plugin import memu_register_hosts
from memu_host_hermes.spec import SPEC

from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle

NEW = "20260802_100000_ef34.gh"


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-hermes" and not SPEC.skills_dir


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-hermes" in out and "{{" not in out


def test_inline_instruction_in_soul(home: Path) -> None:
    assert call(SPEC, "install-instruction")[0] == 0
    soul = (home / ".hermes" / "SOUL.md").read_text()
    assert "memu-hermes retrieve" in soul and "memu-retrieve" not in soul.split("memu:begin")[0]
    assert not (home / ".hermes" / "skills").exists()


def test_bridging_loop_with_self_skip(home: Path, hermes_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_db.path.parent))
    # This run is itself a Hermes session, already logging into the same database.
    hermes_db.session("run.42", 500.0)
    hermes_db.message("run.42", "user", 501.0, "run the memu bridging task now")
    monkeypatch.setenv("MEMU_BRIDGING_RUN", "1")
    monkeypatch.setenv("HERMES_SESSION_ID", "run.42")
    cycle = run_cycle(
        SPEC,
        memory=(
            "build-cache",
            "How the build cache is cleaned",
            "Clean the build cache with make clean-cache.",
        ),
        skill=("clean-cache", "Cleaning the build cache", "1. make clean-cache\n2. never rm -rf build/"),
        query="how do I clean the build cache",
    )
    assert "prepared 2 session(s) -> 5 job(s)" in cycle.prepare_out
    texts = [r.get("content") for r in cycle.conversation]
    assert "run the memu bridging task now" not in texts and "Port 8088." in texts
    assert {"build-cache", "clean-cache"} <= {f["name"] for f in cycle.retrieved["files"]}
    cursor = (home / ".memu" / "hosts" / "hermes" / ".session_manifest.hermes.json").read_text()
    assert NEW in cursor and "run.42" not in cursor
    # The host keeps writing; the next run takes only the new row.
    hermes_db.message(NEW, "user", 600.0, "also prune docker images weekly")
    code, out, _ = call(SPEC, "prepare", "--session-dir", str(hermes_db.path))
    assert code == 0 and "prepared 1 session(s)" in out
    slice_ = (home / ".memu" / "hosts" / "hermes" / "sessions" / "1_full.jsonl").read_text().splitlines()
    assert len(slice_) == 1 and "docker" in slice_[0]
