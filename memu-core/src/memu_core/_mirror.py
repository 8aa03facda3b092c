"""The Markdown mirror of the store's recall files: one file per recall file, under its track.

A recall file on disk is frontmatter (``name``, ``description``) then content, in the one format
of :mod:`memu_core._markdown`. The agent edits these files during a bridging run; ``commit``
reads them back, and ``memu commit --from-dir`` reads its folder the same way.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from memu_core import _markdown

_UNSAFE = re.compile(r"[\s/\\:*?\"<>|]+")


@dataclass(frozen=True, slots=True)
class RecallDoc:
    """One recall file as the agent sees it."""

    track: str
    name: str
    description: str
    content: str

    def render(self) -> str:
        """The file text: frontmatter then content (no trailing newline added)."""
        return _markdown.render({"name": self.name, "description": self.description}, self.content)

    def digest(self) -> str:
        """A hash of what the store would hold: trailing blank space does not count as a change."""
        h = hashlib.sha256()
        # Line endings as a file read back would have them: a store holding CRLF content is
        # not an edit the next commit must send back.
        content = self.content.replace("\r\n", "\n").replace("\r", "\n").rstrip()
        for part in (self.track, _one_line(self.name), _one_line(self.description), content):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def as_commit(self) -> dict[str, str]:
        """The ``recall_files`` item ``commit_results`` takes."""
        return {
            "name": self.name,
            "track": self.track,
            "description": self.description,
            "content": self.content,
        }


def _one_line(text: str) -> str:
    return " ".join(text.split())


def file_name(name: str) -> str:
    """The mirror file name of a recall file: path-unsafe characters become ``-``."""
    stem = _UNSAFE.sub("-", name.strip()).strip("-.") or "untitled"
    return f"{stem}.md"


def from_markdown(doc: _markdown.MarkdownDoc, track: str, path: Path) -> RecallDoc:
    """The recall file a parsed Markdown file holds: a missing ``name`` is the file's stem."""
    return RecallDoc(track, doc.meta.get("name") or path.stem, doc.meta.get("description", ""), doc.body)


def read_doc(path: Path, track: str) -> RecallDoc:
    """Parse the recall file at ``path`` (UTF-8; undecodable bytes or an unclosed frontmatter are
    a ``UsageError`` naming the file)."""
    return from_markdown(_markdown.read(path), track, path)


def local_docs(base: Path, tracks: tuple[str, ...]) -> dict[str, Path]:
    """``{"<track>/<file>.md": path}`` for every visible Markdown file under the track folders.

    Hidden files (editor swaps, our own temp files) and other extensions are not recall files.
    """
    found: dict[str, Path] = {}
    for track in tracks:
        root = base / track
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(base)
            if any(part.startswith(".") for part in rel.parts) or not path.is_file():
                continue
            found[rel.as_posix()] = path
    return found
