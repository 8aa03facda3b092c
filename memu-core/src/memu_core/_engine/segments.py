"""Cutting a recall file into segments, the unit of search.

Every file gets a ``header`` segment (``name: description``) so its name and description are
searchable. Memory files then get one ``line`` segment per content line; skills get ``body``
segments the same way (memU leaves skill bodies unsearchable). Headings, rules and code fences
are structure, not content: they become the *context* of the lines under them instead.
"""

from __future__ import annotations

import re

from memu_core.types import SegmentDraft

MAX_SEGMENT_CHARS = 480
"""Longer lines are split at a word boundary: one pasted log line must not become one vector."""

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_STRUCTURE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,}|`{3,}.*|~{3,}.*)$")


def header_text(name: str, description: str) -> str:
    """The text of a file's header segment (memU's file-level embedding text)."""
    return f"{name}: {description}" if description else name


def split_long(line: str, limit: int = MAX_SEGMENT_CHARS) -> list[str]:
    """Split ``line`` into pieces of at most ``limit`` characters, preferring spaces."""
    pieces: list[str] = []
    rest = line
    while len(rest) > limit:
        cut = rest.rfind(" ", 0, limit)
        if cut <= limit // 2:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def segment_file(track: str, name: str, description: str, content: str) -> list[SegmentDraft]:
    """All segments of one file, in order, with lexical context; texts are unique per file."""
    drafts = [SegmentDraft(kind="header", ordinal=0, text=header_text(name, description))]
    kind = "body" if track == "skill" else "line"
    headings: list[str] = []
    previous = ""
    seen = {drafts[0].text}
    for raw in content.splitlines():
        line = raw.strip()
        if not line or _STRUCTURE.match(line):
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            del headings[level - 1 :]
            headings.append(heading.group(2))
            previous = ""
            continue
        for piece in split_long(line):
            if piece in seen:
                continue
            seen.add(piece)
            # Context is what a reader would have in mind on this line: where it sits in the
            # file and the line before it (a reply makes sense only after its question).
            context = " ".join(part for part in (name, " / ".join(headings), previous) if part)
            drafts.append(SegmentDraft(kind=kind, ordinal=len(drafts), text=piece, context=context))
            previous = piece
    return drafts
