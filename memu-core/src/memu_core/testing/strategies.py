"""hypothesis strategies for memu's data types (stores, engine and plugin tests share them)."""

from __future__ import annotations

import hashlib
import string

from hypothesis import strategies as st

from memu_core.types import FileWrite, Scope, SegmentDraft

__all__ = [
    "file_keys",
    "file_writes",
    "names",
    "scopes",
    "segment_texts",
    "tracks",
]

names = st.text(alphabet=string.ascii_lowercase + string.digits + "-_.", min_size=1, max_size=16)
"""File names as agents write them (slug-like)."""

tracks = st.sampled_from(["memory", "skill", "notes"])
"""The two standard tracks plus a custom one (stores must accept any track)."""

scopes = st.builds(
    Scope,
    user_id=st.sampled_from(["default", "u1", "u2"]),
    agent_id=st.sampled_from(["default", "a1"]),
)
"""A few overlapping scopes, so filters and per-scope uniqueness get exercised."""

segment_texts = (
    st.text(alphabet=st.characters(categories=("L", "N", "Zs", "P")), min_size=1, max_size=60)
    .map(str.strip)
    .filter(bool)
)
"""One memory line: letters (any script, accents included), digits, spaces, punctuation."""

file_keys = st.sets(st.tuples(tracks, names), max_size=30)
"""A set of distinct ``(track, name)`` keys, e.g. for paging tests."""


@st.composite
def file_writes(
    draw: st.DrawFn, scope: Scope | None = None, expected_revision: int | None = None
) -> FileWrite:
    """A :class:`FileWrite` of a new file (``expected_revision=None``) with distinct lines."""
    lines = draw(st.lists(segment_texts, max_size=8, unique=True))
    content = "\n".join(lines)
    return FileWrite(
        scope=scope if scope is not None else draw(scopes),
        track=draw(tracks),
        name=draw(names),
        description=draw(st.text(max_size=30)),
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        expected_revision=expected_revision,
        segments=[SegmentDraft("line", i, line) for i, line in enumerate(lines)],
    )
