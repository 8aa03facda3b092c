"""Markdown files with a small frontmatter block: how memu reads and writes recall files on disk.

The frontmatter is the flat ``key: value`` subset of YAML that memU's mirror uses (``name``,
``description``, ``track``); values that would not survive a round trip are JSON-quoted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s?(.*)$")


@dataclass(frozen=True, slots=True)
class MarkdownDoc:
    """A parsed file: its frontmatter fields and the body after the block."""

    meta: dict[str, str]
    body: str


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
            if isinstance(decoded, str):
                return decoded
        except ValueError:
            pass
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def parse_markdown(text: str) -> MarkdownDoc:
    """Split ``text`` into frontmatter and body. No frontmatter → empty meta, whole text as body."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return MarkdownDoc({}, text)
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                match = _KEY.match(line)
                if match:
                    meta[match.group(1)] = _unquote(match.group(2))
            return MarkdownDoc(meta, "\n".join(lines[end + 1 :]))
    return MarkdownDoc({}, text)


def _quote(value: str) -> str:
    plain = value.strip() == value and not any(ch in value for ch in "\n\r:#\"'") and value not in ("", "null", "~")
    return value if plain else json.dumps(value, ensure_ascii=False)


def render_markdown(meta: dict[str, str], body: str) -> str:
    """The file text for ``meta`` and ``body``; ``parse_markdown`` reads it back unchanged."""
    head = "".join(f"{key}: {_quote(value)}\n" for key, value in meta.items())
    return f"---\n{head}---\n{body.rstrip()}\n"
