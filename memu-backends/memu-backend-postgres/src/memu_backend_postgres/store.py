"""The ``postgres`` :class:`~memu_core.interfaces.MemoryStore`.

This module is imported when plugins register, so it imports nothing heavy at module level:
SQLAlchemy, psycopg, pgvector and numpy load inside :meth:`PostgresStore.open` and the methods.

Transactions: every write takes the writer lock (the ``memu_meta`` row) first and runs in one
READ COMMITTED transaction; every read runs in one REPEATABLE READ read-only transaction, so a
reader that issues several statements sees one snapshot and never half a commit.

Segment vectors are committed *pending*, outside the HNSW graph, and folded into it in bounded
batches afterwards (ADR 0029): by a background thread of the process that committed, by a writer
whose commit left more than ``PENDING_LIMIT`` behind, and by ``memu db upgrade``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from memu_backend_postgres import _history
from memu_backend_postgres._folder import Folder
from memu_backend_postgres._pool import PoolOptions, merge, split_pool_options
from memu_backend_postgres._termstats import TermStats
from memu_backend_postgres._url import ACCEPTED_SCHEMES, display_url, normalise_url
from memu_core.errors import StoreError, UsageError
from memu_core.interfaces import MemoryStore
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

if TYPE_CHECKING:
    from memu_backend_postgres._meta import Live

T = TypeVar("T")


class PostgresStore(MemoryStore):
    """Files, segments and resources in PostgreSQL; BM25 via ``tsvector``, cosine via pgvector."""

    name: ClassVar[str] = "postgres"
    url_schemes: ClassVar[tuple[str, ...]] = ACCEPTED_SCHEMES

    def __init__(
        self,
        url: str,
        engine: Any,
        iterative_scan: bool,
        pool: PoolOptions | None = None,
        *,
        defer_graph: bool = True,
        background_fold: bool = True,
    ) -> None:
        """Use :meth:`open`; this only wires an already migrated engine."""
        self._url = url
        self._engine = engine
        self._iterative = iterative_scan
        self._pool = pool or PoolOptions()
        self._live: Live | None = None  # the live fingerprint as last read; dense searches check it
        self._terms = TermStats()  # BM25 statistics as last read; lexical searches check them
        self._defer = defer_graph
        self._folder = Folder(self._fold_once) if background_fold else None

    @classmethod
    def open(
        cls,
        url: str,
        *,
        pool_size: int | None = None,
        pool_timeout: float | None = None,
        max_overflow: int | None = None,
        defer_graph: bool = True,
        background_fold: bool = True,
    ) -> PostgresStore:
        """Connect to ``url`` (any accepted scheme), migrate to head when needed, return the store.

        ``defer_graph`` (the default) commits segment vectors pending, outside the HNSW graph;
        ``background_fold`` folds them in from a thread of this process after each commit
        (ADR 0029). Without it they wait for :meth:`fold_pending`, another process's folder,
        or a commit that pushes the backlog past ``PENDING_LIMIT``.

        The connection pool keeps ``pool_size`` connections (plus ``max_overflow`` under a
        burst) and makes a caller wait at most ``pool_timeout`` seconds for one before raising
        :class:`~memu_core.errors.StoreBusy`. Each may also come from the URL's query
        (``?pool_size=16&pool_timeout=2``, see :mod:`memu_backend_postgres._pool`); an argument
        given here wins.
        """
        from memu_backend_postgres import _engine
        from memu_backend_postgres.migrate import ensure_schema

        target, from_url = split_pool_options(normalise_url(url))
        pool = merge(from_url, pool_size, max_overflow, pool_timeout)
        with _engine.translated(target, "opening the store", pool):
            engine = _engine.create_engine(target, pool)
            try:
                ensure_schema(engine)
                # Connections made before the extension existed could not register the vector
                # type; start the pool afresh now that it does.
                engine.dispose()
                with engine.connect() as conn:
                    import sqlalchemy as sa

                    version = conn.execute(
                        sa.text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                    ).scalar()
            except BaseException:
                engine.dispose()
                raise
        major_minor = tuple(int(p) for p in str(version or "0.0").split(".")[:2])
        return cls(
            target,
            engine,
            iterative_scan=major_minor >= (0, 8),
            pool=pool,
            defer_graph=defer_graph,
            background_fold=background_fold,
        )

    @classmethod
    def upgrade_schema(cls, url: str) -> str | None:
        """``memu db upgrade``: migrate the database at ``url`` to head, then fold every pending
        vector into the HNSW graph (ADR 0029); return the revision."""
        from memu_backend_postgres.migrate import upgrade

        revision = upgrade(url)
        store = cls.open(url, background_fold=False)
        try:
            store.fold_pending()
        finally:
            store.close()
        return revision

    @classmethod
    def schema_revision(cls, url: str) -> str | None:
        """``memu db current``: the revision at ``url``, ``None`` before the first migration."""
        from memu_backend_postgres.migrate import current

        return current(url)

    def __repr__(self) -> str:
        return f"PostgresStore({display_url(self._url)!r})"

    # -- transaction helpers ------------------------------------------------------------
    @contextmanager
    def _read(self, single: bool) -> Iterator[Any]:
        with self._engine.connect() as conn:
            if single:
                # One statement reads one snapshot by itself: no BEGIN and COMMIT round trips.
                yield conn.execution_options(isolation_level="AUTOCOMMIT")
                return
            conn = conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            with conn.begin():
                yield conn

    def _reading(self, action: str, work: Callable[[Any], T], single: bool = False) -> T:
        """Run ``work`` in a read-only snapshot (``single``: it issues one statement).

        A pooled connection that died with a server restart fails its first statement; the
        pool then drops it and every older one, and the read runs once more on a fresh one.
        """
        import sqlalchemy.exc as sa_exc

        from memu_backend_postgres._engine import translated

        with translated(self._url, action, self._pool):
            try:
                with self._read(single) as conn:
                    return work(conn)
            except sa_exc.DBAPIError as exc:
                if not exc.connection_invalidated:
                    raise
            with self._read(single) as conn:
                return work(conn)

    def _writing(self, action: str, work: Callable[[Any], T]) -> T:
        from memu_backend_postgres._engine import translated

        with translated(self._url, action, self._pool), self._engine.begin() as conn:
            return work(conn)

    # -- metadata -----------------------------------------------------------------------
    def fingerprint(self) -> Fingerprint | None:
        """The live embedding fingerprint, or ``None`` before the first vector."""
        from memu_backend_postgres._meta import read_live

        live = self._reading("reading the fingerprint", read_live, single=True)
        self._live = live
        return live.fingerprint

    def generation(self) -> int:
        """The write counter kept in ``memu_meta`` (bumped by every committed write)."""
        import sqlalchemy as sa

        return self._reading(
            "reading the generation",
            lambda conn: int(conn.execute(sa.text("SELECT generation FROM memu_meta WHERE id = 1")).scalar_one()),
        )

    # -- planning reads -----------------------------------------------------------------
    def get_files(self, scope: Scope, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
        """Stored files among ``(track, name)`` keys in ``scope``, with their vectorised texts."""
        from memu_backend_postgres import _reads

        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        return self._reading("reading files", lambda conn: _reads.get_files(conn, scope, wanted))

    def get_resources(self, scope: Scope, paths: Iterable[str]) -> dict[str, Resource]:
        """Stored resources among ``paths`` in ``scope``."""
        from memu_backend_postgres import _reads

        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        return self._reading("reading resources", lambda conn: _reads.get_resources(conn, scope, wanted), single=True)

    # -- writes -------------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> None:
        """Write a whole commit in one transaction (see :meth:`MemoryStore.apply`)."""
        from memu_backend_postgres import _write

        def work(conn: Any) -> int:
            _history.note(conn, changes.note)  # what the history trigger stamps and keeps
            return _write.apply(conn, changes, self._defer)

        self._live = None  # the first vectors make a fingerprint live: read it afresh after
        if self._writing("committing", work):
            self._after_pending_commit()

    # -- pending vectors (docs/adr/0029-deferred-hnsw-inserts.md) -------------------------
    def _after_pending_commit(self) -> None:
        """After a commit that left vectors pending: fold what exceeds ``PENDING_LIMIT`` now
        (so a backlog never grows past what a search can scan cheaply), the rest in the
        background. The commit itself is already durable and visible."""
        from memu_backend_postgres._fold import PENDING_LIMIT

        if self.pending_vectors() > PENDING_LIMIT:
            self.fold_pending(keep=PENDING_LIMIT)
        if self._folder is not None:
            self._folder.wake()

    def pending_vectors(self) -> int:
        """Segment vectors committed but not yet linked into the HNSW graph (searches read
        them exactly meanwhile)."""
        from memu_backend_postgres._fold import pending_count

        return self._reading("counting pending vectors", pending_count, single=True)

    def fold_pending(self, keep: int = 0, batch: int | None = None) -> int:
        """Link pending vectors into the HNSW graph, ``batch`` per transaction, until at most
        ``keep`` are left (or only rows other writers hold right now); return how many moved.
        Answers do not change; concurrent folds take turns on an advisory lock."""
        from memu_backend_postgres._fold import FOLD_BATCH

        size = FOLD_BATCH if batch is None else batch
        if size < 1 or keep < 0:
            raise UsageError(f"fold_pending(keep={keep}, batch={size}): keep must be >= 0 and batch >= 1")
        moved = 0
        excess = self.pending_vectors() - keep
        while excess > 0:
            done = self._fold_once(min(size, excess))
            if done == 0:
                break
            moved += done
            excess -= done
        return moved

    def _fold_once(self, limit: int | None = None) -> int:
        from memu_backend_postgres import _fold

        size = _fold.FOLD_BATCH if limit is None else limit
        return self._writing("folding pending vectors", lambda conn: _fold.fold_batch(conn, size))

    def delete_file(self, scope: Scope, track: str, name: str, *, note: HistoryNote | None = None) -> RecallFile | None:
        """Delete a file and its segments; return it, or ``None`` when absent. With a ``note``
        keeping history, the trigger keeps it as a past version and a ``forget`` tombstone."""
        from memu_backend_postgres import _write

        def work(conn: Any) -> RecallFile | None:
            _history.note(conn, note)
            return _write.delete_file(conn, scope, track, name)

        return self._writing("deleting a file", work)

    # -- history (docs/adr/0023-file-history.md) ------------------------------------------
    def file_history(self, scope: Scope, track: str, name: str) -> list[FileVersion]:
        """Every kept version of ``track/name`` in ``scope``, newest first (the stored file first)."""
        return self._reading("reading history", lambda conn: _history.history(conn, scope, track, name))

    def file_version(self, scope: Scope, track: str, name: str, version: int) -> FileVersion | None:
        """One version of ``track/name``, or ``None`` when it was never kept or was pruned."""
        return self._reading("reading history", lambda conn: _history.one(conn, scope, track, name, version))

    def recent_versions(self, where: Where, limit: int) -> list[FileVersion]:
        """The newest ``limit`` versions across every file in ``where``, newest first."""
        if limit < 1:
            raise UsageError(f"limit={limit} is out of range; ask for at least 1 version")
        return self._reading("reading history", lambda conn: _history.recent(conn, where, limit))

    def stats(self, where: Where) -> StoreStats:
        """Counts for ``memu stats``: files per track and actor, segments, vectors, versions, bytes."""
        from memu_backend_postgres._meta import read_live

        def work(conn: Any) -> StoreStats:
            live = read_live(conn)
            return _history.stats(conn, where, live.fingerprint, live.fp_id)

        return self._reading("reading statistics", work)

    # -- listing and search -------------------------------------------------------------
    def list_files(
        self, where: Where, after: tuple[str, str, str] | None, limit: int
    ) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
        """One keyset page ordered by ``(track, name, id)`` strictly after ``after``."""
        from memu_backend_postgres import _reads

        if limit < 1:
            raise UsageError(f"limit={limit} is out of range; ask for at least 1 file per page")
        return self._reading("listing files", lambda conn: _reads.list_files(conn, where, after, limit), single=True)

    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        """Best-first BM25 segment hits for ``query`` (text weighted above context)."""
        return self._lexical("s", query, where, tracks, limit)

    def _lexical(
        self, kind: Literal["s", "r"], query: str, where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        from memu_backend_postgres import _search

        action = "searching segments" if kind == "s" else "searching resources"
        # Outside a transaction (no BEGIN/COMMIT round trips), with the remembered statistics:
        # usually one statement, which checks them.
        hits = self._reading(
            action, lambda conn: _search.lexical(conn, kind, query, where, tracks, limit, self._terms), single=True
        )
        if hits is None:
            # A write moved the statistics between statements: read them and search in one snapshot.
            hits = self._reading(action, lambda conn: _search.lexical(conn, kind, query, where, tracks, limit))
        if hits is None:  # pragma: no cover - one snapshot cannot see its counters move
            raise StoreError(f"postgres store {display_url(self._url)}: the statistics kept changing; search again")
        return hits

    def search_segments_dense(
        self, vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        """Best-first segment hits by cosine similarity (HNSW over the live fingerprint)."""
        return self._dense("s", vector, where, tracks, limit)

    def search_resources_lexical(self, query: str, where: Where, limit: int) -> list[Hit]:
        """Best-first BM25 resource hits over description (and, weighted lower, path)."""
        return self._lexical("r", query, where, None, limit)

    def search_resources_dense(self, vector: Sequence[float], where: Where, limit: int) -> list[Hit]:
        """Best-first resource hits by cosine similarity of their description vectors."""
        return self._dense("r", vector, where, None, limit)

    def _dense(
        self, kind: Literal["s", "r"], vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        from memu_backend_postgres import _search
        from memu_backend_postgres._meta import read_live

        action = "searching segments" if kind == "s" else "searching resources"
        single = not _search.needs_transaction(limit)
        for _ in range(3):
            live = self._live
            if live is None or live.fp_id is None:  # "no vectors yet" is never trusted from a cache
                live = self._live = self._reading("reading the fingerprint", read_live, single=True)

            def search(conn: Any, live: Live = live) -> list[Hit] | None:
                return _search.dense(conn, kind, vector, where, tracks, limit, live)

            hits = self._reading(action, search, single=single)
            if hits is not None:
                return hits
            self._live = None  # a fingerprint switch since the cache was filled: read it again
        raise StoreError(f"postgres store {display_url(self._url)}: the live fingerprint kept changing; search again")

    def fetch_segments(self, ids: Sequence[str]) -> dict[str, Segment]:
        """Segments by id; unknown ids are left out."""
        from memu_backend_postgres import _reads

        if not ids:
            return {}
        return self._reading("fetching segments", lambda conn: _reads.fetch_segments(conn, ids), single=True)

    def fetch_files(self, ids: Sequence[str]) -> dict[str, RecallFile]:
        """Files by id; unknown ids are left out."""
        from memu_backend_postgres import _reads

        if not ids:
            return {}
        return self._reading("fetching files", lambda conn: _reads.fetch_files(conn, ids), single=True)

    def fetch_resources(self, ids: Sequence[str]) -> dict[str, Resource]:
        """Resources by id; unknown ids are left out."""
        from memu_backend_postgres import _reads

        if not ids:
            return {}
        return self._reading("fetching resources", lambda conn: _reads.fetch_resources(conn, ids), single=True)

    # -- re-embedding -------------------------------------------------------------------
    def texts_to_embed(self, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
        """Up to ``limit`` rows still needing a vector under ``fingerprint`` (staged ones excluded)."""
        from memu_backend_postgres import _reindex

        return self._reading("listing texts to embed", lambda conn: _reindex.texts_to_embed(conn, fingerprint, limit))

    def count_texts_to_embed(self, fingerprint: Fingerprint) -> int:
        """How many rows :meth:`texts_to_embed` would hand out in all (the reindex's progress total)."""
        from memu_backend_postgres import _reindex

        return self._reading("counting texts to embed", lambda conn: _reindex.count_texts_to_embed(conn, fingerprint))

    def store_vectors(self, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
        """Stage vectors for ``fingerprint``; searches ignore them until :meth:`switch_fingerprint`."""
        from memu_backend_postgres import _reindex

        self._writing("staging vectors", lambda conn: _reindex.store_vectors(conn, fingerprint, rows))

    def switch_fingerprint(self, fingerprint: Fingerprint) -> None:
        """Atomically make the staged vectors of ``fingerprint`` live and record it."""
        from memu_backend_postgres import _reindex

        self._writing("switching the fingerprint", lambda conn: _reindex.switch_fingerprint(conn, fingerprint))

    @property
    def pool_options(self) -> PoolOptions:
        """The connection pool's size, overflow and wait timeout."""
        return self._pool

    def pool_status(self) -> dict[str, int]:
        """Pooled connections now: ``size`` kept, ``checked_out`` in use, ``idle``, ``overflow``."""
        pool = self._engine.pool
        return {
            "size": int(pool.size()),
            "checked_out": int(pool.checkedout()),
            "idle": int(pool.checkedin()),
            "overflow": max(int(pool.overflow()), 0),
        }

    def close(self) -> None:
        """Stop the background fold after its batch in flight, then close every pooled connection."""
        if self._folder is not None:
            self._folder.stop()
        self._engine.dispose()
