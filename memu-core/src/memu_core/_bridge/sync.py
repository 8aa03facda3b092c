"""Bring the store's recall files down into the host's mirror before the agent edits it.

Unlike memU, an uncommitted edit (a file that differs from the baseline, left by a run that
crashed before ``commit``) is never overwritten: it is kept, and still diffs at the next commit.
A file the store no longer has, and that the agent did not touch, is removed from the mirror.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memu_core._atomic import write_text
from memu_core._bridge import snapshot
from memu_core._layout import TRACKS, Layout
from memu_core._mirror import RecallDoc, file_name, local_docs, read_doc
from memu_core.interfaces import AgenticMemoryBackend

PAGE = 200


def store_docs(backend: AgenticMemoryBackend) -> Iterator[RecallDoc]:
    """Every ``memory``/``skill`` recall file in the store, page by page."""
    cursor: str | None = None
    while True:
        page: dict[str, Any] = backend.list_all_recall_files(cursor=cursor, limit=PAGE)
        for item in page.get("recall_files") or []:
            track = item.get("track")
            name = item.get("name")
            if track in TRACKS and isinstance(name, str) and name:
                yield RecallDoc(track, name, item.get("description") or "", item.get("content") or "")
        cursor = page.get("next_cursor")
        if not cursor:
            return


def sync(layout: Layout, backend: AgenticMemoryBackend) -> tuple[dict[str, snapshot.Entry], int]:
    """Mirror the store into the tree; return the new baseline and how many edits were kept."""
    baseline = snapshot.load(layout.snapshot) or {}
    local = local_docs(layout.base, TRACKS)
    new_baseline: dict[str, snapshot.Entry] = {}
    kept = 0
    seen: set[str] = set()
    for doc in store_docs(backend):
        rel = f"{doc.track}/{file_name(doc.name)}"
        seen.add(rel)
        entry = snapshot.Entry(doc.digest(), doc.track, doc.name)
        path = layout.base / rel
        before = baseline.get(rel)
        if rel in local:
            on_disk = _digest_or_none(path, doc.track)
            if on_disk == entry.digest:
                new_baseline[rel] = entry
                continue
            if before is None or on_disk != before.digest:
                kept += 1  # the agent's uncommitted edit wins until it is committed
                new_baseline[rel] = entry
                continue
        write_text(path, doc.render(), fsync=False)
        new_baseline[rel] = entry
    for rel, path in local.items():
        if rel in seen:
            continue
        before = baseline.get(rel)
        if before is not None and _digest_or_none(path, before.track) == before.digest:
            path.unlink(missing_ok=True)  # forgotten elsewhere, untouched here
        elif before is not None:
            kept += 1
            new_baseline[rel] = before
    snapshot.save(layout.snapshot, new_baseline)
    return new_baseline, kept


def _digest_or_none(path: Any, track: str) -> str | None:
    try:
        return read_doc(path, track).digest()
    except Exception:  # an unparseable edit is the agent's to fix; treat it as changed
        return None
