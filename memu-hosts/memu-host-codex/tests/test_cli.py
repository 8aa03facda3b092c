"""The ``memu-codex`` binary: the shared verbs, the instruction seam and the guides."""

from __future__ import annotations

from pathlib import Path

import pytest
from memu_host_codex.plugin import memu_register_hosts
from memu_host_codex.spec import SPEC

from memu_core.host import run_host


def test_plugin_registers_the_spec() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-codex"
    assert SPEC.make_source("/x").name == "codex"


@pytest.mark.parametrize("topic", ["install", "task", "uninstall"])
def test_docs_print_rendered_guides(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["docs", topic]) == 0
    out = capsys.readouterr().out
    assert "memu-codex" in out and "{{" not in out


def test_install_and_remove_instruction(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agents = home / ".codex" / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_text("# My rules\nbe kind")
    assert run_host(SPEC, ["install-instruction"]) == 0
    skill = home / ".codex" / "skills" / "memu-retrieve" / "SKILL.md"
    assert "memu-codex retrieve" in skill.read_text()
    text = agents.read_text()
    assert text.count("memu:begin") == 1 and text.startswith("# My rules\nbe kind\n")
    assert (agents.parent / "AGENTS.md.bak").read_text() == "# My rules\nbe kind"
    assert run_host(SPEC, ["install-instruction"]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert run_host(SPEC, ["install-instruction", "--remove"]) == 0
    assert agents.read_text() == "# My rules\nbe kind"
    assert not skill.parent.exists()
    assert run_host(SPEC, ["remove-instruction"]) == 0
    assert "no managed block to remove" in capsys.readouterr().out


def test_prepare_without_a_session_log_exits_2(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_host(SPEC, ["prepare"]) == 2
    assert "no Codex session log at" in capsys.readouterr().err
