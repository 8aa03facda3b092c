"""The rules for a recall file's name and track, checked the same way at every door.

A name is what a user or agent calls a memory ("deploy notes"); it is also where the file lives
in a host's Markdown mirror, so it must be something every file system can hold. Every door
that stores a name (``memu commit``, ``memu commit --from-dir``, the MCP ``remember`` tool,
``POST /api/v4/memory`` on ``memu-server`` and the warm server, and a host's ``commit``) calls
:func:`check_name` and :func:`check_track`, so the same name is refused everywhere with the
same sentence. ``forget`` does not check: a name stored before these rules must stay removable.

Stdlib only: plugin distributions (``memu-server``) import this module.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from memu_core.errors import UsageError

TRACKS: tuple[str, ...] = ("memory", "skill")
"""The tracks a recall file can be on."""

MAX_NAME_BYTES = 200
"""Longest name, in UTF-8 bytes: with the mirror's ``.md`` and a disambiguating suffix, a file
name stays under the 255 bytes file systems allow."""

_SHOWN_CHARS = 60
# What str.strip removes, listed as characters (JSON Schema's and pydantic's regex dialects
# disagree on what \s means).
_BLANKS = "\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_FORBIDDEN = "\x00-\x1f\x7f-\x9f\u2028\u2029/\\\\"
NAME_PATTERN = f"^[^{_FORBIDDEN}]*[^{_FORBIDDEN}{_BLANKS}.][^{_FORBIDDEN}]*$"
"""The character rules of :func:`name_problem` as a regular expression for a published schema
(the byte length is not expressible there; :func:`check_name` is the rule)."""
# Path separators on any system the mirror may live on.
_SEPARATORS = ("/", "\\")
# Line and paragraph separators are not category Cc, but split a frontmatter line all the same.
_BREAKS = frozenset("\u2028\u2029")


def name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a recall file's name (a phrase), or ``None`` when it is fine.

    Surrounding blanks are allowed: every store trims them, so the rules apply to what is kept.
    """
    if name is None:
        return "is missing"
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a string"
    text = name.strip()
    if not text:
        return "is empty or only blanks"
    for char in text:
        if "\ud800" <= char <= "\udfff":
            return "holds a lone surrogate, which is not text"
        if unicodedata.category(char) == "Cc" or char in _BREAKS:
            return f"holds the control character U+{ord(char):04X}, which no file name can carry"
    for sep in _SEPARATORS:
        if sep in text:
            return f"holds {sep!r}, which a file system reads as a folder"
    if not text.replace(".", "").strip():
        return "is only dots and blanks, which a file system reads as a folder"
    size = len(text.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        return f"is {size} bytes long in UTF-8; the limit is {MAX_NAME_BYTES}"
    return None


def show(name: object) -> str:
    """``name`` as an error message quotes it: escaped, and shortened when long."""
    text = repr(name)
    return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 5]}…{text[-4:]}"


def check_name(name: object, where: str = "name") -> str:
    """The trimmed ``name``, or a :class:`UsageError` naming it, the rule it breaks and the fix."""
    if name is None:
        raise UsageError(f"{where} has no name: every recall file needs a non-empty 'name'")
    problem = name_problem(name)
    if problem is not None:
        raise UsageError(
            f"{where}: the name {show(name)} {problem}; use a name of 1-{MAX_NAME_BYTES} bytes "
            "without control characters, '/' or '\\', and not only dots"
        )
    assert isinstance(name, str)
    return name.strip()


def check_track(track: object, where: str = "track") -> str:
    """The trimmed ``track`` (blank means ``memory``), or a :class:`UsageError` naming the allowed ones."""
    if track is None:
        return "memory"
    value = track.strip() if isinstance(track, str) else track
    if value == "":
        return "memory"
    if value not in TRACKS:
        raise UsageError(f"{where}: unknown track {show(track)}; use one of {', '.join(TRACKS)}")
    assert isinstance(value, str)
    return value


def check_recall_files(items: Any, label: str = "recall_files") -> None:
    """Check the name and track of every item of a ``recall_files`` list (other shapes pass through
    to the store's own validation, which names them)."""
    if not isinstance(items, Sequence) or isinstance(items, str):
        return
    for index, item in enumerate(items):
        if isinstance(item, Mapping):
            where = f"{label}[{index}]"
            check_name(item.get("name"), where)
            check_track(item.get("track"), where)
