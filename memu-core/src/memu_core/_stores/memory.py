"""The ``memory`` store: everything in Python dicts, gone when the process exits.

It exists for tests and throwaway runs (``MEMU_DB=:memory:``). It honours the same contract as
the sqlite store, including all-or-nothing commits: :meth:`InMemoryStore.apply` checks every
precondition before it mutates anything, and nothing after the checks can fail.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import ClassVar

from memu_core._stores import _common as c
from memu_core._stores._bm25 import Bm25Index
from memu_core.errors import UsageError
from memu_core.interfaces import MemoryStore
from memu_core.text import query_terms
from memu_core.types import (
    ChangeSet,
    FileWrite,
    Fingerprint,
    HistoryNote,
    Hit,
    RecallFile,
    Resource,
    ResourceWrite,
    Scope,
    Segment,
    StoredFile,
    Where,
    utcnow,
)

_FileKey = tuple[Scope, str, str]
_VecKey = tuple[str, str]  # (owner kind, owner id)


def _in_scope(scope: Scope, where: c.ScopeFilter) -> bool:
    return all(getattr(scope, key) in values for key, values in where.items())


class InMemoryStore(MemoryStore):
    """A thread-safe, process-local :class:`~memu_core.interfaces.MemoryStore`."""

    name: ClassVar[str] = "memory"
    url_schemes: ClassVar[tuple[str, ...]] = (":memory:", "inmemory")

    def __init__(self) -> None:
        # One lock for everything: the store is small and every method is short.
        self._lock = threading.RLock()
        self._files: dict[str, RecallFile] = {}
        self._file_keys: dict[_FileKey, str] = {}
        self._segments: dict[str, Segment] = {}
        self._file_segments: dict[str, list[str]] = {}
        self._resources: dict[str, Resource] = {}
        self._resource_keys: dict[tuple[Scope, str], str] = {}
        self._vectors: dict[_VecKey, dict[str, list[float]]] = {}
        self._seg_index = Bm25Index((1.0, 0.4))
        self._res_index = Bm25Index((1.0, 1.0))
        self._live: Fingerprint | None = None
        self._generation = 0

    @classmethod
    def open(cls, url: str = ":memory:") -> InMemoryStore:
        """A new empty store; ``url`` is accepted for symmetry and ignored."""
        return cls()

    # -- metadata -------------------------------------------------------------------------
    def fingerprint(self) -> Fingerprint | None:
        """The live embedding fingerprint, or ``None`` before the first vector."""
        with self._lock:
            return self._live

    def generation(self) -> int:
        """Grows by one with every committed write."""
        with self._lock:
            return self._generation

    # -- planning reads -------------------------------------------------------------------
    def get_files(self, scope: Scope, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
        """Stored files among ``(track, name)`` keys in exactly ``scope``."""
        with self._lock:
            live = c.fingerprint_key(self._live) if self._live else None
            out: dict[tuple[str, str], StoredFile] = {}
            for track, name in keys:
                file_id = self._file_keys.get((scope, track, name))
                if file_id is None:
                    continue
                texts = frozenset(
                    self._segments[s].text
                    for s in self._file_segments.get(file_id, [])
                    if live is None or live in self._vectors.get(("segment", s), {})
                )
                out[(track, name)] = StoredFile(file=replace(self._files[file_id]), segment_texts=texts)
            return out

    def get_resources(self, scope: Scope, paths: Iterable[str]) -> dict[str, Resource]:
        """Stored resources among ``paths`` in exactly ``scope``."""
        with self._lock:
            out: dict[str, Resource] = {}
            for path in paths:
                rid = self._resource_keys.get((scope, path))
                if rid is not None:
                    out[path] = replace(self._resources[rid])
            return out

    # -- writes ---------------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> None:
        """Write a whole commit: every check first, then the mutations (which cannot fail)."""
        c.check_change_vectors(changes)
        with self._lock:
            fp = changes.fingerprint
            if fp is not None and self._live is not None and fp != self._live:
                raise c.mismatch(self._live, fp)
            # Simulate revisions so a file written twice in one change set is checked in order.
            revisions = {key: self._files[fid].revision for key, fid in self._file_keys.items()}
            for fw in changes.files:
                key = (fw.scope, fw.track, fw.name)
                actual = revisions.get(key)
                if actual != fw.expected_revision:
                    raise c.conflict(fw.track, fw.name, fw.expected_revision, actual)
                revisions[key] = (actual or 0) + 1
            if fp is not None and self._live is None:
                self._live = fp
            fp_key = c.fingerprint_key(fp) if fp is not None else ""
            for rw in changes.resources:
                self._write_resource(rw, fp_key)
            for fw in changes.files:
                self._write_file(fw, fp_key)
            self._generation += 1

    def _write_resource(self, rw: ResourceWrite, fp_key: str) -> None:
        now = utcnow()
        rid = self._resource_keys.get((rw.scope, rw.path))
        if rid is None:
            rid = c.new_id()
            self._resource_keys[(rw.scope, rw.path)] = rid
            self._resources[rid] = Resource(rid, rw.scope, rw.path, rw.description, now, now)
        else:
            old = self._resources[rid]
            if old.description != rw.description:
                self._resources[rid] = replace(old, description=rw.description, updated_at=now)
                self._vectors.pop(("resource", rid), None)
        if rw.vector is not None:
            self._vectors[("resource", rid)] = {fp_key: list(rw.vector)}
        self._res_index.add(rid, (rw.path, rw.description))

    def _write_file(self, fw: FileWrite, fp_key: str) -> None:
        now = utcnow()
        key = (fw.scope, fw.track, fw.name)
        file_id = self._file_keys.get(key)
        if file_id is None:
            file_id = c.new_id()
            self._file_keys[key] = file_id
            self._files[file_id] = RecallFile(
                file_id,
                fw.scope,
                fw.track,
                fw.name,
                fw.description,
                fw.content,
                fw.content_hash,
                1,
                now,
                now,
            )
        else:
            old = self._files[file_id]
            changed = (old.description, old.content) != (fw.description, fw.content)
            self._files[file_id] = replace(
                old,
                description=fw.description,
                content=fw.content,
                content_hash=fw.content_hash,
                revision=old.revision + 1,
                updated_at=now if changed else old.updated_at,
            )
        # Reconcile by text: an unchanged text keeps its row id and vectors.
        spare: dict[str, list[str]] = {}
        for sid in self._file_segments.get(file_id, []):
            spare.setdefault(self._segments[sid].text, []).append(sid)
        kept: list[str] = []
        for draft in fw.segments:
            pool = spare.get(draft.text)
            sid = pool.pop(0) if pool else c.new_id()
            self._segments[sid] = Segment(
                sid, file_id, fw.scope, fw.track, draft.kind, draft.ordinal, draft.text, draft.context
            )
            self._seg_index.add(sid, (draft.text, draft.context))
            if draft.vector is not None:
                self._vectors.setdefault(("segment", sid), {})[fp_key] = list(draft.vector)
            kept.append(sid)
        for pool in spare.values():
            for sid in pool:
                self._drop_segment(sid)
        self._file_segments[file_id] = kept

    def _drop_segment(self, sid: str) -> None:
        self._segments.pop(sid, None)
        self._vectors.pop(("segment", sid), None)
        self._seg_index.remove(sid)

    def delete_file(self, scope: Scope, track: str, name: str, *, note: HistoryNote | None = None) -> RecallFile | None:
        """Delete a file with its segments and their vectors (this store keeps no history)."""
        with self._lock:
            file_id = self._file_keys.pop((scope, track, name), None)
            if file_id is None:
                return None
            for sid in self._file_segments.pop(file_id, []):
                self._drop_segment(sid)
            self._generation += 1
            return self._files.pop(file_id)

    # -- listing and search ---------------------------------------------------------------
    def list_files(
        self, where: Where, after: tuple[str, str, str] | None, limit: int
    ) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
        """One keyset page ordered by ``(track, name, id)`` strictly after ``after``."""
        c.check_limit(limit)
        flt = c.check_where(where)
        with self._lock:
            rows = sorted(
                (
                    f
                    for f in self._files.values()
                    if _in_scope(f.scope, flt) and (after is None or (f.track, f.name, f.id) > tuple(after))
                ),
                key=lambda f: (f.track, f.name, f.id),
            )
            page = [replace(f) for f in rows[:limit]]
            more = len(rows) > limit
            last = page[-1] if page else None
            return page, ((last.track, last.name, last.id) if more and last else None)

    def _segment_pool(self, where: Where, tracks: Sequence[str] | None) -> list[str]:
        flt = c.check_where(where)
        wanted = c.check_tracks(tracks)
        return [
            s.id for s in self._segments.values() if _in_scope(s.scope, flt) and (wanted is None or s.track in wanted)
        ]

    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        """BM25 over the normalised words of each segment's text (weight 1) and context (0.4)."""
        terms = query_terms(query)
        with self._lock:
            pool = self._segment_pool(where, tracks)
            if limit < 1 or not terms:
                return []
            return _best(self._seg_index.score(terms, pool), limit)

    def search_segments_dense(
        self, vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        """Cosine (inner product of unit vectors) over segments holding a live vector."""
        with self._lock:
            pool = self._segment_pool(where, tracks)
            return self._dense("segment", pool, vector, limit)

    def search_resources_lexical(self, query: str, where: Where, limit: int) -> list[Hit]:
        """BM25 over each resource's path and description."""
        terms = query_terms(query)
        flt = c.check_where(where)
        with self._lock:
            if limit < 1 or not terms:
                return []
            pool = [r.id for r in self._resources.values() if _in_scope(r.scope, flt)]
            return _best(self._res_index.score(terms, pool), limit)

    def search_resources_dense(self, vector: Sequence[float], where: Where, limit: int) -> list[Hit]:
        """Cosine over resources whose description holds a live vector."""
        flt = c.check_where(where)
        with self._lock:
            pool = [r.id for r in self._resources.values() if _in_scope(r.scope, flt)]
            return self._dense("resource", pool, vector, limit)

    def _dense(self, kind: str, pool: list[str], vector: Sequence[float], limit: int) -> list[Hit]:
        if self._live is None or limit < 1:
            return []
        c.check_query_vector(vector, self._live)
        live = c.fingerprint_key(self._live)
        ids: list[str] = []
        rows: list[list[float]] = []
        for owner in pool:
            vec = self._vectors.get((kind, owner), {}).get(live)
            if vec is not None:
                ids.append(owner)
                rows.append(vec)
        if not ids:
            return []
        import numpy as np  # only dense search needs it

        matrix = np.asarray(rows, dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        scores = matrix @ (query / norm if norm else query)
        return _best(list(zip(ids, scores.tolist(), strict=True)), limit)

    def fetch_segments(self, ids: Sequence[str]) -> dict[str, Segment]:
        """Segments by id; missing ids are absent."""
        with self._lock:
            return {i: replace(self._segments[i]) for i in ids if i in self._segments}

    def fetch_files(self, ids: Sequence[str]) -> dict[str, RecallFile]:
        """Files by id; missing ids are absent."""
        with self._lock:
            return {i: replace(self._files[i]) for i in ids if i in self._files}

    def fetch_resources(self, ids: Sequence[str]) -> dict[str, Resource]:
        """Resources by id; missing ids are absent."""
        with self._lock:
            return {i: replace(self._resources[i]) for i in ids if i in self._resources}

    # -- re-embedding ---------------------------------------------------------------------
    def texts_to_embed(self, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
        """Segments, then described resources, lacking a vector under ``fingerprint``."""
        c.check_limit(limit)
        key = c.fingerprint_key(fingerprint)
        with self._lock:
            out: list[tuple[str, str, str]] = []
            for s in self._segments.values():
                if key not in self._vectors.get(("segment", s.id), {}):
                    out.append(("segment", s.id, s.text))
                    if len(out) >= limit:
                        return out
            for r in self._resources.values():
                if r.description and key not in self._vectors.get(("resource", r.id), {}):
                    out.append(("resource", r.id, r.description))
                    if len(out) >= limit:
                        break
            return out

    def count_texts_to_embed(self, fingerprint: Fingerprint) -> int:
        """How many rows :meth:`texts_to_embed` would hand out in all (the reindex's progress total)."""
        key = c.fingerprint_key(fingerprint)
        with self._lock:
            segments = sum(key not in self._vectors.get(("segment", s.id), {}) for s in self._segments.values())
            resources = sum(
                bool(r.description) and key not in self._vectors.get(("resource", r.id), {})
                for r in self._resources.values()
            )
        return segments + resources

    def store_vectors(self, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
        """Stage vectors under ``fingerprint``; rows whose owner is gone are skipped."""
        for kind, _, vec in rows:
            if kind not in ("segment", "resource"):
                raise UsageError(f"vector owner kind must be 'segment' or 'resource', got {kind!r}")
            if len(vec) != fingerprint.dimension:
                raise UsageError(
                    f"a vector has {len(vec)} dimensions but {fingerprint.describe()} says {fingerprint.dimension}"
                )
        key = c.fingerprint_key(fingerprint)
        with self._lock:
            for kind, owner, vec in rows:
                table = self._segments if kind == "segment" else self._resources
                if owner in table:
                    self._vectors.setdefault((kind, owner), {})[key] = list(vec)
            self._generation += 1

    def switch_fingerprint(self, fingerprint: Fingerprint) -> None:
        """Make ``fingerprint`` live and drop every vector made under another one."""
        key = c.fingerprint_key(fingerprint)
        with self._lock:
            for owner, by_fp in list(self._vectors.items()):
                kept = {key: by_fp[key]} if key in by_fp else {}
                if kept:
                    self._vectors[owner] = kept
                else:
                    del self._vectors[owner]
            self._live = fingerprint
            self._generation += 1


def _best(scored: list[tuple[str, float]], limit: int) -> list[Hit]:
    # Ties broken by id so results are stable from one call to the next.
    scored.sort(key=lambda p: (-p[1], p[0]))
    return [Hit(i, float(s)) for i, s in scored[:limit]]
