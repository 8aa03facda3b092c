"""The managed instruction block: idempotent, byte-exact round trip, per-binary, atomic, backed up."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memu_core._bridge import instruction

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(lambda t: "memu:" not in t)


@given(current=TEXT)
def test_patch_then_strip_round_trips_byte_for_byte(current: str) -> None:
    patched = instruction.patch(current, "memu-codex", "retrieve first\n")
    assert instruction.strip(patched, "memu-codex") == current
    assert instruction.patch(patched, "memu-codex", "retrieve first\n") == patched
    assert patched.count(instruction.begin_marker("memu-codex")) == 1


@given(current=TEXT)
def test_two_binaries_keep_independent_blocks(current: str) -> None:
    both = instruction.patch(instruction.patch(current, "memu-codex", "a\n"), "memu-claude-code", "b\n")
    only_claude = instruction.strip(both, "memu-codex")
    assert instruction.begin_marker("memu-claude-code") in only_claude
    assert instruction.begin_marker("memu-codex") not in only_claude
    assert instruction.strip(only_claude, "memu-claude-code") == current


def test_update_replaces_the_block_in_place() -> None:
    old = instruction.patch("top\n", "memu-x", "old\n") + "user text after\n"
    new = instruction.patch(old, "memu-x", "new\n")
    assert new == old.replace("old\n", "new\n")


def test_install_writes_skill_then_pointer_with_backup(tmp_path: Path) -> None:
    target = tmp_path / "CLAUDE.md"
    target.write_text("# mine\n")
    os.chmod(target, 0o640)
    changes = instruction.install(target, "memu-claude-code", tmp_path / "skills")
    assert [c.path.name for c in changes] == ["SKILL.md", "CLAUDE.md"] and all(c.changed for c in changes)
    skill = (tmp_path / "skills" / "memu-retrieve" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: memu-retrieve\n") and 'memu-claude-code retrieve "<query>"' in skill
    text = target.read_text()
    assert "memu-retrieve" in text and "segments" not in text  # pointer, not the whole procedure
    assert (tmp_path / "CLAUDE.md.bak").read_text() == "# mine\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert not any(c.changed for c in instruction.install(target, "memu-claude-code", tmp_path / "skills"))


def test_inline_hosts_get_the_full_procedure(tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    instruction.install(target, "memu-agent", None)
    text = target.read_text()
    assert "segments" in text and "memu-agent retrieve" in text and not (tmp_path / "AGENTS.md.bak").exists()


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    [change] = instruction.install(target, "memu-agent", None, dry_run=True)
    assert not change.changed and change.diff and not target.exists()


def test_remove_block_then_skill_and_leave_foreign_dirs(tmp_path: Path) -> None:
    target = tmp_path / "CLAUDE.md"
    target.write_text("keep")
    instruction.install(target, "memu-claude-code", tmp_path / "skills")
    changes = instruction.remove(target, "memu-claude-code", tmp_path / "skills")
    assert [c.path.name for c in changes] == ["CLAUDE.md", "memu-retrieve"]
    assert target.read_text() == "keep" and not (tmp_path / "skills" / "memu-retrieve").exists()
    foreign = tmp_path / "skills" / "memu-retrieve"
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("not ours")
    assert instruction.remove(target, "memu-claude-code", tmp_path / "skills") == []
    assert (foreign / "notes.txt").exists()


def test_symlinked_instruction_file_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "AGENTS.md"
    real.parent.mkdir()
    real.write_text("x\n")
    link = tmp_path / "AGENTS.md"
    link.symlink_to(real)
    instruction.install(link, "memu-agent", None)
    assert link.is_symlink() and instruction.begin_marker("memu-agent") in real.read_text()


def test_refresh_never_installs(tmp_path: Path) -> None:
    target = tmp_path / "CLAUDE.md"
    assert instruction.refresh(target, "memu-claude-code", tmp_path / "skills") == []
    assert not target.exists() and not (tmp_path / "skills").exists()
    instruction.install(target, "memu-claude-code", tmp_path / "skills")
    skill = tmp_path / "skills" / "memu-retrieve" / "SKILL.md"
    skill.write_text("stale")
    [change] = instruction.refresh(target, "memu-claude-code", tmp_path / "skills")
    assert change.path == skill and "retrieve" in skill.read_text()
