"""Cutting a recall file into segments, the unit of search.

Every file gets a ``header`` segment (``name: description``) so its name and description are
searchable. Memory files then get one ``line`` segment per content line; skills get ``body``
segments the same way (memU leaves skill bodies unsearchable). Headings, rules and code fences
are structure, not content: they become the *context* of the lines under them instead.
"""

from __future__ import annotations

import re

from memu_core.types import SegmentDraft, SegmentKind

MAX_SEGMENT_CHARS = 480
"""Longer lines are split at a word boundary: one pasted log line must not become one vector."""

CONTEXT_BEFORE = 2
"""Lines before a line that are indexed (lexically, never embedded) as its context.

Measured on LoCoMo (docs/benchmarks.md): 1 before → 2 before and 0 after → 1 after each lifted
hybrid recall@10; 3 before and 2 after did not lift it further."""
CONTEXT_AFTER = 1
"""Lines after a line indexed as its context (a question is found by its answer's words)."""

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_STRUCTURE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,}|`{3,}.*|~{3,}.*)$")


def header_text(name: str, description: str) -> str:
    """The text of a file's header segment (memU's file-level embedding text)."""
    return f"{name}: {description}" if description else name


def split_long(line: str, limit: int = MAX_SEGMENT_CHARS) -> list[str]:
    """Split ``line`` into pieces of at most ``limit`` characters, preferring spaces."""
    # Walk an index over the line instead of re-slicing the rest after every cut: slicing the
    # remainder copies it, which made one multi-megabyte pasted line quadratic to commit.
    pieces: list[str] = []
    start, end = 0, len(line)
    while end - start > limit:
        cut = line.rfind(" ", start, start + limit) - start
        if cut <= limit // 2:
            cut = limit
        pieces.append(line[start : start + cut].rstrip())
        start += cut
        while start < end and line[start].isspace():  # lstrip without copying the rest
            start += 1
    if start < end:
        pieces.append(line[start:])
    return pieces


def segment_file(track: str, name: str, description: str, content: str) -> list[SegmentDraft]:
    """All segments of one file, in order, with lexical context; texts are unique per file."""
    drafts = [SegmentDraft(kind="header", ordinal=0, text=header_text(name, description))]
    kind: SegmentKind = "body" if track == "skill" else "line"
    headings: list[str] = []
    seen = {drafts[0].text}
    # (text, heading path, index of the first line of its section) for every content piece.
    pieces: list[tuple[str, str, int]] = []
    section_start = 0
    for raw in content.splitlines():
        line = raw.strip()
        if not line or _STRUCTURE.match(line):
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            del headings[level - 1 :]
            headings.append(heading.group(2))
            section_start = len(pieces)
            continue
        for piece in split_long(line):
            if piece in seen:
                continue
            seen.add(piece)
            pieces.append((piece, " / ".join(headings), section_start))
    for i, (piece, path, first) in enumerate(pieces):
        context = _context(name, path, pieces, i, first)
        drafts.append(SegmentDraft(kind=kind, ordinal=len(drafts), text=piece, context=context))
    return drafts


def _context(name: str, path: str, pieces: list[tuple[str, str, int]], i: int, first: int) -> str:
    """What a reader has in mind on line ``i``: where it sits in the file and its neighbours in
    the same section (a reply makes sense only after its question, a question by its answer)."""
    before = [p[0] for p in pieces[max(first, i - CONTEXT_BEFORE) : i]]
    after = [p[0] for p in pieces[i + 1 : i + 1 + CONTEXT_AFTER] if p[2] == first]
    return " ".join(part for part in (name, path, *before, *after) if part)
