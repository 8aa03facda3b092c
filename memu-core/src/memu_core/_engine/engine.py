"""The local engine: memU's three operations (plus ``forget``) over a :class:`MemoryStore`.

A commit is *plan → embed → write*: the plan reads what is stored, only texts without a vector
are embedded (in one batched call), and the store writes everything in one transaction. If
another writer moved a file in between, the store refuses and the engine plans again, reusing
the vectors it already has. Retrieval runs lexical and dense searches, fuses them with
reciprocal-rank fusion, re-ranks the candidates by query phrases and by the file around each
line (``rerank.py``) and rolls segments up to their files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from memu_core._engine.actor import current_actor
from memu_core._engine.beside import Beside
from memu_core._engine.cursor import decode_cursor, encode_cursor
from memu_core._engine.explain import Explainer
from memu_core._engine.fusion import fuse
from memu_core._engine.history import DEFAULT_KEEP, HistoryOps
from memu_core._engine.inputs import (
    FileInput,
    ResourceInput,
    content_hash,
    parse_files,
    parse_resources,
    parse_scope,
    parse_where,
)
from memu_core._engine.queryvectors import QueryVectors
from memu_core._engine.rerank import FILE_PRIOR_WEIGHT, PHRASE_WEIGHT, lift_by_file, phrase_ranking
from memu_core._engine.segments import segment_file
from memu_core._log import get_logger
from memu_core.errors import (
    ConflictError,
    EmbeddingError,
    FingerprintMismatch,
    StoreError,
    UsageError,
    WriteConflict,
)
from memu_core.interfaces import AgenticMemoryBackend, Embedder, MemoryStore
from memu_core.text import expand_query, query_phrases
from memu_core.types import (
    ChangeSet,
    FileWrite,
    Fingerprint,
    HistoryAction,
    HistoryNote,
    Hit,
    Resource,
    ResourceWrite,
    Scope,
    Segment,
    StoredFile,
)

DEFAULT_TOP_K = 5
"""Segments returned by default (memU's ``file.top_k``); files are the distinct parents (≤ top_k)."""
RESOURCE_TOP_K = 5
MAX_TOP_K = 200
CANDIDATES_PER_RESULT = 5
"""Each search returns this many candidates per wanted result, so fusion has room to work."""
MIN_CANDIDATES = 100
"""At least this many candidates per search: a line ranked 60th by one search and 5th by the
other must still reach fusion (50 → 100 lifted LoCoMo hybrid recall@10, docs/benchmarks.md)."""
LEXICAL_WEIGHT = 2.0
"""Fusion weight of the lexical ranking. BM25 over a line *and its neighbours* is the stronger
signal for agent memory; MiniLM cosine over a single line adds what words miss."""
DENSE_WEIGHT = 1.0
EXPAND_FORMS = True
"""Add other forms of the query's words (``painting`` → ``painted``) to the lexical search."""
HEADER_SLOTS: int | None = 1
"""How many ``segments`` slots header segments (``name: description``) may take; ``None`` = no
limit. Further header hits still rank their files, but leave the slots to content lines."""
RERANK_DEPTH = 50
"""The re-ranking steps (``rerank.py``) look at the best ``max(5 x top_k, RERANK_DEPTH)`` fused
candidates; further down, a lift would not bring a line into the results."""
COMMIT_ATTEMPTS = 8
SEARCH_MODES = ("hybrid", "lexical", "dense")
log = get_logger("memu.engine")

EmbedderFactory = Callable[[], Embedder | None]


class LocalEngine(HistoryOps, AgenticMemoryBackend):
    """The ``local`` backend: memu's engine over a local store and an optional embedder.

    Besides memU's operations it reads and rewinds file history (:class:`HistoryOps`).
    """

    name: ClassVar[str] = "local"

    def __init__(
        self,
        store: MemoryStore,
        *,
        embedder: Embedder | None = None,
        embedder_factory: EmbedderFactory | None = None,
        default_scope: Scope | None = None,
        history_keep: int = DEFAULT_KEEP,
    ) -> None:
        self.store = store
        self.history_keep = max(0, int(history_keep))
        """Past versions kept per file (``MEMU_HISTORY_KEEP``); 0 keeps none."""
        self._embedder = embedder
        self._factory = embedder_factory if embedder is None else None
        self.default_scope = default_scope or Scope()
        self.query_vectors = QueryVectors()
        """The last queries' embeddings: a question asked again is not embedded again."""

    @classmethod
    def from_settings(cls, settings: Any) -> LocalEngine:
        """Not how the engine is built: it receives its store and embedder.

        memu's composition root opens the store ``MEMU_DB`` names and chooses the embedder, then
        constructs the engine over them; an application embedding memu asks the same root through
        :func:`memu_core.serving.serving_backend`, or constructs ``LocalEngine(store, ...)`` itself.
        """
        raise NotImplementedError(
            "LocalEngine is built from a store and an embedder, not from settings; "
            "use memu_core.serving.serving_backend() or LocalEngine(store, embedder=...)"
        )

    # -- embedder ---------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (built on first use), or ``None`` for lexical-only."""
        if self._factory is not None:
            self._embedder = self._factory()
            self._factory = None
        return self._embedder

    def embedder_info(self) -> dict[str, Any] | None:
        """``{"provider", "model", "dimension"}`` of the embedder in use, for JSON output."""
        embedder = self.embedder
        if embedder is None:
            return None
        fp = embedder.fingerprint
        return {"provider": fp.provider, "model": fp.model, "dimension": fp.dimension}

    def _check_space(self, embedder: Embedder) -> Fingerprint | None:
        """Refuse to mix embedding spaces; return the store's fingerprint (``None`` if no vectors)."""
        stored = self.store.fingerprint()
        wanted = embedder.fingerprint
        if stored is not None and stored != wanted:
            raise FingerprintMismatch(
                f"the store's vectors were made by {stored.describe()} but the configured embedder is "
                f"{wanted.describe()}; run `memu reindex` to re-embed the store, or set "
                f"MEMU_EMBED_PROVIDER/MEMU_EMBED_MODEL back to {stored.provider}/{stored.model}"
            )
        return stored

    def _embed(self, embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
        vectors = embedder.embed(list(texts))
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"the embedder returned {len(vectors)} vectors for {len(texts)} texts; "
                "check MEMU_EMBED_PROVIDER/MEMU_BASE_URL point at an embeddings endpoint"
            )
        return vectors

    def _query_vector(self, embedder: Embedder, query: str) -> list[float]:
        """``query``'s embedding, from :attr:`query_vectors` when it was asked before."""
        space = embedder.fingerprint
        found = self.query_vectors.get(space, query)
        if found is None:
            found = self._embed(embedder, [query])[0]
            self.query_vectors.put(space, query, found)
        return found

    # -- commit -----------------------------------------------------------------------------
    def commit_results(
        self,
        *,
        recall_files: Sequence[Mapping[str, Any]] | None = None,
        resource: Sequence[Mapping[str, Any]] | None = None,
        user: Mapping[str, Any] | None = None,
        action: HistoryAction = "commit",
        actor: str | None = None,
        expect_hashes: Mapping[tuple[str, str], str | None] | None = None,
    ) -> dict[str, Any]:
        """Store files and resources in one transaction; unchanged ones cost nothing.

        ``action`` and ``actor`` (default: the context's, see :mod:`memu_core._engine.actor`)
        stamp the versions written. ``expect_hashes`` maps ``(track, name)`` to the content hash
        a caller read (``None``: the file must not exist); a file stored with another hash
        raises :class:`ConflictError` and nothing is written.
        """
        files = parse_files(recall_files)
        resources = parse_resources(resource)
        scope = parse_scope(user, self.default_scope)
        stats = {"files_written": 0, "resources_written": 0, "texts_embedded": 0}
        if not files and not resources:
            return {"recall_files": [], "resources": [], "stats": stats}
        embedder = self.embedder
        if embedder is None and self.store.fingerprint() is not None:
            stored = self.store.fingerprint()
            assert stored is not None
            raise FingerprintMismatch(
                f"the store holds vectors made by {stored.describe()} but no embedder is configured; "
                f"set MEMU_EMBED_PROVIDER={stored.provider} (and MEMU_EMBED_MODEL={stored.model}) so new "
                "memories are searchable the same way"
            )
        if embedder is not None and self._lexical_only_store(embedder):
            raise FingerprintMismatch(
                f"the store was built lexical-only and has no vectors, but {embedder.fingerprint.describe()} "
                "is now configured; run `memu reindex` once to embed what is stored"
            )
        vectors: dict[str, list[float]] = {}
        for _attempt in range(COMMIT_ATTEMPTS):
            stored_files = self.store.get_files(scope, [f.key for f in files])
            if expect_hashes:
                _check_hashes(stored_files, expect_hashes)
            stored_resources = self.store.get_resources(scope, [r.path for r in resources])
            file_plans = (self._plan_file(scope, f, stored_files.get(f.key)) for f in files)
            resource_plans = (self._plan_resource(scope, r, stored_resources.get(r.path)) for r in resources)
            changes = ChangeSet(
                files=[plan for plan in file_plans if plan is not None],
                resources=[plan for plan in resource_plans if plan is not None],
                note=HistoryNote(action, actor or current_actor(), self.history_keep),
            )
            if embedder is not None:
                missing = self._missing_texts(changes, stored_files, vectors)
                if missing:
                    vectors.update(zip(missing, self._embed(embedder, missing), strict=True))
                    stats["texts_embedded"] += len(missing)
                self._attach_vectors(changes, stored_files, vectors)
                if self._carries_vectors(changes):
                    changes.fingerprint = embedder.fingerprint
            if not changes.files and not changes.resources:
                break
            try:
                self.store.apply(changes)
            except WriteConflict:
                continue
            stats["files_written"] = len(changes.files)
            stats["resources_written"] = len(changes.resources)
            break
        else:
            raise StoreError(
                f"gave up after {COMMIT_ATTEMPTS} attempts: other writers kept changing the same files; "
                "retry the commit"
            )
        log.debug("commit wrote", files=len(files), resources=len(resources), **stats)
        after_files = self.store.get_files(scope, [f.key for f in files])
        after_resources = self.store.get_resources(scope, [r.path for r in resources])
        return {
            "recall_files": [after_files[f.key].file.to_json() for f in files if f.key in after_files],
            "resources": [after_resources[r.path].to_json() for r in resources if r.path in after_resources],
            "stats": stats,
        }

    def _plan_file(self, scope: Scope, new: FileInput, stored: StoredFile | None) -> FileWrite | None:
        # A blank description on an existing file keeps the stored one: agents often re-send a
        # file's body without its frontmatter, and that must not erase what it is about.
        description = new.description or (stored.file.description if stored else "")
        digest = content_hash(new.track, new.name, description, new.content)
        if stored is not None and stored.file.content_hash == digest:
            return None
        return FileWrite(
            scope=scope,
            track=new.track,
            name=new.name,
            description=description,
            content=new.content,
            content_hash=digest,
            expected_revision=stored.file.revision if stored else None,
            segments=segment_file(new.track, new.name, description, new.content),
        )

    def _lexical_only_store(self, embedder: Embedder) -> bool:
        """True when the store holds files but no vectors at all (it was built lexical-only)."""
        if self._check_space(embedder) is not None:
            return False
        files, _ = self.store.list_files({}, None, 1)
        # Read the fingerprint again after the files: a concurrent first commit writes its files
        # and the fingerprint in one transaction, so it may have landed between the two reads.
        return bool(files) and self.store.fingerprint() is None

    @staticmethod
    def _plan_resource(scope: Scope, new: ResourceInput, stored: Resource | None) -> ResourceWrite | None:
        if stored is not None and stored.description == new.description:
            return None
        return ResourceWrite(scope=scope, path=new.path, description=new.description)

    @staticmethod
    def _missing_texts(
        changes: ChangeSet, stored: Mapping[tuple[str, str], StoredFile], have: Mapping[str, list[float]]
    ) -> list[str]:
        """Texts that need a vector: not already vectorised in the store, nor earlier in this commit."""
        wanted: dict[str, None] = {}
        for write in changes.files:
            known = stored[(write.track, write.name)].segment_texts if (write.track, write.name) in stored else ()
            for draft in write.segments:
                if draft.text not in have and draft.text not in known:
                    wanted.setdefault(draft.text, None)
        for res in changes.resources:
            if res.description and res.description not in have:
                wanted.setdefault(res.description, None)
        return list(wanted)

    @staticmethod
    def _attach_vectors(
        changes: ChangeSet, stored: Mapping[tuple[str, str], StoredFile], vectors: Mapping[str, list[float]]
    ) -> None:
        for write in changes.files:
            known = stored.get((write.track, write.name))
            keep = known.segment_texts if known is not None else frozenset()
            for draft in write.segments:
                # The store keeps its own vector for a text it already holds; send only new ones.
                draft.vector = None if draft.text in keep else vectors.get(draft.text)
        for res in changes.resources:
            res.vector = vectors.get(res.description) if res.description else None

    @staticmethod
    def _carries_vectors(changes: ChangeSet) -> bool:
        return any(d.vector is not None for w in changes.files for d in w.segments) or any(
            r.vector is not None for r in changes.resources
        )

    # -- list / forget ----------------------------------------------------------------------
    def list_all_recall_files(
        self, where: Mapping[str, Any] | None = None, *, cursor: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """One keyset page of files ordered by (track, name, id)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise UsageError(f"limit must be a whole number >= 1, got {limit!r}")
        after = decode_cursor(cursor) if cursor else None
        files, next_key = self.store.list_files(parse_where(where), after, limit)
        return {
            "recall_files": [f.to_json() for f in files],
            "next_cursor": encode_cursor(next_key) if next_key else None,
        }

    def forget(
        self,
        name: str,
        *,
        track: str = "memory",
        user: Mapping[str, Any] | None = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """Delete one file (and its segments and vectors), keeping a tombstone version to undo it."""
        if not isinstance(name, str) or not name.strip():
            raise UsageError("forget needs the name of a recall file")
        note = HistoryNote("forget", actor or current_actor(), self.history_keep)
        deleted = self.store.delete_file(
            parse_scope(user, self.default_scope), track or "memory", name.strip(), note=note
        )
        return {"forgotten": [deleted.to_json()] if deleted else []}

    # -- retrieve ---------------------------------------------------------------------------
    def progressive_retrieve(
        self,
        query: str,
        where: Mapping[str, Any] | None = None,
        *,
        top_k: int | None = None,
        tracks: Sequence[str] | None = None,
        mode: str | None = None,
        explain: bool = False,
    ) -> dict[str, Any]:
        """Hybrid search: ranked segments, their files (best segment wins) and resources.

        ``explain`` adds ``why`` to each segment: the share of its score each ranking gave, and
        the query words it holds (:mod:`memu_core._engine.explain`; for people, not agents).
        """
        if not isinstance(query, str) or not query.strip():
            raise UsageError('empty query: pass the question to search memory for, e.g. `memu retrieve "deploy steps"`')
        filters = parse_where(where)
        k = DEFAULT_TOP_K if top_k is None else top_k
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP_K:
            raise UsageError(f"top_k must be between 1 and {MAX_TOP_K}, got {k!r}")
        if mode is not None and mode not in SEARCH_MODES:
            raise UsageError(f"unknown search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
        track_list = list(tracks) if tracks else None

        # A store without vectors answers lexically whatever the configuration, so the embedder
        # (and the plugins and model behind it) is not even built for it: the per-turn retrieve
        # over a lexical-only store stays a small process.
        wants_vectors = mode == "dense" or (mode != "lexical" and self.store.fingerprint() is not None)
        embedder = self.embedder if wants_vectors else None
        if mode == "dense" and embedder is None:
            raise UsageError("dense search needs an embedder: set MEMU_EMBED_PROVIDER (e.g. local)")
        pool = max(k * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
        lexical_query = expand_query(query) if EXPAND_FORMS else query

        def by_words() -> tuple[list[Hit], list[Hit]]:
            return (
                self.store.search_segments_lexical(lexical_query, filters, track_list, pool),
                self.store.search_resources_lexical(lexical_query, filters, RESOURCE_TOP_K * 4),
            )

        # Every mode but dense searches the words, and they need no vector: with an embedding
        # to wait for, the word search runs beside it (and beside the dense search; ADR 0030).
        beside = Beside(by_words, "memu-lexical") if embedder is not None and mode != "dense" else None
        vector: list[float] | None = None
        try:
            if embedder is not None and self._check_space(embedder) is not None:
                vector = self._query_vector(embedder, query)
            used = mode or ("hybrid" if vector is not None else "lexical")
            if used == "hybrid" and vector is None:
                used = "lexical"
            dense_hits = (
                (
                    self.store.search_segments_dense(vector, filters, track_list, pool),
                    self.store.search_resources_dense(vector, filters, RESOURCE_TOP_K * 4),
                )
                if vector is not None and used in ("hybrid", "dense")
                else None
            )
        except BaseException:
            if beside is not None:
                beside.wait()  # leave no search running on the store behind the error
            raise

        seg_rankings: list[tuple[list[Hit], float]] = []
        res_rankings: list[tuple[list[Hit], float]] = []
        if used in ("hybrid", "lexical"):
            seg_hits, res_hits = beside.result() if beside is not None else by_words()
            seg_rankings.append((seg_hits, LEXICAL_WEIGHT))
            res_rankings.append((res_hits, LEXICAL_WEIGHT))
        if dense_hits is not None:
            seg_rankings.append((dense_hits[0], DENSE_WEIGHT))
            res_rankings.append((dense_hits[1], DENSE_WEIGHT))

        fused = fuse(seg_rankings)
        known: dict[str, Segment] = {}
        by_phrase: list[Hit] = []
        if fused and used != "dense" and (PHRASE_WEIGHT > 0 or FILE_PRIOR_WEIGHT > 0):
            # Pure dense stays pure cosine (it is the diagnostic mode); the others re-rank.
            head = fused[: max(k * CANDIDATES_PER_RESULT, RERANK_DEPTH)]
            known = self.store.fetch_segments([h.id for h in head])
            by_phrase = phrase_ranking(head, known, query_phrases(query)) if PHRASE_WEIGHT > 0 else []
            if by_phrase:
                fused = fuse([*seg_rankings, (by_phrase, PHRASE_WEIGHT)])
            if FILE_PRIOR_WEIGHT > 0:
                fused = lift_by_file(fused, known, FILE_PRIOR_WEIGHT)
        top, segments, header_hits = self._pick_segments(fused, k, known)
        explainer = _explainer(query, used, seg_rankings, by_phrase) if explain else None
        parents = [s.file_id for s in segments.values()]
        files = self.store.fetch_files(list(dict.fromkeys(parents)))
        segment_out: list[dict[str, Any]] = []
        file_scores: dict[str, float] = {}
        for hit in header_hits:
            seg = segments.get(hit.id)
            if seg is not None and seg.file_id in files:
                file_scores[seg.file_id] = max(file_scores.get(seg.file_id, 0.0), hit.score)
        for hit in top:
            seg = segments.get(hit.id)
            parent = files.get(seg.file_id) if seg else None
            if seg is None or parent is None:
                continue  # deleted between search and fetch
            file_scores[parent.id] = max(file_scores.get(parent.id, 0.0), hit.score)
            segment_out.append(
                {
                    "id": seg.id,
                    "created_at": parent.updated_at.isoformat(),
                    "updated_at": parent.updated_at.isoformat(),
                    "recall_file_id": seg.file_id,
                    "track": seg.track,
                    "kind": seg.kind,
                    "text": seg.text,
                    **seg.scope.as_dict(),
                    "score": round(hit.score, 6),
                    **({"why": explainer.why(seg.id, seg.text, hit.score)} if explainer else {}),
                }
            )
        file_out = [
            {**files[fid].to_json(), "score": round(score, 6)}
            for fid, score in sorted(file_scores.items(), key=lambda item: -item[1])
        ]
        res_top = fuse(res_rankings)[:RESOURCE_TOP_K]
        res_rows = self.store.fetch_resources([h.id for h in res_top])
        resource_out = [{**res_rows[h.id].to_json(), "score": round(h.score, 6)} for h in res_top if h.id in res_rows]
        log.debug(
            "retrieve ranked",
            mode=used,
            candidates=len(fused),
            segments=len(segment_out),
            files=len(file_out),
            resources=len(resource_out),
        )
        return {
            "segments": segment_out,
            "files": file_out,
            "resources": resource_out,
            "mode": used,
            "embedder": self.embedder_info() if vector is not None else None,
        }

    def _pick_segments(
        self, fused: list[Hit], k: int, known: dict[str, Segment]
    ) -> tuple[list[Hit], dict[str, Segment], list[Hit]]:
        """The ``k`` best segments to show, and the header hits ranked above the last of them.

        A header (``name: description``) repeats what the ``files`` list already says, so past
        :data:`HEADER_SLOTS` it ranks its file instead of taking a slot a content line could use.
        """
        if HEADER_SLOTS is None:
            top = fused[:k]
            return top, known or self.store.fetch_segments([h.id for h in top]), []
        chosen: list[Hit] = []
        headers: list[Hit] = []
        fetched: dict[str, Segment] = dict(known)
        start = 0
        while len(chosen) < k and start < len(fused):
            # Fetch a little more than is missing: most candidates are lines, not headers.
            part = fused[start : start + (k - len(chosen)) + 4]
            start += len(part)
            missing = [h.id for h in part if h.id not in fetched]
            if missing:
                fetched.update(self.store.fetch_segments(missing))
            for hit in part:
                seg = fetched.get(hit.id)
                if seg is None:
                    continue
                if len(chosen) >= k:
                    break
                if seg.kind == "header":
                    headers.append(hit)
                    if len(headers) > HEADER_SLOTS:
                        continue
                chosen.append(hit)
        return chosen, fetched, headers

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def _explainer(
    query: str, used: str, rankings: Sequence[tuple[Sequence[Hit], float]], by_phrase: Sequence[Hit]
) -> Explainer:
    """The explainer over this retrieve's rankings, labelled as the engine built them (lexical
    first unless the search was dense-only, then dense, then the phrase ranking)."""
    labels = ["dense"] if used == "dense" else ["lexical", "dense"]
    named = [(label, hits, weight) for label, (hits, weight) in zip(labels, rankings, strict=False)]
    if by_phrase:
        named.append(("phrase", by_phrase, PHRASE_WEIGHT))
    return Explainer(query, named)


def _check_hashes(stored: Mapping[tuple[str, str], StoredFile], expect: Mapping[tuple[str, str], str | None]) -> None:
    """Refuse a write when a file moved away from the hash its editor started from."""
    for (track, name), wanted in expect.items():
        found = stored.get((track, name))
        have = found.file.content_hash if found is not None else None
        if have == wanted:
            continue
        if found is None:
            now = "it was forgotten since"
        elif wanted is None:
            now = f"it was created meanwhile (version {found.file.revision})"
        else:
            now = f"it changed meanwhile (now version {found.file.revision})"
        raise ConflictError(
            f"{track}/{name}: {now} by someone else; nothing was written. See `memu history {name}"
            f"{' --track ' + track if track != 'memory' else ''}`, then edit the stored version again"
        )
