"""``memu export DIR|FILE``: the scope's recall files as a Markdown folder or one JSON file.

A folder holds ``<track>/<file>.md`` per recall file, in the one Markdown format of
:mod:`memu_core._markdown` with ``name``, ``description`` and ``track`` in the frontmatter (so
``memu commit --from-dir`` and ``memu import`` read it back whatever folder it sits in), file
names chosen by the mirror's rule (:func:`memu_core._mirror.place`: no two names share a file on
any file system), and ``memu-export.json`` describing what was exported. A target ending in
``.json`` gets one file in the shape ``memu commit`` takes. The target must not exist or be
empty unless ``--force``; either way the export is written beside it and moved into place
whole, so an interrupted export never leaves half a folder where the old one was.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memu_core.errors import UsageError

MANIFEST = "memu-export.json"
"""The file at the root of an exported folder saying what it holds (ignored as a recall file)."""
FORMAT = "memu-export"
FORMAT_VERSION = 1
SCOPE_KEYS = ("user_id", "agent_id")


def is_json_target(target: Path) -> bool:
    """Whether ``target`` names one JSON file rather than a folder."""
    return target.suffix.lower() == ".json"


def run_export(
    target: Path,
    *,
    tracks: Sequence[str] | None,
    names: Sequence[str] | None,
    where: dict[str, str],
    force: bool,
    as_json: bool,
) -> None:
    """Write the scope's files (``tracks``/``names`` narrow it) to ``target``; print a summary."""
    from memu_core._cli.output import print_json
    from memu_core._cli.progress import Progress
    from memu_core.names import check_track

    target = target.expanduser()
    wanted_tracks = [check_track(t, "--track") for t in tracks] if tracks else None
    _check_target(target, force)
    with Progress("export", unit="files") as progress:
        files = list_scope(where, progress)
    scope = _one_scope(files, where)
    picked = [
        f for f in files if (wanted_tracks is None or f["track"] in wanted_tracks) and (not names or f["name"] in names)
    ]
    if names:
        missing = sorted(set(names) - {f["name"] for f in picked})
        if missing:
            raise UsageError(
                f"no recall file named {', '.join(repr(n) for n in missing)} in this scope; "
                "`memu list-files` shows what exists (nothing was exported)"
            )
    if is_json_target(target):
        _write_json(target, picked, scope)
    else:
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "scope": scope,
            "tracks": wanted_tracks or sorted({f["track"] for f in files} or {"memory", "skill"}),
            "names": list(names) if names else None,
            "files": len(picked),
        }
        _write_folder(target, picked, manifest)
    summary = {"exported": len(picked), "target": str(target), "scope": scope}
    if as_json:
        print_json(summary)
    else:
        print(f"exported {len(picked)} recall file(s) to {target}")


def list_scope(where: dict[str, str], progress: Any = None) -> list[dict[str, Any]]:
    """Every recall file ``where`` selects (all scopes when empty), in (track, name) order."""
    from memu_core._compose import open_backend

    backend = open_backend()
    files: list[dict[str, Any]] = []
    try:
        cursor = None
        while True:
            page = backend.list_all_recall_files(where or None, cursor=cursor, limit=500)
            files.extend(page["recall_files"])
            if progress is not None:
                progress.update(len(files))
            cursor = page.get("next_cursor")
            if not cursor:
                break
    finally:
        backend.close()
    return files


def _one_scope(files: list[dict[str, Any]], where: dict[str, str]) -> dict[str, str]:
    """The one scope the files belong to (``where`` when given); files of several are refused."""
    scopes = {tuple(str(f.get(k) or "default") for k in SCOPE_KEYS) for f in files}
    if len(scopes) > 1:
        shown = ", ".join(f"user_id={u} agent_id={a}" for u, a in sorted(scopes)[:4])
        raise UsageError(
            f"the store holds files of {len(scopes)} scopes ({shown}); pass --user-id and/or --agent-id "
            "to export one of them (nothing was exported)"
        )
    if scopes:
        return dict(zip(SCOPE_KEYS, next(iter(scopes)), strict=True))
    return {k: where.get(k, "default") for k in SCOPE_KEYS}


def _check_target(target: Path, force: bool) -> None:
    if not target.exists() or force:
        if target.exists() and is_json_target(target) and target.is_dir():
            raise UsageError(f"{target} is a folder; name a .json file, or a folder without the .json suffix")
        return
    if target.is_dir():
        if any(target.iterdir()):
            raise UsageError(
                f"{target} exists and is not empty; export to a new or empty folder, or pass --force to replace it"
            )
        return
    if is_json_target(target):
        raise UsageError(f"{target} exists; export to a new file, or pass --force to replace it")
    raise UsageError(f"{target} is a file; export to a folder, or name a .json file to export as JSON")


def payload(files: Sequence[dict[str, Any]], scope: dict[str, str]) -> dict[str, Any]:
    """The commit payload for ``files``: ``recall_files``, and ``user`` unless the default scope."""
    body: dict[str, Any] = {
        "recall_files": [
            {"name": f["name"], "track": f["track"], "description": f["description"], "content": f["content"]}
            for f in files
        ]
    }
    if any(v != "default" for v in scope.values()):
        body["user"] = dict(scope)
    return body


def _write_json(target: Path, files: Sequence[dict[str, Any]], scope: dict[str, str]) -> None:
    from memu_core._atomic import write_text

    target.parent.mkdir(parents=True, exist_ok=True)
    write_text(target, json.dumps(payload(files, scope), indent=2, ensure_ascii=False) + "\n")


def _write_folder(target: Path, files: Sequence[dict[str, Any]], manifest: dict[str, Any]) -> None:
    from memu_core._cli.progress import Progress
    from memu_core._markdown import render
    from memu_core._mirror import place

    placement = place((f["track"], f["name"]) for f in files)
    if placement.bad or placement.clashing:
        # A stored name no file can carry: refuse rather than drop it from the export.
        idents = [ident for ident, _ in placement.bad] + placement.clashing
        shown = ", ".join(f"{track}/{name!r}" for track, name in idents)
        raise UsageError(f"cannot give {shown} a file of its own; rename it with `memu commit` (nothing exported)")
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    try:
        with Progress("export", len(files), unit="files") as progress:
            for f in files:
                rel = placement.rel[(f["track"], f["name"])]
                path = staging / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                meta = {"name": f["name"], "description": f["description"], "track": f["track"]}
                # newline="" keeps the content's own line endings: what the store holds is what the file holds.
                with open(path, "w", encoding="utf-8", newline="") as fh:
                    fh.write(render(meta, f["content"]))
                progress.advance()
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap_in(staging: Path, target: Path) -> None:
    """Move the finished export to ``target``; an old one (``--force``) goes only once it has."""
    os.chmod(staging, 0o755 & ~_umask())
    if not target.exists():
        os.replace(staging, target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.replace(target, old)
    os.replace(staging, target)
    if old.is_dir():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
