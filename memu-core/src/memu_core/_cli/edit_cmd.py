"""``memu edit NAME``: open a recall file in ``$EDITOR`` and store it when it is saved.

The file is written to a private temporary file with its frontmatter (name, description, track
and the ``version`` it was read at). After the editor exits, the text is read back through the
one Markdown parser; anything wrong (an unclosed frontmatter, a changed name or track, an empty
body) refuses with one line naming the file and the fix and *keeps* the temporary file, whose
path the line prints: ``memu edit NAME --from PATH`` carries on from it. The store takes the
edit only if the file still has the content hash of the version the edit started from.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core import _atomic, _markdown
from memu_core._cli.history_run import local_engine
from memu_core._cli.output import print_json
from memu_core.errors import ConflictError, MemuError, UsageError

if TYPE_CHECKING:
    from memu_core.types import FileVersion

ALLOWED_KEYS = frozenset({"name", "description", "track", "version"})


def editor_command() -> list[str]:
    """``$VISUAL`` or ``$EDITOR`` split like a shell would; ``vi`` when neither is set."""
    raw = (os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi").strip()
    try:
        return shlex.split(raw) or ["vi"]
    except ValueError as exc:
        raise UsageError(f"$EDITOR {raw!r} cannot be split into a command ({exc}); set EDITOR to e.g. nano") from None


def run_edit(name: str, track: str | None, from_file: Path | None, user: Mapping[str, str], as_json: bool) -> None:
    """Edit ``name`` (a new memory file when none exists) and commit it on save."""
    from memu_core.names import check_name

    name = check_name(name)
    with local_engine() as engine:
        versions = engine.history(name, track, user=user or None)
        current = versions[0] if versions and versions[0].current else None
        file_track = current.track if current else (track or (versions[0].track if versions else "memory"))
        if from_file is not None:
            path = from_file.expanduser()
            if not path.is_file():
                raise UsageError(f"--from {path}: no such file; pass the path `memu edit` printed")
        else:
            meta = {"name": name, "description": current.description if current else "", "track": file_track}
            meta["version"] = str(current.version) if current else "new"
            path = _temp_file(name, _markdown.render(meta, current.content if current else ""))
            _run_editor(path)
            if current is not None and path.read_text(encoding="utf-8") == _markdown.render(meta, current.content):
                path.unlink(missing_ok=True)
                _report(None, name, file_track, as_json)
                return
        description, content, base_version = _read_edit(path, name, file_track)
        base_hash = _base_hash(versions, base_version, path, name, file_track)
        try:
            saved = engine.edit(
                name,
                content,
                description=description,
                track=file_track,
                base_hash=base_hash,
                user=user or None,
                actor="memu edit",
            )
        except ConflictError as exc:
            raise ConflictError(f"{exc}; your edit is kept in {path}") from None
    path.unlink(missing_ok=True)
    _report(saved.to_json(), name, file_track, as_json)


def _report(saved: dict[str, object] | None, name: str, track: str, as_json: bool) -> None:
    if as_json:
        print_json({"saved": saved is not None, "version": saved})
    elif saved is None:
        print(f"no change to {track}/{name}: nothing saved")
    else:
        print(f"saved {track}/{name} as version {saved['version']}")


def _temp_file(name: str, text: str) -> Path:
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:40] or "file"
    return _atomic.scratch_file(text, prefix=f"memu-edit-{stem}-", suffix=".md")  # 0600: it holds memory


def _run_editor(path: Path) -> None:
    command = [*editor_command(), str(path)]
    try:
        code = subprocess.run(command, check=False).returncode
    except OSError as exc:
        raise UsageError(
            f"cannot start the editor {command[0]!r} ({exc.strerror}); set EDITOR to an installed editor. "
            f"The file is kept in {path}"
        ) from None
    if code != 0:
        raise MemuError(
            f"the editor {command[0]!r} exited with code {code}; nothing was saved, the file is kept in {path}"
        )


def _refuse(path: Path, name: str, problem: str) -> UsageError:
    return UsageError(
        f"{path}: {problem}; nothing was saved. Fix the file and run `memu edit {shlex.quote(name)} --from {path}`"
    )


def _read_edit(path: Path, name: str, track: str) -> tuple[str, str, str]:
    """``(description, content, version)`` from the edited file, or a refusal naming the fix."""
    try:
        doc = _markdown.read(path)
    except UsageError as exc:
        raise UsageError(
            f"{exc}; nothing was saved. Fix the file and run `memu edit {shlex.quote(name)} --from {path}`"
        ) from None
    if not doc.meta:
        raise _refuse(
            path, name, "the frontmatter block is gone; start the file with '---', name/description lines, '---'"
        )
    unknown = sorted(set(doc.meta) - ALLOWED_KEYS)
    if unknown:
        raise _refuse(
            path, name, f"unknown frontmatter key(s) {', '.join(unknown)}; keep only name, description, track"
        )
    if doc.meta.get("name", name) != name:
        raise _refuse(
            path, name, f"the name was changed to {doc.meta['name']!r}; set it back to {name!r} (edit keeps names)"
        )
    if doc.meta.get("track", track) != track:
        raise _refuse(path, name, f"the track was changed to {doc.meta['track']!r}; set it back to {track!r}")
    if not doc.body.strip():
        raise _refuse(
            path, name, f"the body is empty; write the content, or use `memu forget {name}` to delete the file"
        )
    return doc.meta.get("description", "").strip(), doc.body, doc.meta.get("version", "")


def _base_hash(versions: list[FileVersion], base: str, path: Path, name: str, track: str) -> str | None:
    """The hash of the version the edit started from (``None``: it started as a new file)."""
    if base == "new":
        return None
    for version in versions:
        if str(version.version) == base:
            return str(version.hash)
    raise _refuse(
        path, name, f"the version line {base!r} is not a kept version of {track}/{name}; put back the one memu wrote"
    )
