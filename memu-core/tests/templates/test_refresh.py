"""The installed retrieval procedure records its version and source; a refresh rewrites it only
with a strictly newer one (skip, never downgrade), while an explicit install writes what resolves."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._bridge import instruction

from .conftest import Publisher

SKILL = """<!-- memu-template retrieval-skill v{version} -->
---
name: memu-retrieve
description: the team's recall skill, release {version}
---
# Team recall

Run `{{binary}} retrieve "<query>"` first (team release {version}).
"""


def test_inline_refresh_skips_without_the_server_and_upgrades_to_a_newer_version(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = memu_home / "AGENTS.md"
    publisher.put("retrieval-skill.txt", SKILL.format(version=2))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    instruction.install(agents, "memu-agent", None)
    installed = agents.read_text()
    assert "team release 2" in installed and "<!-- memu:template retrieval-skill v2 (server) -->" in installed
    assert "# Team recall" not in installed and "name: memu-retrieve" not in installed  # body only

    monkeypatch.delenv("MEMU_TEMPLATE_BASE_URL")  # the scheduled run's environment
    assert instruction.refresh(agents, "memu-agent", None) == []
    assert agents.read_text() == installed

    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    publisher.put("retrieval-skill.txt", SKILL.format(version=3))
    (change,) = instruction.refresh(agents, "memu-agent", None)
    assert change.path == agents and "team release 3" in agents.read_text()

    publisher.stop()  # offline: the cache (v3) is no newer than what is installed
    assert instruction.refresh(agents, "memu-agent", None) == []


def test_skill_refresh_never_downgrades(memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch) -> None:
    claude, skills = memu_home / "CLAUDE.md", memu_home / "skills"
    skill_file = skills / "memu-retrieve" / "SKILL.md"
    publisher.put("retrieval-skill.txt", SKILL.format(version=4))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    instruction.install(claude, "memu-claude-code", skills)
    installed = skill_file.read_text()
    assert installed.startswith("---\nname: memu-retrieve\n")
    assert installed.endswith("<!-- memu:template retrieval-skill v4 (server) -->\n")

    publisher.put("retrieval-skill.txt", SKILL.format(version=1))  # older than what is installed
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    assert instruction.refresh(claude, "memu-claude-code", skills) == []
    monkeypatch.delenv("MEMU_TEMPLATE_BASE_URL")
    assert instruction.refresh(claude, "memu-claude-code", skills) == []
    assert skill_file.read_text() == installed

    instruction.install(claude, "memu-claude-code", skills)  # an explicit install takes what resolves
    assert "(embedded) -->" in skill_file.read_text()


def test_a_block_without_a_stamp_is_brought_up_to_date_once(memu_home: Path) -> None:
    agents = memu_home / "AGENTS.md"
    agents.write_text(instruction.patch("# notes\n", "memu-agent", "an older memu's procedure\n"))
    (change,) = instruction.refresh(agents, "memu-agent", None)
    assert "(embedded) -->" in agents.read_text()
    assert instruction.refresh(agents, "memu-agent", None) == []
    assert change.path == agents


def test_refresh_never_bootstraps(memu_home: Path) -> None:
    agents = memu_home / "AGENTS.md"
    agents.write_text("# mine\n")
    assert instruction.refresh(agents, "memu-agent", memu_home / "skills") == []
    assert agents.read_text() == "# mine\n" and not (memu_home / "skills").exists()
