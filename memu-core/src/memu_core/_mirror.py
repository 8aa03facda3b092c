"""The Markdown mirror of the store's recall files: one file per recall file, under its track.

A recall file on disk is frontmatter (``name``, ``description``) then content, in the one format
of :mod:`memu_core._markdown`. The agent edits these files during a bridging run; ``commit``
reads them back, and ``memu commit --from-dir`` reads its folder the same way.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core import _markdown
from memu_core._value import Frozen, Value
from memu_core.names import name_problem

if TYPE_CHECKING:
    from hashlib import _Hash

_TAG_CHARS = 10
# 255 bytes per file name on every common file system, less "~" + the tag + ".md".
_MAX_STEM_BYTES = 255 - 1 - _TAG_CHARS - 3


class RecallDoc(Frozen):
    """One recall file as the agent sees it."""

    __slots__ = ("content", "description", "name", "track")
    _fields = ("track", "name", "description", "content")
    track: str
    name: str
    description: str
    content: str

    def __init__(self, track: str, name: str, description: str, content: str) -> None:
        self._init(track, name, description, content)

    def render(self) -> str:
        """The file text: frontmatter then content (no trailing newline added)."""
        return _markdown.render({"name": self.name, "description": self.description}, self.content)

    def digest(self) -> str:
        """A hash of what the store would hold: trailing blank space does not count as a change."""
        h = _sha256()
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


@functools.cache
def _unsafe() -> re.Pattern[str]:
    # Compiled on first use: a steady prepare whose store did not change names no file.
    return re.compile(r"[\s/\\:*?\"<>|\x00-\x1f\x7f]+")


def _sha256(data: bytes = b"") -> _Hash:
    # hashlib loads OpenSSL (about 2.5 ms): only a run with mirrored files to digest pays it.
    import hashlib

    return hashlib.sha256(data)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _stem(name: str) -> str:
    stem = _unsafe().sub("-", name.strip()).strip("-.") or "untitled"
    # Whole characters only, so the file name stays valid UTF-8 within the file system's limit.
    while len(stem.encode("utf-8")) > _MAX_STEM_BYTES:
        stem = stem[:-1]
    return stem


def file_name(name: str) -> str:
    """The readable mirror file name of a recall file: path-unsafe characters become ``-``.

    Two names can share it ("deploy notes" and "deploy-notes"); :func:`place` decides which one
    gets it and gives the other :func:`tagged_name`.
    """
    return f"{_stem(name)}.md"


def tagged_name(name: str) -> str:
    """The readable stem plus a tag derived from the whole name: unique to ``name``."""
    tag = _sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_TAG_CHARS]
    return f"{_stem(name)}~{tag}.md"


def candidates(name: str) -> tuple[str, str]:
    """The two file names ``name`` may have in the mirror, preferred first."""
    return (file_name(name), tagged_name(name))


def file_key(rel: str) -> str:
    """What a file system compares when it looks a relative path up: case and Unicode form folded
    (macOS and Windows mirrors treat "Deploy.md" and "deploy.md" as one file)."""
    return unicodedata.normalize("NFC", rel).casefold()


Identity = tuple[str, str]
"""``(track, name)``: a recall file's identity in the mirror."""


class Placement(Value):
    """Where each recall file goes in the mirror, and which ones cannot go anywhere."""

    __slots__ = ("bad", "clashing", "rel")
    _fields = ("rel", "bad", "clashing")

    def __init__(
        self,
        rel: dict[Identity, str] | None = None,
        bad: list[tuple[Identity, str]] | None = None,
        clashing: list[Identity] | None = None,
    ) -> None:
        self.rel: dict[Identity, str] = {} if rel is None else rel
        """``"<track>/<file>.md"`` by identity."""
        self.bad: list[tuple[Identity, str]] = [] if bad is None else bad
        """Identities whose name breaks a naming rule, with the rule."""
        self.clashing: list[Identity] = [] if clashing is None else clashing
        """Identities left out because both their file names were taken (a name held twice)."""


def place(
    identities: Iterable[Identity],
    edits: Iterable[tuple[str, Identity | None]] = (),
    previous: Iterable[tuple[str, Identity]] = (),
) -> Placement:
    """The one mapping from stored names to mirror files: no two files share a path on any system.

    ``edits`` are files the agent changed and has not committed, with the name inside them
    (``None`` when unreadable): their paths are never given to another name, and a stored name
    one of them holds stays there, so the edit is what the next commit sends. ``previous`` is the
    last mirror: a name keeps the file it had, so it never moves once mirrored. A name with
    neither takes its readable file name, or its tagged one when that is taken; exact names (the
    file name reads back as the name) choose first, so of two new names "deploy-notes" gets
    ``deploy-notes.md`` and "deploy notes" the tagged file.
    """
    out = Placement()
    wanted: dict[Identity, None] = {}
    for ident in identities:
        problem = name_problem(ident[1])
        if problem is not None:
            out.bad.append((ident, problem))
        elif ident in wanted:
            out.clashing.append(ident)  # the same name in another scope: one mirror file
        else:
            wanted[ident] = None
    taken: set[str] = set()
    for rel, owner in edits:
        taken.add(file_key(rel))
        if owner in wanted and owner not in out.rel:
            out.rel[owner] = rel
    for rel, owner in previous:
        track, name = owner
        if (
            owner in wanted
            and owner not in out.rel
            and file_key(rel) not in taken
            and rel.startswith(f"{track}/")
            and rel.split("/", 1)[1] in candidates(name)
        ):
            taken.add(file_key(rel))
            out.rel[owner] = rel
    fresh = sorted((i for i in wanted if i not in out.rel), key=lambda i: (_stem(i[1]) != i[1], i))
    for track, name in fresh:
        for candidate in candidates(name):
            rel = f"{track}/{candidate}"
            if file_key(rel) not in taken:
                taken.add(file_key(rel))
                out.rel[(track, name)] = rel
                break
        else:
            out.clashing.append((track, name))
    return out


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
