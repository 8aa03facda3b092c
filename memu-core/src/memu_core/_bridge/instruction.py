"""The instruction seam: a managed block in the host's instruction file (and, on skill hosts, a
``memu-retrieve`` skill it points at) that tells the agent to call ``retrieve``.

The block is delimited by markers naming the binary, so two hosts sharing one file each manage
their own block. Install, update and remove are idempotent, atomic, keep a ``.bak`` of the
previous file, and leave every byte outside the block as it was.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from memu_core._atomic import write_text
from memu_core._bridge import templates

SKILL_NAME = "memu-retrieve"
END_MARKER = "<!-- memu:end -->"


def begin_marker(binary: str) -> str:
    """The first line of ``binary``'s block."""
    return f"<!-- memu:begin — managed block, do not edit ({binary} install-instruction) -->"


def _block_re(binary: str) -> re.Pattern[str]:
    return re.compile(
        "^" + re.escape(begin_marker(binary)) + r"\n.*?^" + re.escape(END_MARKER) + r"\n?",
        re.MULTILINE | re.DOTALL,
    )


def retrieval_body(binary: str) -> str:
    """The shared retrieval procedure, for ``binary``."""
    return templates.resolve("retrieval-body").format(binary=binary)


def instruction_text(binary: str, *, skill: bool) -> str:
    """The block's text: a pointer to the skill on skill hosts, the full procedure otherwise."""
    if skill:
        return templates.embedded("instruction-pointer").format(binary=binary)
    return templates.embedded("instruction-inline").format(body=retrieval_body(binary))


def skill_text(binary: str) -> str:
    """The ``memu-retrieve`` skill document."""
    return templates.embedded("retrieval-skill").format(body=retrieval_body(binary))


def block(binary: str, text: str) -> str:
    """The managed block as written to disk."""
    if not text.endswith("\n"):
        text += "\n"
    return f"{begin_marker(binary)}\n{text}{END_MARKER}\n"


def patch(current: str, binary: str, text: str) -> str:
    """``current`` with ``binary``'s block set to ``text`` (replaced in place, or appended).

    Appending adds a blank line after text that ends with a newline, and just the newline to
    text that lacks one; :func:`strip` relies on that difference to restore the file exactly.
    """
    new_block = block(binary, text)
    pattern = _block_re(binary)
    if pattern.search(current):
        return pattern.sub(lambda _m: new_block, current, count=1)
    if not current:
        return new_block
    return f"{current}\n{new_block}"


def strip(current: str, binary: str) -> str:
    """``current`` without ``binary``'s block; undoes an appending :func:`patch` byte for byte."""
    m = _block_re(binary).search(current)
    if m is None:
        return current
    before, after = current[: m.start()], current[m.end() :]
    if before.endswith("\n"):
        before = before[:-1]  # the newline patch put in front of the block
    return before + after


@dataclass(slots=True)
class Change:
    """One file the command touched (or would touch)."""

    path: Path
    diff: str
    changed: bool


def _diff(path: Path, old: str, new: str) -> str:
    if old == new:
        return ""
    import difflib  # only when something changes: prepare refreshes on every run

    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), fromfile=str(path), tofile=str(path))
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def write_file(path: Path, new: str, *, dry_run: bool, backup: bool) -> Change:
    """Write ``new`` to ``path`` atomically (following a symlink), keeping ``<path>.bak``."""
    target = path.resolve() if path.is_symlink() else path
    old = _read(target)
    diff = _diff(path, old, new)
    if old == new or dry_run:
        return Change(path, diff, False)
    if backup and old:
        shutil.copy2(target, target.with_name(target.name + ".bak"))
    write_text(target, new)  # a replaced file keeps its mode
    return Change(path, diff, True)


def install(path: Path, binary: str, skills_dir: Path | None, *, dry_run: bool = False) -> list[Change]:
    """Install or update the skill (first) and the block (second), so no pointer names a missing skill."""
    changes: list[Change] = []
    if skills_dir is not None:
        skill_file = skills_dir / SKILL_NAME / "SKILL.md"
        changes.append(write_file(skill_file, skill_text(binary), dry_run=dry_run, backup=False))
    text = instruction_text(binary, skill=skills_dir is not None)
    changes.append(write_file(path, patch(_read(path), binary, text), dry_run=dry_run, backup=True))
    return changes


def remove(path: Path, binary: str, skills_dir: Path | None, *, dry_run: bool = False) -> list[Change]:
    """Remove the block (first) and the skill (second); a missing block or file is a no-op."""
    changes: list[Change] = []
    current = _read(path)
    stripped = strip(current, binary)
    if stripped != current:
        changes.append(write_file(path, stripped, dry_run=dry_run, backup=True))
    if skills_dir is not None:
        folder = skills_dir / SKILL_NAME
        if (folder / "SKILL.md").is_file():
            if not dry_run:
                shutil.rmtree(folder)
            changes.append(Change(folder, f"removed {folder}{os.sep}\n", not dry_run))
    return changes


def refresh(path: Path, binary: str, skills_dir: Path | None) -> list[Change]:
    """Bring an installed block and skill up to date; never installs where nothing is installed."""
    changes: list[Change] = []
    if skills_dir is not None and (skills_dir / SKILL_NAME / "SKILL.md").is_file():
        changes.append(
            write_file(skills_dir / SKILL_NAME / "SKILL.md", skill_text(binary), dry_run=False, backup=False)
        )
    current = _read(path)
    if _block_re(binary).search(current):
        text = instruction_text(binary, skill=skills_dir is not None)
        changes.append(write_file(path, patch(current, binary, text), dry_run=False, backup=True))
    return [c for c in changes if c.changed]
