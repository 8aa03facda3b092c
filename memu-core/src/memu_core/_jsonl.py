"""JSONL session logs on disk: finding the files, naming them, peeking at a line without parsing it.

The default :meth:`memu_core.interfaces.TranscriptSource.discover` takes every ``*.jsonl`` below
the root. Hosts that keep other JSONL next to their sessions (sidecars, archives, other tools'
logs) prune folders and files with :func:`jsonl_files` instead. Host plugins reach these through
:mod:`memu_core.host`; this module sits below :mod:`memu_core.interfaces` and imports only
:mod:`memu_core.types`.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from memu_core._transcript_types import SessionFile


def jsonl_files(
    root: Path,
    *,
    keep_dir: Callable[[str], bool] | None = None,
    keep_file: Callable[[str], bool] | None = None,
) -> Iterator[SessionFile]:
    """``*.jsonl`` files under ``root``; ``keep_dir``/``keep_file`` get a name and may refuse it.

    A file or folder that vanishes while it is listed is skipped, never an error.
    """
    stack = [str(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if keep_dir is None or keep_dir(entry.name):
                                stack.append(entry.path)
                            continue
                        if not entry.name.endswith(".jsonl") or (keep_file and not keep_file(entry.name)):
                            continue
                        if entry.is_file():
                            st = entry.stat()
                            yield SessionFile.listed(entry.path, st.st_mtime_ns, st.st_size)
                    except OSError:
                        continue
        except OSError:
            continue


def newest_first(files: Iterable[SessionFile]) -> list[SessionFile]:
    """Sorted by modification time, newest first (the order discovery promises)."""
    return sorted(files, key=lambda s: s.mtime_ns, reverse=True)


def relative_key(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (string slicing first: it runs per session)."""
    rel = relative_text(str(path), str(root))
    return path.relative_to(root).as_posix() if rel is None else rel


def relative_text(text: str, base: str) -> str | None:
    """The path ``text`` relative to the folder ``base`` in POSIX form, by slicing the strings;
    ``None`` when ``text`` does not start with ``base`` and a separator (then ask ``pathlib``)."""
    if text.startswith(base) and text[len(base) : len(base) + 1] == os.sep:
        rel = text[len(base) + 1 :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel
    return None


def cheap_timestamp(line: str) -> str | None:
    """The last ``"timestamp":"…"`` value in a line, found without parsing (informational)."""
    at = line.rfind('"timestamp":"')
    if at < 0:
        return None
    start = at + 13
    end = line.find('"', start)
    return line[start:end] if 0 < end - start < 64 else None


def top_level_value(line: str, key: str) -> str | None:
    """The string value of a top-level ``key`` in a compact JSON object line, or ``None``.

    Certain only when nothing nested precedes the key (no ``{`` or ``[`` before it but the
    opening brace); otherwise ``None`` and the caller parses. A quoted ``"key":"`` cannot occur
    inside a JSON string (its quotes would be escaped), so a match is a real key.
    """
    needle = f'"{key}":"'
    at = line.find(needle)
    if at < 0 or line.count("{", 0, at) != 1 or line.count("[", 0, at):
        return None
    start = at + len(needle)
    end = line.find('"', start)
    return line[start:end] if end > 0 else None


MAX_DEPTH = 200
"""Deepest nesting of arrays and objects a session line may have. Real records nest a dozen
levels; Python's parser recurses per level and fails (``RecursionError``) near a thousand."""
MAX_LINE_CHARS = 32 * 1024 * 1024
"""Longest session line read (characters): a record larger than this is not a conversation turn,
and would cost its size several times over in the slices and the redactor."""


@functools.cache
def _token() -> re.Pattern[str]:
    """A JSON string (skipped whole, brackets inside it do not nest) or one bracket; compiled on
    first use (only a line with many brackets needs it, not every process reading sessions)."""
    return re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class LineRejected(ValueError):
    """A session line over :data:`MAX_DEPTH` or :data:`MAX_LINE_CHARS` (skipped, never parsed)."""


def too_deep(line: str, limit: int = MAX_DEPTH) -> bool:
    """Whether ``line`` nests brackets deeper than ``limit`` (strings do not count)."""
    if line.count("[") + line.count("{") <= limit:
        return False  # the common case: not even that many brackets in the whole line
    depth = 0
    for match in _token().finditer(line):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def load_line(line: str) -> Any:
    """``json.loads`` for one line of a host's log, within the limits: a line too long or too
    deep raises :class:`LineRejected` without being parsed, and the parser's own recursion
    failure comes out as a ``ValueError`` like every other bad line."""
    if len(line) > MAX_LINE_CHARS:
        raise LineRejected(f"line of {len(line)} characters is over the {MAX_LINE_CHARS} limit")
    if too_deep(line):
        raise LineRejected(f"line nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(line)
    except RecursionError as exc:  # a tighter interpreter stack than the limit assumes
        raise LineRejected("line nests too deep to parse") from exc


def parse_object(line: str) -> dict[str, Any] | None:
    """The JSON object on one line, or ``None`` when it is not one (or over the limits)."""
    try:
        obj = load_line(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
