"""``memu-cursor``: the guides, the per-project instruction, and the whole bridging loop."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from memu_host_cursor.plugin import memu_register_hosts
from memu_host_cursor.spec import SPEC

from memu_core.host import run_host
from memu_core.testing.rehearse import call, run_cycle

FIXTURES = Path(__file__).parent / "fixtures"
SID = "c0ffee01-1111-4222-8333-444455556666"


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-cursor" and SPEC.session_id_env == "CURSOR_CONVERSATION_ID"
    assert SPEC.make_source("/x").name == "cursor"


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-cursor" in out and "{{" not in out


def test_instruction_goes_into_the_project(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = home / "shop"
    project.mkdir()
    monkeypatch.chdir(project)
    code, out, _ = call(SPEC, "install-instruction")
    assert code == 0, out
    text = (project / "AGENTS.md").read_text()
    assert "memu-cursor retrieve" in text and "memu:begin" in text
    assert not (home / ".cursor").exists()
    assert call(SPEC, "remove-instruction")[0] == 0
    assert "memu:begin" not in (project / "AGENTS.md").read_text()


def _install_fixtures(home: Path) -> Path:
    root = home / ".cursor" / "projects"
    shutil.copytree(FIXTURES / "projects", root)
    return root


def test_bridging_loop(home: Path) -> None:
    _install_fixtures(home)
    cycle = run_cycle(
        SPEC,
        memory=(
            "shop-deploys",
            "How the shop API is deployed",
            "The shop API ships with ./deploy.sh --blue-green.",
        ),
        skill=(
            "blue-green-deploy",
            "Deploying the shop API",
            "1. Run ./deploy.sh --blue-green.\n2. Watch traffic.",
        ),
        query="how is the shop API deployed",
    )
    assert "prepared 1 session(s) -> 3 job(s)" in cycle.prepare_out
    assert [r["role"] for r in cycle.conversation] == ["user", "assistant", "assistant"]
    assert len(cycle.full) == 5
    assert "committed 2 recall file(s)" in cycle.commit_out
    assert {"shop-deploys", "blue-green-deploy"} <= {f["name"] for f in cycle.retrieved["files"]}
    _code, out, _ = call(SPEC, "prepare")
    assert "prepared 0 session(s)" in out


def test_a_bridging_run_never_mines_itself(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _install_fixtures(home)
    own = root / "-home-u--memu-hosts-cursor" / "agent-transcripts" / "run-1" / "run-1.jsonl"
    own.parent.mkdir(parents=True)
    own.write_text('{"role":"user","message":{"content":"run the memu bridging task"}}\n')
    monkeypatch.setenv("MEMU_BRIDGING_RUN", "1")
    monkeypatch.setenv("CURSOR_CONVERSATION_ID", "run-1")
    code, out, err = call(SPEC, "prepare")
    assert code == 0, err
    assert "prepared 1 session(s)" in out and "run-1" in out
    base = home / ".memu" / "hosts" / "cursor"
    assert "run the memu" not in (base / "sessions" / "1.jsonl").read_text()
