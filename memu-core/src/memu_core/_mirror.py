"""The Markdown mirror of the store's recall files, and the frontmatter format they share.

A recall file on disk is ``---\\nname: <name>\\ndescription: <one line>\\n---\\n<content>``. The
agent edits these files during a bridging run; ``commit`` reads them back.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from memu_core.errors import UsageError

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
        head = f"---\nname: {_one_line(self.name)}\ndescription: {_one_line(self.description)}\n---\n"
        return head + self.content

    def digest(self) -> str:
        """A hash of what the store would hold: trailing blank space does not count as a change."""
        h = hashlib.sha256()
        for part in (self.track, _one_line(self.name), _one_line(self.description), self.content.rstrip()):
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


def parse(text: str, track: str, path: Path) -> RecallDoc:
    """Read a recall file back. A frontmatter that is opened but never closed is an error."""
    if not text.startswith("---\n"):
        return RecallDoc(track, path.stem, "", text)
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise UsageError(
                f"{path}: the frontmatter opened with '---' is never closed; "
                "add a line '---' after the name and description lines"
            )
    head = text[4:end]
    body = text[end + 5 :]
    fields: dict[str, str] = {}
    for line in head.split("\n"):
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return RecallDoc(track, fields.get("name") or path.stem, fields.get("description", ""), body)


def read_doc(path: Path, track: str) -> RecallDoc:
    """Parse the recall file at ``path`` (UTF-8; undecodable bytes are an error naming the file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8 and commit again"
        ) from exc
    return parse(text, track, path)


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
