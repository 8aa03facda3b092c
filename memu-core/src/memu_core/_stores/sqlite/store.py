"""The ``sqlite`` :class:`~memu_core.interfaces.MemoryStore`, on the stdlib ``sqlite3`` driver.

Reads and writes never import SQLAlchemy: ``memu retrieve`` is a fresh process per agent turn
and its budget is a few hundred milliseconds (see ``docs/adr/0002-sqlite-store.md``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from memu_core._stores import _common as c
from memu_core._stores.sqlite import changes, connection, history, lexical, writes
from memu_core._stores.sqlite.dense import DenseCache, snapshot
from memu_core._stores.sqlite.rows import (
    FILE_COLS,
    RESOURCE_COLS,
    SEGMENT_COLS,
    bump_generation,
    chunks,
    file_from_row,
    placeholders,
    resource_from_row,
    scope_sql,
    segment_from_row,
    vector_blob,
)
from memu_core._stores.sqlite.wordhits import WordHits
from memu_core.errors import MemuError, StoreError, UsageError
from memu_core.interfaces import MemoryStore
from memu_core.text import lexical_terms, query_terms
from memu_core.types import (
    ChangeSet,
    FileVersion,
    Fingerprint,
    HistoryNote,
    Hit,
    RecallFile,
    Resource,
    Scope,
    Segment,
    StoredFile,
    StoreStats,
    Where,
)

SEGMENT_WEIGHTS = (1.0, 0.4)
"""bm25() column weights: a word in the line itself counts more than one in its context."""


class SqliteStore(MemoryStore):
    """One SQLite file in WAL mode; thread-safe (one connection behind one lock)."""

    name: ClassVar[str] = "sqlite"
    url_schemes: ClassVar[tuple[str, ...]] = ("sqlite://",)

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self._conn = conn
        self._path = path
        self._lock = threading.RLock()
        self._words: sqlite3.Connection | None = None
        self._words_lock = threading.Lock()
        self._dense = DenseCache()
        self._term_counts = lexical.TermCounts()
        self.word_hits = WordHits()
        """The last word searches' hits, kept until the next write (:mod:`.wordhits`)."""

    @classmethod
    def open(cls, url: str) -> SqliteStore:
        """Open the store file at ``url`` (a path or ``sqlite:///path``), creating or
        upgrading its schema only when it is missing or behind."""
        path = connection.path_from_url(url)
        conn = connection.connect(path)
        try:
            connection.ensure_schema(conn, path)
        except BaseException:
            conn.close()
            raise
        return cls(conn, str(path))

    @classmethod
    def upgrade_schema(cls, url: str) -> str | None:
        """``memu db upgrade``: migrate the file at ``url`` to the newest revision."""
        from memu_core._stores.sqlite import migrate

        return migrate.upgrade(url)

    @classmethod
    def schema_revision(cls, url: str) -> str | None:
        """``memu db current``: the file's schema revision (``None`` before it is created)."""
        from memu_core._stores.sqlite import migrate

        return migrate.current(url)

    @property
    def path(self) -> str:
        """The store file's path."""
        return self._path

    def close(self) -> None:
        """Close the connections (the WAL is checkpointed by SQLite when the last one closes)."""
        with self._words_lock:
            if self._words is not None:
                self._words.close()
                self._words = None
        with self._lock:
            self._conn.close()

    # -- plumbing -------------------------------------------------------------------------
    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"reading the SQLite store {self._path!r} failed: {exc}") from exc

    @contextmanager
    def _read_words(self) -> Iterator[sqlite3.Connection]:
        """The word searches' own connection, opened on first use.

        The engine looks a hybrid query's words up on another thread while it embeds the query
        and searches the vectors (ADR 0030); on the main connection the two would take turns.
        WAL lets both read at once; each statement sees the last committed write.
        """
        with self._words_lock:
            try:
                if self._words is None:
                    self._words = connection.connect(Path(self._path))
                yield self._words
            except sqlite3.Error as exc:
                raise StoreError(f"reading the SQLite store {self._path!r} failed: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any error."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if "readonly" in str(exc).replace("-", "").replace(" ", "").lower():
                    raise StoreError(
                        f"the SQLite store {self._path!r} is read-only for this user ({exc}); give it and "
                        "its folder write access, or point MEMU_DB at a writable place"
                    ) from exc
                raise StoreError(
                    f"the SQLite store {self._path!r} stayed locked by another writer "
                    f"({exc}); retry when the other memu command has finished"
                ) from exc
            try:
                yield conn
                bump_generation(conn)
                changes.prune(conn)
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:  # SQLite may already have rolled back (disk full, I/O)
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"writing the SQLite store {self._path!r} failed: {exc}") from exc
                raise

    # -- metadata -------------------------------------------------------------------------
    def fingerprint(self) -> Fingerprint | None:
        """The live embedding fingerprint, or ``None`` before the first vector."""
        with self._read() as conn:
            return writes.read_live(conn)

    def generation(self) -> int:
        """Grows by one with every committed write."""
        with self._read() as conn:
            return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    # -- planning reads -------------------------------------------------------------------
    def get_files(self, scope: Scope, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
        """Stored files among ``(track, name)`` keys in exactly ``scope``."""
        out: dict[tuple[str, str], StoredFile] = {}
        with self._read() as conn:
            live = writes.read_live(conn)
            for track, name in dict.fromkeys(keys):
                row = conn.execute(
                    f"SELECT {FILE_COLS} FROM files WHERE user_id = ? AND agent_id = ? AND track = ? AND name = ?",
                    (scope.user_id, scope.agent_id, track, name),
                ).fetchone()
                if row is None:
                    continue
                if live is None:
                    texts = conn.execute("SELECT text FROM segments WHERE file_id = ?", (row[0],))
                else:
                    # CROSS JOIN pins the join order: the planner otherwise drives from every
                    # segment vector (owner_kind only) and each file costs a scan of the store.
                    texts = conn.execute(
                        "SELECT s.text FROM segments s CROSS JOIN vectors v ON v.owner_kind = 'segment' "
                        "AND v.owner_id = s.id AND v.fingerprint = ? WHERE s.file_id = ?",
                        (c.fingerprint_key(live), row[0]),
                    )
                out[(track, name)] = StoredFile(file_from_row(row), frozenset(t for (t,) in texts))
        return out

    def get_resources(self, scope: Scope, paths: Iterable[str]) -> dict[str, Resource]:
        """Stored resources among ``paths`` in exactly ``scope``."""
        out: dict[str, Resource] = {}
        with self._read() as conn:
            for part in chunks(list(paths)):
                for row in conn.execute(
                    f"SELECT {RESOURCE_COLS} FROM resources WHERE user_id = ? AND agent_id = ? "
                    f"AND path IN ({placeholders(len(part))})",
                    (scope.user_id, scope.agent_id, *part),
                ):
                    res = resource_from_row(row)
                    out[res.path] = res
        return out

    # -- writes ---------------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> None:
        """Write a whole commit in one ``BEGIN IMMEDIATE`` transaction (all or nothing)."""
        c.check_change_vectors(changes)
        with self._write() as conn:
            writes.apply_changes(conn, changes)

    def delete_file(self, scope: Scope, track: str, name: str, *, note: HistoryNote | None = None) -> RecallFile | None:
        """Delete a file; its segments, their FTS rows and vectors go by cascade and trigger.

        With a ``note`` keeping history, the file is kept as a past version and a tombstone."""
        key = (scope.user_id, scope.agent_id, track, name)
        try:
            with self._write() as conn:
                row = conn.execute(
                    f"SELECT {FILE_COLS} FROM files WHERE user_id = ? AND agent_id = ? AND track = ? AND name = ?",
                    key,
                ).fetchone()
                if row is None:
                    raise _Nothing
                if note is not None and note.keep > 0:
                    history.tombstone(conn, row[0], key, note)
                conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        except _Nothing:
            return None
        return file_from_row(row)

    # -- history --------------------------------------------------------------------------
    def file_history(self, scope: Scope, track: str, name: str) -> list[FileVersion]:
        """Every kept version of ``track/name`` in ``scope``, newest first (the stored file first)."""
        with self._read() as conn:
            return history.history(conn, scope, track, name)

    def file_version(self, scope: Scope, track: str, name: str, version: int) -> FileVersion | None:
        """One version of ``track/name``, or ``None`` when it was never kept or was pruned."""
        with self._read() as conn:
            return history.one_version(conn, scope, track, name, version)

    def recent_versions(self, where: Where, limit: int) -> list[FileVersion]:
        """The newest ``limit`` versions across every file in ``where``, newest first."""
        c.check_limit(limit)
        cond, params = scope_sql(c.check_where(where))
        with self._read() as conn:
            return history.recent(conn, cond, params, limit)

    def stats(self, where: Where) -> StoreStats:
        """Counts for ``memu stats``: files per track and actor, segments, vectors, versions, bytes."""
        cond, params = scope_sql(c.check_where(where))
        with self._read() as conn:
            live = writes.read_live(conn)
            files = conn.execute(
                f"SELECT track, actor, count(*) FROM files WHERE 1{cond} GROUP BY track, actor ORDER BY track, actor",
                params,
            ).fetchall()
            segments = conn.execute(f"SELECT count(*) FROM segments WHERE 1{cond}", params).fetchone()[0]
            vectors = 0
            if live is not None:
                vectors = conn.execute(
                    "SELECT count(*) FROM vectors v JOIN segments s ON v.owner_kind = 'segment' AND v.owner_id = s.id "
                    f"WHERE v.fingerprint = ?{scope_sql(c.check_where(where), 's')[0]}",
                    (c.fingerprint_key(live), *params),
                ).fetchone()[0]
            versions = conn.execute(f"SELECT count(*) FROM file_versions WHERE 1{cond}", params).fetchone()[0]
            resources = conn.execute(f"SELECT count(*) FROM resources WHERE 1{cond}", params).fetchone()[0]
        size = sum(os.path.getsize(p) for p in (self._path, self._path + "-wal") if os.path.exists(p))
        return StoreStats(
            files=[(t, a, int(n)) for t, a, n in files],
            segments=int(segments),
            vectors=int(vectors),
            resources=int(resources),
            versions=int(versions),
            size_bytes=size,
            fingerprint=live,
        )

    # -- listing and search ---------------------------------------------------------------
    def list_files(
        self, where: Where, after: tuple[str, str, str] | None, limit: int
    ) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
        """One keyset page ordered by ``(track, name, id)`` strictly after ``after``."""
        c.check_limit(limit)
        cond, params = scope_sql(c.check_where(where))
        if after is not None:
            cond += " AND (track, name, id) > (?, ?, ?)"
            params.extend(after)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {FILE_COLS} FROM files WHERE 1{cond} ORDER BY track, name, id LIMIT ?",
                (*params, limit + 1),
            ).fetchall()
        page = [file_from_row(r) for r in rows[:limit]]
        last = page[-1] if page else None
        nxt = (last.track, last.name, last.id) if len(rows) > limit and last else None
        return page, nxt

    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        """FTS5 ``MATCH`` of the OR-ed query terms, ranked by ``bm25()`` (text above context)."""
        cond, params = scope_sql(c.check_where(where), "s", c.check_tracks(tracks))
        terms, typed = lexical_terms(query)
        if not terms or limit < 1:
            return []
        hits: list[Hit] = []
        with self._read_words() as conn:
            # Read before the search: a write landing meanwhile moves it past what is stored.
            generation = int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
            key = (query, cond, tuple(params), limit)
            kept = self.word_hits.get(generation, key)
            if kept is not None:
                return kept
            matches = lexical.segment_matches(conn, terms, typed, self._term_counts)
            for i, match in enumerate(matches):
                # A narrow candidate rule that cannot fill the limit gives way to a wider one.
                # Whether it can is asked first without bm25(), whose set-up reads the posting
                # list of every term it scores: a failed narrow pass then costs only its match.
                if i < len(matches) - 1 and not self._fills(conn, match, cond, params, limit):
                    continue
                hits = self._rank_segments(conn, match, cond, params, limit)
                if len(hits) >= limit:
                    break
        self.word_hits.put(generation, key, hits)
        return hits

    @staticmethod
    def _fills(conn: sqlite3.Connection, match: str, cond: str, params: list[Any], limit: int) -> bool:
        """Whether at least ``limit`` segments match ``match`` (stops counting there)."""
        if not cond:
            sql = "SELECT count(*) FROM (SELECT 1 FROM segments_fts WHERE segments_fts MATCH ? LIMIT ?)"
            return int(conn.execute(sql, (match, limit)).fetchone()[0]) >= limit
        sql = (
            "SELECT count(*) FROM (SELECT 1 FROM segments_fts JOIN segments s ON s.seq = segments_fts.rowid "
            f"WHERE segments_fts MATCH ?{cond} LIMIT ?)"
        )
        return int(conn.execute(sql, (match, *params, limit)).fetchone()[0]) >= limit

    @staticmethod
    def _rank_segments(conn: sqlite3.Connection, match: str, cond: str, params: list[Any], limit: int) -> list[Hit]:
        """The best ``limit`` segments for one ``MATCH`` expression, by ``bm25()``."""
        w_text, w_context = SEGMENT_WEIGHTS
        score = f"bm25(segments_fts, {w_text}, {w_context}, 0.0)"
        if not cond:
            # No filter: rank inside FTS alone and look up ids for the winners only; joining
            # every matching row to ``segments`` costs as much as the ranking itself.
            ranked = conn.execute(
                f"SELECT rowid, {score} AS r FROM segments_fts WHERE segments_fts MATCH ? ORDER BY r, rowid LIMIT ?",
                (match, limit),
            ).fetchall()
            ids = dict(
                conn.execute(
                    f"SELECT seq, id FROM segments WHERE seq IN ({placeholders(len(ranked))})",
                    [seq for seq, _ in ranked],
                ).fetchall()
            )
            return [Hit(ids[seq], -float(r)) for seq, r in ranked if seq in ids]
        rows = conn.execute(
            f"SELECT s.id, {score} AS r FROM segments_fts JOIN segments s ON s.seq = segments_fts.rowid "
            f"WHERE segments_fts MATCH ?{cond} ORDER BY r, s.seq LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [Hit(i, -float(r)) for i, r in rows]

    def search_resources_lexical(self, query: str, where: Where, limit: int) -> list[Hit]:
        """FTS5 over each resource's path and description."""
        cond, params = scope_sql(c.check_where(where), "o")
        match = _match(query)
        if match is None or limit < 1:
            return []
        with self._read_words() as conn:
            rows = conn.execute(
                "SELECT o.id, bm25(resources_fts) AS r FROM resources_fts "
                f"JOIN resources o ON o.seq = resources_fts.rowid WHERE resources_fts MATCH ?{cond} "
                "ORDER BY r, o.id LIMIT ?",
                (match, *params, limit),
            ).fetchall()
        return [Hit(i, -float(r)) for i, r in rows]

    def search_segments_dense(
        self, vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        """Cosine over the live vectors of the matching segments (faiss, kept up to date across writes)."""
        return self._search_dense("segment", vector, c.check_where(where), c.check_tracks(tracks), limit)

    def search_resources_dense(self, vector: Sequence[float], where: Where, limit: int) -> list[Hit]:
        """Cosine over the live vectors of the matching resources' descriptions."""
        return self._search_dense("resource", vector, c.check_where(where), None, limit)

    def _search_dense(
        self,
        kind: str,
        vector: Sequence[float],
        flt: c.ScopeFilter,
        tracks: tuple[str, ...] | None,
        limit: int,
    ) -> list[Hit]:
        if limit < 1:
            return []
        # The live space and the vectors are read in one transaction (another process may switch).
        with self._read() as conn, snapshot(conn):
            live = writes.read_live(conn)
            if live is None:
                return []
            c.check_query_vector(vector, live)
            return self._dense.search(
                conn,
                kind,
                c.fingerprint_key(live),
                live.dimension,
                flt,
                tracks,
                vector,
                limit,
            )

    def fetch_segments(self, ids: Sequence[str]) -> dict[str, Segment]:
        """Segments by id; missing ids are absent."""
        return {s.id: s for s in self._fetch("segments", SEGMENT_COLS, ids, segment_from_row)}

    def fetch_files(self, ids: Sequence[str]) -> dict[str, RecallFile]:
        """Files by id; missing ids are absent."""
        return {f.id: f for f in self._fetch("files", FILE_COLS, ids, file_from_row)}

    def fetch_resources(self, ids: Sequence[str]) -> dict[str, Resource]:
        """Resources by id; missing ids are absent."""
        return {r.id: r for r in self._fetch("resources", RESOURCE_COLS, ids, resource_from_row)}

    def _fetch(self, table: str, cols: str, ids: Sequence[str], build: _Build[_T]) -> list[_T]:
        out: list[_T] = []
        with self._read() as conn:
            for part in chunks(ids):
                rows = conn.execute(f"SELECT {cols} FROM {table} WHERE id IN ({placeholders(len(part))})", tuple(part))
                out.extend(build(r) for r in rows)
        return out

    # -- re-embedding ---------------------------------------------------------------------
    def texts_to_embed(self, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
        """Segments, then described resources, lacking a vector under ``fingerprint``."""
        c.check_limit(limit)
        key = c.fingerprint_key(fingerprint)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT 'segment', s.id, s.text FROM segments s WHERE NOT EXISTS (SELECT 1 FROM vectors v "
                "WHERE v.owner_kind = 'segment' AND v.owner_id = s.id AND v.fingerprint = ?) "
                "ORDER BY s.seq LIMIT ?",
                (key, limit),
            ).fetchall()
            if len(rows) < limit:
                rows += conn.execute(
                    "SELECT 'resource', r.id, r.description FROM resources r WHERE r.description <> '' "
                    "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.owner_kind = 'resource' "
                    "AND v.owner_id = r.id AND v.fingerprint = ?) ORDER BY r.seq LIMIT ?",
                    (key, limit - len(rows)),
                ).fetchall()
        return [(k, i, t) for k, i, t in rows]

    def count_texts_to_embed(self, fingerprint: Fingerprint) -> int:
        """How many rows :meth:`texts_to_embed` would hand out in all (the reindex's progress total)."""
        key = c.fingerprint_key(fingerprint)
        with self._read() as conn:
            (segments,) = conn.execute(
                "SELECT count(*) FROM segments s WHERE NOT EXISTS (SELECT 1 FROM vectors v "
                "WHERE v.owner_kind = 'segment' AND v.owner_id = s.id AND v.fingerprint = ?)",
                (key,),
            ).fetchone()
            (resources,) = conn.execute(
                "SELECT count(*) FROM resources r WHERE r.description <> '' AND NOT EXISTS (SELECT 1 FROM vectors v "
                "WHERE v.owner_kind = 'resource' AND v.owner_id = r.id AND v.fingerprint = ?)",
                (key,),
            ).fetchone()
        return int(segments) + int(resources)

    def store_vectors(self, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
        """Stage vectors under ``fingerprint`` in one transaction; vanished owners are skipped."""
        staged: dict[str, list[tuple[str, str, bytes, str]]] = {"segment": [], "resource": []}
        key = c.fingerprint_key(fingerprint)
        for kind, owner, vec in rows:
            if kind not in staged:
                raise UsageError(f"vector owner kind must be 'segment' or 'resource', got {kind!r}")
            if len(vec) != fingerprint.dimension:
                raise UsageError(
                    f"a vector for {kind} {owner} has {len(vec)} dimensions but "
                    f"{fingerprint.describe()} says {fingerprint.dimension}"
                )
            staged[kind].append((owner, key, vector_blob(vec), owner))
        with self._write() as conn:
            for kind, table in (("segment", "segments"), ("resource", "resources")):
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors (owner_kind, owner_id, fingerprint, vector) "
                    f"SELECT '{kind}', ?, ?, ? WHERE EXISTS (SELECT 1 FROM {table} WHERE id = ?)",
                    staged[kind],
                )

    def switch_fingerprint(self, fingerprint: Fingerprint) -> None:
        """Make ``fingerprint`` live and drop every vector made under another, atomically."""
        with self._write() as conn:
            conn.execute("DELETE FROM vectors WHERE fingerprint <> ?", (c.fingerprint_key(fingerprint),))
            writes.write_live(conn, fingerprint)


class _Nothing(MemuError):
    """Internal signal: roll back an empty delete (never escapes the store)."""


_T = TypeVar("_T")
_Build = Callable[[Sequence[Any]], _T]


def _match(query: str) -> str | None:
    """The FTS5 expression for ``query``: its terms quoted and OR-ed, or ``None`` when empty."""
    terms = query_terms(query)
    # Terms are runs of letters and digits, so quoting cannot be broken out of.
    return " OR ".join(f'"{t}"' for t in terms) if terms else None
