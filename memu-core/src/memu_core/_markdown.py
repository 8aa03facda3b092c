"""The one Markdown-with-frontmatter format of recall files, read and written.

The mirror (``sync`` writes, ``commit`` reads back) and ``memu commit --from-dir`` both go through
here, so a file is stored the same whichever path commits it. A file is a ``---`` line, flat
``key: value`` lines, a ``---`` line, then the body. A value that would not read back as written
(quotes at its ends, ``: `` inside, a line break, surrounding blanks…) is written JSON-quoted,
which YAML also reads as a double-quoted string; single-quoted YAML values are read too.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path

from memu_core._value import Frozen
from memu_core.errors import UsageError

FENCE = "---"
# A plain value never looks like YAML syntax (an indicator first, ': ' or ' #' inside, a null or
# boolean word), so a YAML reader sees the same text; only what memu reads back decides correctness.
_YAML_INDICATORS = tuple("-?:,[]{}#&*!|>'\"%@`")
# Plain scalars a YAML 1.1 reader takes as something else: null and booleans, and the bare ``=``
# (the value key) and ``<<`` (the merge key), which PyYAML's safe loader refuses outright.
_YAML_WORDS = frozenset({"null", "~", "true", "false", "yes", "no", "on", "off", "=", "<<"})


@functools.cache
def _raw_in_json() -> re.Pattern[str]:
    # Compiled on first use: reading a file never needs it, and a steady prepare writes none.
    return re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


class MarkdownDoc(Frozen):
    """A parsed file: its frontmatter fields (keys lower-cased) and the body after the block."""

    __slots__ = ("body", "meta")
    _fields = ("meta", "body")
    meta: dict[str, str]
    body: str

    def __init__(self, meta: dict[str, str], body: str) -> None:
        self._init(meta, body)


def parse(text: str, *, source: str = "the text") -> MarkdownDoc:
    """Split ``text`` into frontmatter and body.

    A leading byte-order mark is dropped and line endings become ``\\n`` (a file saved on Windows
    means the same). Without an opening ``---`` line the whole text is the body. An opening
    ``---`` that is never closed is a ``UsageError`` naming ``source``: guessing where the
    block ends would store half the frontmatter as content.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != FENCE:
        return MarkdownDoc({}, text)
    for end in range(1, len(lines)):
        if lines[end].rstrip() == FENCE:
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if sep and key.strip():
                    meta[key.strip().lower()] = _unquote(value.strip())
            return MarkdownDoc(meta, "\n".join(lines[end + 1 :]))
    raise UsageError(
        f"{source}: the frontmatter opened with '---' is never closed; "
        "add a line '---' after the name and description lines"
    )


def read(path: Path) -> MarkdownDoc:
    """Parse the UTF-8 file at ``path``; undecodable bytes are a ``UsageError`` naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8 and commit again") from exc
    return parse(text, source=str(path))


def render(meta: Mapping[str, str], body: str) -> str:
    """The file text for ``meta`` and ``body``: ``parse`` gives both back unchanged.

    The body is written as given (no newline added), so what the store holds is what the file
    holds.
    """
    head = "".join(f"{key}: {quote(value)}\n" for key, value in meta.items())
    return f"{FENCE}\n{head}{FENCE}\n{body}"


def quote(value: str) -> str:
    """``value`` as a frontmatter value: plain when it reads back as itself, else JSON-quoted."""
    if _plain(value):
        return value
    # JSON leaves DEL, C1 controls, Unicode line separators and non-characters raw; YAML readers refuse or split
    # on them, so they are escaped too (json.loads reads the escapes back).
    return _raw_in_json().sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def _plain(value: str) -> bool:
    return (
        value != ""
        and value == value.strip()
        and value.isprintable()  # no line breaks, tabs or controls
        and not value.startswith(_YAML_INDICATORS)
        and ": " not in value
        and " #" not in value
        and not value.endswith(":")
        and value.lower() not in _YAML_WORDS
    )


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value  # not JSON (a YAML-only escape, say): keep what the author wrote
        return decoded if isinstance(decoded, str) else value
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value
