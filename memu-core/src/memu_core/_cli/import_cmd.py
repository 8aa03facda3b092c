"""``memu import DIR|FILE``: an export (or any folder of Markdown files, or a commit payload)
committed back, all or nothing.

Every file is read and checked before anything is written: a file that is not UTF-8, has an
unclosed frontmatter, a name no file can carry (``/``, ``..``, control characters) or a name
another file holds too is named on stderr with the fix, and the import stops with nothing
written. The files then go to the store in one commit (one transaction on the local stores), so
an import is all there or not at all; unchanged files cost nothing, so importing the same
export twice changes nothing. ``--prune`` then forgets the scope's files, on the tracks the
export covered, that the import does not hold: the store matches the folder.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memu_core.errors import UsageError


@dataclass(slots=True)
class ImportSet:
    """What an import commits: files, resources, the scope and the tracks ``--prune`` may touch."""

    files: list[dict[str, str]] = field(default_factory=list)
    resources: list[dict[str, str]] = field(default_factory=list)
    scope: dict[str, str] = field(default_factory=dict)
    """``user_id``/``agent_id`` to write to (empty: the configured default scope)."""
    tracks: list[str] = field(default_factory=list)
    """The tracks the source covers: ``--prune`` forgets only on these."""
    partial: bool = False
    """The source holds chosen names only (``export --name``): it cannot say what to prune."""
    label: str = ""


def read_source(source: Path) -> ImportSet:
    """The files of an export folder, a folder of Markdown files, or a JSON commit payload."""
    source = source.expanduser()
    if source.is_dir():
        return _read_folder(source)
    if source.is_file():
        return _read_json(source)
    raise UsageError(f"{source} does not exist; pass a folder `memu export` wrote, or its .json file")


def _read_folder(directory: Path) -> ImportSet:
    from memu_core._cli.export_cmd import MANIFEST
    from memu_core._cli.from_dir import read_folder

    manifest = _manifest(directory / MANIFEST)
    folder = read_folder(directory)
    if folder.problems:
        for line in folder.problems:
            print(f"not imported: {line}", file=sys.stderr)
        raise UsageError(
            f"{len(folder.problems)} file(s) in {directory} cannot be imported (listed above); "
            "fix them and import again (nothing was written)"
        )
    if not folder.seen and manifest is None:
        raise UsageError(f"{directory} holds no *.md files and no {MANIFEST}; pass the folder `memu export` wrote")
    out = ImportSet(files=folder.files, label=str(directory))
    if manifest is not None:
        out.scope = _scope(manifest.get("scope"), directory / MANIFEST)
        tracks = manifest.get("tracks")
        out.tracks = [t for t in tracks if isinstance(t, str)] if isinstance(tracks, list) else []
        out.partial = bool(manifest.get("names"))
    if not out.tracks:
        out.tracks = sorted({f["track"] for f in out.files})
    return out


def _manifest(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); restore it from the export, or delete it") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path} must hold a JSON object; restore it from the export, or delete it")
    return value


def _scope(value: Any, where: Path) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f'{where}: \'scope\' must be an object of strings such as {{"user_id": "alice"}}')
    return {k: v for k, v in value.items() if k in ("user_id", "agent_id") and v and v != "default"}


def _read_json(path: Path) -> ImportSet:
    from memu_core._cli.memory_cmds import read_payload
    from memu_core.names import check_name, check_track

    body = read_payload(str(path))
    items = body.get("recall_files") or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise UsageError(f"{path}: recall_files must be a list of objects with name, track, description, content")
    files: list[dict[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for index, item in enumerate(items):
        where = f"{path}: recall_files[{index}]"
        try:
            name = check_name(item.get("name"), where)
            track = check_track(item.get("track"), where)
            for key in ("description", "content"):
                if item.get(key) is not None and not isinstance(item[key], str):
                    raise UsageError(f"{where}: {key!r} must be a string; fix the file")
        except UsageError as exc:
            problems.append(str(exc))
            continue
        if (track, name) in seen:
            problems.append(
                f"{where} and recall_files[{seen[(track, name)]}] both hold the {track} file {name!r}; keep one of them"
            )
            continue
        seen[(track, name)] = index
        files.append(
            {
                "name": name,
                "track": track,
                "description": item.get("description") or "",
                "content": item.get("content") or "",
            }
        )
    if problems:
        for line in problems:
            print(f"not imported: {line}", file=sys.stderr)
        raise UsageError(f"{len(problems)} item(s) in {path} cannot be imported (listed above); nothing was written")
    resources = body.get("resource") or []
    user = body.get("user") or {}
    scope = {k: v for k, v in user.items() if k in ("user_id", "agent_id") and isinstance(v, str) and v}
    tracks = sorted({f["track"] for f in files})
    return ImportSet(files=files, resources=list(resources), scope=scope, tracks=tracks, label=str(path))


def commit_set(batch: ImportSet, *, prune: bool) -> dict[str, Any]:
    """Commit ``batch`` in one call (progress on stderr); with ``prune``, forget what it lacks."""
    from memu_core._cli.progress import Progress, watch_embedding
    from memu_core._compose import open_backend

    if prune and batch.partial:
        raise UsageError(
            f"{batch.label} is an export of chosen names (--name), so it cannot say what else to forget; "
            "import it without --prune"
        )
    result: dict[str, Any] = {"recall_files": [], "resources": [], "stats": {}}
    forgotten: list[dict[str, Any]] = []
    with Progress("import", unit="texts") as progress:
        progress.note(f"importing {len(batch.files)} recall file(s) from {batch.label}")
        with watch_embedding(progress):
            backend = open_backend()
            try:
                if batch.files or batch.resources:
                    result = backend.commit_results(
                        recall_files=batch.files, resource=batch.resources or None, user=batch.scope or None
                    )
                if prune:
                    forgotten = _prune(backend, batch)
            finally:
                backend.close()
    return {**result, "forgotten": forgotten}


def _prune(backend: Any, batch: ImportSet) -> list[dict[str, Any]]:
    """Forget the scope's files on the batch's tracks that the batch does not hold."""
    keep = {(f["track"], f["name"]) for f in batch.files}
    listed: list[dict[str, Any]] = []
    cursor = None
    where = _where_for(backend, batch.scope)
    while True:  # list everything first: forgetting while paging would shift the cursor
        page = backend.list_all_recall_files(where, cursor=cursor, limit=500)
        listed.extend(page["recall_files"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    gone: list[dict[str, Any]] = []
    for item in listed:
        if item["track"] in batch.tracks and (item["track"], item["name"]) not in keep:
            scope = {k: item[k] for k in ("user_id", "agent_id") if item.get(k)}
            gone.extend(backend.forget(item["name"], track=item["track"], user=scope or None)["forgotten"])
    return gone


def _where_for(backend: Any, scope: dict[str, str]) -> dict[str, str]:
    """The filter of the scope an import writes to (the configured default fills what is unnamed)."""
    from memu_core._engine.inputs import parse_scope

    resolved = parse_scope(scope or None, getattr(backend, "default_scope", None))
    return {"user_id": resolved.user_id, "agent_id": resolved.agent_id}


def run_import(
    source: Path | None,
    *,
    from_memu: Path | None,
    memu_home: Path | None,
    prune: bool,
    where: dict[str, str],
    as_json: bool,
) -> None:
    """``memu import``: exactly one of SOURCE or ``--from-memu``; print what changed."""
    if (source is None) == (from_memu is None):
        raise UsageError("import needs exactly one of SOURCE (a folder or .json file memu export wrote) or --from-memu")
    if from_memu is not None:
        from memu_core._cli.from_memu import run_from_memu

        run_from_memu(from_memu, memu_home=memu_home, where=where, as_json=as_json)
        return
    assert source is not None
    batch = read_source(source)
    if where:
        batch.scope = dict(where)
    result = commit_set(batch, prune=prune)
    report(result, len(batch.files), as_json)


def report(result: dict[str, Any], sent: int, as_json: bool, extra: Sequence[str] = ()) -> None:
    """Print an import's outcome: what was written, unchanged and forgotten."""
    from memu_core._cli.output import print_json

    stats = result.get("stats") or {}
    written = int(stats.get("files_written", 0))
    if as_json:
        print_json(
            {
                "imported": sent,
                "written": written,
                "unchanged": sent - written,
                "texts_embedded": int(stats.get("texts_embedded", 0)),
                "resources": len(result.get("resources") or []),
                "forgotten": [{"track": f["track"], "name": f["name"]} for f in result.get("forgotten") or []],
                **({"notes": list(extra)} if extra else {}),
            }
        )
        return
    print(f"imported {sent} recall file(s): {written} written, {sent - written} unchanged")
    resources = result.get("resources") or []
    if resources:
        print(f"  and {len(resources)} resource(s)")
    forgotten = result.get("forgotten") or []
    if forgotten:
        print(f"pruned {len(forgotten)} recall file(s) the import does not hold")
        for item in forgotten:
            print(f"  - {item['track']}/{item['name']}")
    for line in extra:
        print(line)
