"""Bring the store's recall files down into the host's mirror before the agent edits it.

Unlike memU, an uncommitted edit (a file that differs from the baseline, left by a run that
crashed before ``commit``) is never overwritten: it is kept, and still diffs at the next commit.
A file the store no longer has, and that the agent did not touch, is removed from the mirror.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memu_core._atomic import write_text
from memu_core._bridge import snapshot
from memu_core._layout import PRIVATE_FILE, TRACKS, Layout, ensure_private_dir
from memu_core._mirror import RecallDoc, local_docs, place, read_doc
from memu_core._value import Value
from memu_core.interfaces import AgenticMemoryBackend
from memu_core.names import show

PAGE = 200


def store_docs(backend: AgenticMemoryBackend, where: Mapping[str, Any] | None = None) -> Iterator[RecallDoc]:
    """Every ``memory``/``skill`` recall file in the store (in scope ``where``), page by page."""
    cursor: str | None = None
    while True:
        page: dict[str, Any] = backend.list_all_recall_files(where, cursor=cursor, limit=PAGE)
        for item in page.get("recall_files") or []:
            track = item.get("track")
            name = item.get("name")
            if track in TRACKS and isinstance(name, str) and name:
                yield RecallDoc(track, name, item.get("description") or "", item.get("content") or "")
        cursor = page.get("next_cursor")
        if not cursor:
            return


class SyncResult(Value):
    """What mirroring did: the new baseline, the edits kept, and the names left out."""

    __slots__ = ("baseline", "kept", "listed", "settled", "skipped")
    _fields = ("baseline", "kept", "listed", "skipped", "settled")

    def __init__(
        self,
        baseline: dict[str, snapshot.Entry],
        kept: int = 0,
        listed: int = 0,
        skipped: list[str] | None = None,
        settled: bool = False,
    ) -> None:
        self.baseline = baseline
        self.kept = kept
        self.listed = listed
        """How many files the store listed (in the mirrored scope)."""
        self.skipped: list[str] = [] if skipped is None else skipped
        """One warning per stored name the mirror cannot hold, naming it and the fix."""
        self.settled = settled
        """Mirroring changed nothing: the tree already matched the listing and the baseline, no
        edit was kept and no name skipped. Run again over the same store, it would change nothing
        again."""


def sync(layout: Layout, backend: AgenticMemoryBackend, where: Mapping[str, Any] | None = None) -> SyncResult:
    """Mirror the store into the tree; return the new baseline, the kept edits and the skipped names.

    Only scope ``where`` is mirrored (the user and agent this machine commits as): a shared
    store's other users' files never reach this agent's tree. The track folders are created
    even when the store is empty, since the job files tell the agent to list them.

    A stored name that breaks the naming rules (stored before they existed, or by a client that
    skipped them) or that two scopes share is left out of the mirror with a warning: one bad
    name must never stop a run, nor take another file's place.
    """
    for track in TRACKS:
        ensure_private_dir(layout.track_dir(track))
    loaded = snapshot.load(layout.snapshot)
    baseline = loaded or {}
    local = local_docs(layout.base, TRACKS)
    on_disk = {rel: _read_or_none(path, rel.split("/", 1)[0]) for rel, path in local.items()}
    # An uncommitted edit keeps its path for the name it was mirrored as (so a rename the agent
    # has not committed yet still forgets the old name), or for the name it holds when new.
    edits = [
        (rel, _owner(baseline.get(rel), doc))
        for rel, doc in on_disk.items()
        if doc is None or rel not in baseline or baseline[rel].digest != doc.digest()
    ]
    stored = list(store_docs(backend, where))
    docs: dict[tuple[str, str], RecallDoc] = {}
    for doc in stored:
        docs.setdefault((doc.track, doc.name), doc)  # a name two scopes share: the first is mirrored
    placement = place(
        ((doc.track, doc.name) for doc in stored),
        edits,
        ((rel, (e.track, e.name)) for rel, e in baseline.items()),
    )
    result = SyncResult({}, listed=len(stored))
    for (track, name), problem in placement.bad:
        result.skipped.append(
            f"{track}/{show(name)} is not mirrored: the name {problem}; remove it with "
            f"`memu forget --track {track} NAME` (or the API's forget) and store it under a valid name"
        )
    for track, name in placement.clashing:
        result.skipped.append(
            f"{track}/{show(name)} is not mirrored: another stored file (another scope) has the same name; "
            "rename one of them"
        )
    seen: set[str] = set()
    wrote = removed = False
    for ident, rel in placement.rel.items():
        doc = docs[ident]
        seen.add(rel)
        entry = snapshot.Entry(doc.digest(), doc.track, doc.name)
        before = baseline.get(rel)
        if rel in local:
            current = on_disk[rel]
            digest = current.digest() if current is not None else None
            if digest == entry.digest:
                result.baseline[rel] = entry
                continue
            if before is None or digest != before.digest:
                result.kept += 1  # the agent's uncommitted edit wins until it is committed
                result.baseline[rel] = entry
                continue
        write_text(layout.base / rel, doc.render(), fsync=False, mode=PRIVATE_FILE)
        wrote = True
        result.baseline[rel] = entry
    spellings = {_fold(rel): rel for rel in seen}
    for rel, path in local.items():
        if rel in seen:
            continue
        twin = spellings.get(_fold(rel))
        if twin is not None and same_file(path, layout.base / twin):
            # A case-insensitive or normalising file system (macOS, Windows) just wrote the
            # store's spelling of this name over this very file: removing it would remove that.
            continue
        before = baseline.get(rel)
        current = on_disk[rel]
        if before is not None and current is not None and current.digest() == before.digest:
            path.unlink(missing_ok=True)  # forgotten elsewhere (or moved), untouched here
            removed = True
        elif before is not None:
            result.kept += 1
            result.baseline[rel] = before
    if loaded is None or result.baseline != baseline:
        # Unchanged (the steady state: nothing stored since the last run) means no write and
        # none of the atomic writer's two fsyncs.
        snapshot.save(layout.snapshot, result.baseline)
    else:
        # Settled only when the tree holds exactly the baseline's files: an untracked file the
        # agent added takes part in the placement, so a tree without it could place otherwise.
        result.settled = (
            not (wrote or removed or result.kept or result.skipped) and local.keys() == result.baseline.keys()
        )
    return result


def unchanged(layout: Layout, baseline_json: Mapping[str, Any], listed: int) -> SyncResult | None:
    """The result a :func:`sync` over an unchanged store would give, without the store, or ``None``.

    ``baseline_json`` is the baseline a settled sync left (:attr:`SyncResult.settled`). When the
    baseline file still holds it and every mirrored file still has its digest (no edit, no file
    added or removed), a sync over the same listing is settled again: nothing to write, remove or
    keep. Any difference returns ``None`` and the caller lists the store.
    """
    for track in TRACKS:
        ensure_private_dir(layout.track_dir(track))
    loaded = snapshot.load(layout.snapshot)
    if loaded is None or {rel: e.to_json() for rel, e in loaded.items()} != baseline_json:
        return None
    local = local_docs(layout.base, TRACKS)
    if local.keys() != loaded.keys():
        return None
    for rel, path in local.items():
        doc = _read_or_none(path, rel.split("/", 1)[0])
        if doc is None or doc.digest() != loaded[rel].digest:
            return None
    return SyncResult(loaded, listed=listed, settled=True)


def _fold(rel: str) -> str:
    """The spelling a case-insensitive, normalising file system compares."""
    return unicodedata.normalize("NFC", rel).casefold()


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (``False`` when either is missing)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _owner(before: snapshot.Entry | None, doc: RecallDoc | None) -> tuple[str, str] | None:
    if before is not None:
        return (before.track, before.name)
    return (doc.track, doc.name) if doc is not None else None


def _read_or_none(path: Path, track: str) -> RecallDoc | None:
    try:
        return read_doc(path, track)
    except Exception:  # an unparseable edit is the agent's to fix; treat it as changed
        return None
