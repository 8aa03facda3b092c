"""The instruction seam: a managed block in the host's instruction file (and, on skill hosts, a
``memu-retrieve`` skill it points at) that tells the agent to call ``retrieve``.

The block is delimited by markers naming the binary, so two hosts sharing one file each manage
their own block. Install, update and remove are idempotent, atomic, keep a ``.bak`` of the
previous file, and leave every byte outside the block as it was.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from memu_core._atomic import write_text
from memu_core._bridge import templates
from memu_core._bridge.template_text import UNVERSIONED, Candidate, Version, parse_version
from memu_core._value import Value

SKILL_NAME = "memu-retrieve"
END_MARKER = "<!-- memu:end -->"
SKILL_TEMPLATE = "retrieval-skill"

_STAMP_START = "<!-- memu:template retrieval-skill "


# The patterns compile on first use: a steady prepare's refresh usually finds no stamp and no
# block to read them on (ADR 0026's sixth pass).
@functools.cache
def _stamp() -> re.Pattern[str]:
    return re.compile(r"^<!-- memu:template retrieval-skill (\S+) \((\S+)\) -->$", re.MULTILINE)


@functools.cache
def _frontmatter() -> re.Pattern[str]:
    return re.compile(r"\A---\n.*?^---\n", re.MULTILINE | re.DOTALL)


@functools.cache
def _heading() -> re.Pattern[str]:
    return re.compile(r"\A\s*# [^\n]*\n")


def begin_marker(binary: str) -> str:
    """The first line of ``binary``'s block."""
    return f"<!-- memu:begin — managed block, do not edit ({binary} install-instruction) -->"


def _block_re(binary: str) -> re.Pattern[str]:
    return re.compile(
        "^" + re.escape(begin_marker(binary)) + r"\n.*?^" + re.escape(END_MARKER) + r"\n?",
        re.MULTILINE | re.DOTALL,
    )


def stamp(chosen: Candidate) -> str:
    """The line recording which retrieval skill an installed file carries (read back by refresh)."""
    return f"<!-- memu:template {SKILL_TEMPLATE} {chosen.version_text} ({chosen.source}) -->"


def installed_version(text: str) -> Version:
    """The version the stamp in ``text`` records; ``()`` (older than any) when there is none."""
    m = _stamp().search(text) if _STAMP_START in text else None
    if m is None:
        return ()
    try:
        return UNVERSIONED if m.group(1) == "unversioned" else parse_version(m.group(1))
    except ValueError:
        return ()


def _chosen(chosen: Candidate | None) -> Candidate:
    return chosen if chosen is not None else templates.choose(SKILL_TEMPLATE)


def skill_text(binary: str, chosen: Candidate | None = None) -> str:
    """The ``memu-retrieve`` skill document for ``binary``, stamped with its version and source."""
    chosen = _chosen(chosen)
    text = chosen.body.format(binary=binary)
    return text + ("" if text.endswith("\n") else "\n") + stamp(chosen) + "\n"


def retrieval_body(binary: str, chosen: Candidate | None = None) -> str:
    """The procedure alone: the skill document without its frontmatter and first heading."""
    text = _chosen(chosen).body.format(binary=binary)
    text = _frontmatter().sub("", text, count=1)
    text = _heading().sub("", text, count=1)
    return text.strip("\n") + "\n"


def instruction_text(binary: str, *, skill: bool, chosen: Candidate | None = None) -> str:
    """The block's text: a pointer to the skill on skill hosts, the stamped procedure otherwise."""
    if skill:
        return templates.embedded("instruction-pointer").format(binary=binary)
    chosen = _chosen(chosen)
    inline = templates.embedded("instruction-inline").format(body=retrieval_body(binary, chosen))
    return inline.rstrip("\n") + "\n\n" + stamp(chosen) + "\n"


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


class Change(Value):
    """One file the command touched (or would touch)."""

    __slots__ = ("changed", "diff", "path")
    _fields = ("path", "diff", "changed")

    def __init__(self, path: Path, diff: str, changed: bool) -> None:
        self.path = path
        self.diff = diff
        self.changed = changed


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
        import shutil  # only an install that backs a file up needs it

        shutil.copy2(target, target.with_name(target.name + ".bak"))
    write_text(target, new)  # a replaced file keeps its mode
    return Change(path, diff, True)


def install(path: Path, binary: str, skills_dir: Path | None, *, dry_run: bool = False) -> list[Change]:
    """Install or update the skill (first) and the block (second), so no pointer names a missing skill.

    An explicit install writes the text resolution picks now, even an older one than installed.
    """
    chosen = templates.choose(SKILL_TEMPLATE)
    changes: list[Change] = []
    if skills_dir is not None:
        skill_file = skills_dir / SKILL_NAME / "SKILL.md"
        changes.append(write_file(skill_file, skill_text(binary, chosen), dry_run=dry_run, backup=False))
    text = instruction_text(binary, skill=skills_dir is not None, chosen=chosen)
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
                import shutil  # only a remove with skill folders needs it

                shutil.rmtree(folder)
            changes.append(Change(folder, f"removed {folder}{os.sep}\n", not dry_run))
    return changes


def refresh(path: Path, binary: str, skills_dir: Path | None) -> list[Change]:
    """Bring an installed skill and block up to date: never installs, never downgrades.

    The installed retrieval procedure is rewritten only when resolution now picks a strictly
    newer version than its stamp records, so a run without the template server (or with an
    older cache) leaves a server-installed procedure alone. A file without a stamp predates
    versions and is brought up to date once. The pointer block of a skill host is memu's own
    text and follows the installed package.
    """
    chosen = templates.choose(SKILL_TEMPLATE)
    changes: list[Change] = []
    skill_file = skills_dir / SKILL_NAME / "SKILL.md" if skills_dir is not None else None
    newer_skill = skill_file is not None and chosen.version > installed_version(_read(skill_file))
    if skill_file is not None and skill_file.is_file() and newer_skill:
        changes.append(write_file(skill_file, skill_text(binary, chosen), dry_run=False, backup=False))
    current = _read(path)
    # No begin marker, no block: the pattern (and its compilation) is needed only when there is.
    found = _block_re(binary).search(current) if begin_marker(binary) in current else None
    # A skill host's block is the pointer (memu's own text); an inline block carries the procedure.
    if found and (skills_dir is not None or chosen.version > installed_version(found.group(0))):
        text = instruction_text(binary, skill=skills_dir is not None, chosen=chosen)
        changes.append(write_file(path, patch(current, binary, text), dry_run=False, backup=True))
    return [c for c in changes if c.changed]
