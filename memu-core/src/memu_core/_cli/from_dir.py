"""``memu commit --from-dir``: a folder of Markdown files read into recall files, file by file.

Each ``*.md`` file is read as a host's ``commit`` reads its mirror (:mod:`memu_core._markdown`)
and checked by the rules every door applies (:mod:`memu_core.names`). A file that cannot be
read, parsed or named is not committed: it becomes one line naming the file and the fix, and the
rest of the folder still commits (``--prune`` excepted: it needs every file, see
:func:`memu_core._cli.memory_cmds.run_commit`). Two files holding the same name are both refused,
since either one would silently replace the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memu_core.errors import UsageError

_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


@dataclass(slots=True)
class FolderRead:
    """What a folder holds: the files to commit, where each came from, and the refused ones."""

    files: list[dict[str, str]] = field(default_factory=list)
    """``recall_files`` items, in path order."""
    problems: list[str] = field(default_factory=list)
    """One line per file that is not committed: the file, what is wrong and the fix."""
    seen: int = 0
    """How many ``*.md`` files the folder holds."""


def read_folder(directory: Path) -> FolderRead:
    """Every ``*.md`` file under ``directory`` (frontmatter: name, description, track).

    A file without a ``name`` uses its stem; without a ``track``, files under a ``skills`` folder
    are skills and the rest memory. A folder named ``*.md`` is not a file and is passed over.
    """
    root = directory.expanduser()
    if not root.is_dir():
        raise UsageError(f"--from-dir {root} is not a directory")
    out = FolderRead()
    sources: dict[tuple[str, str], list[Path]] = {}
    items: dict[tuple[str, str], dict[str, str]] = {}
    for path in sorted(root.rglob("*.md")):
        if path.is_dir():
            continue
        out.seen += 1
        try:
            item = _read_one(path, root)
        except UsageError as exc:
            out.problems.append(str(exc))
            continue
        key = (item["track"], item["name"])
        sources.setdefault(key, []).append(path)
        items.setdefault(key, item)
    for key, paths in sources.items():
        if len(paths) > 1:
            shown = " and ".join(str(p) for p in paths)
            out.problems.append(
                f"{shown} all hold the {key[0]} file {key[1]!r}; give each its own name: line, or remove all but one"
            )
        else:
            out.files.append(items[key])
    return out


def _read_one(path: Path, root: Path) -> dict[str, str]:
    from memu_core._markdown import parse
    from memu_core._mirror import from_markdown
    from memu_core.names import check_name, check_track

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"{path} cannot be read ({exc.strerror or exc}); make it readable or move it out of the folder"
        ) from None
    encoding = next((name for bom, name in _BOMS.items() if raw.startswith(bom)), None)
    if encoding is not None:
        raise UsageError(f"{path} is {encoding} text; save it as UTF-8 and commit again")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8 and commit again"
        ) from None
    doc = parse(text, source=str(path))
    in_skills = "skills" in path.relative_to(root).parts[:-1]
    track = check_track(doc.meta.get("track") or ("skill" if in_skills else "memory"), str(path))
    recall = from_markdown(doc, track, path)
    return {**recall.as_commit(), "name": check_name(recall.name, str(path))}
