"""``memu reindex``: re-embed a whole store under the configured embedder.

The store does the bookkeeping (see :class:`memu_core.interfaces.MemoryStore`): rows lacking a
vector under the new fingerprint are fetched a chunk at a time, embedded, and *staged*; the old
vectors stay live and searched until :meth:`~memu_core.interfaces.MemoryStore.switch_fingerprint`
swaps everything in one transaction. So a reindex killed half-way leaves the store answering as
before, and running it again embeds only what was not staged yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from memu_core.errors import ConfigError, StoreError
from memu_core.interfaces import Embedder, MemoryStore
from memu_core.types import Fingerprint

__all__ = ["ReindexProgress", "ReindexReport", "reindex", "run_reindex"]

DEFAULT_BATCH_SIZE = 64


@dataclass(slots=True)
class ReindexProgress:
    """Passed to the ``progress`` callback once before the first chunk, then after every staged one."""

    done: int
    """Rows embedded and staged so far in this run."""
    total: int | None
    """Rows that needed a vector when the run started, when the store can count them."""


@dataclass(slots=True)
class ReindexReport:
    """What a reindex did."""

    fingerprint: Fingerprint
    """The embedding space the store is in now."""
    previous: Fingerprint | None
    """The space it was in before (``None``: it had no vectors, i.e. lexical-only)."""
    embedded: int = 0
    """Rows (segments + resources) given a vector in this run."""
    segments: int = 0
    resources: int = 0
    texts_sent: int = 0
    """Distinct texts sent to the embedder (equal texts are embedded once)."""
    chunks: int = 0
    seconds: float = 0.0
    switched: bool = False
    """Whether the live fingerprint changed (``False`` when it already was the configured one
    and only missing vectors were filled in)."""
    kinds: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """The report for ``memu reindex --json``."""

        def space(fp: Fingerprint | None) -> dict[str, object] | None:
            return None if fp is None else {"provider": fp.provider, "model": fp.model, "dimension": fp.dimension}

        return {
            "embedder": space(self.fingerprint),
            "previous": space(self.previous),
            "switched": self.switched,
            "embedded": self.embedded,
            "segments": self.segments,
            "resources": self.resources,
            "texts_sent": self.texts_sent,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """One human line for the CLI."""
        if self.embedded == 0 and not self.switched:
            return f"reindex: nothing to do, the store is already in {self.fingerprint.describe()}"
        was = f" (was {self.previous.describe()})" if self.previous and self.previous != self.fingerprint else ""
        if self.previous is None:
            was = " (was lexical-only)"
        return (
            f"reindexed {self.embedded} rows ({self.segments} segments, {self.resources} resources, "
            f"{self.texts_sent} texts embedded) into "
            f"{self.fingerprint.describe()}{was} in {self.seconds:.1f} s"
        )


def _count(store: MemoryStore, fingerprint: Fingerprint) -> int | None:
    # Optional store extension: counting lets the CLI draw a real progress bar.
    counter = getattr(store, "count_texts_to_embed", None)
    if counter is None:
        return None
    try:
        return int(counter(fingerprint))
    except Exception:
        return None


def reindex(
    store: MemoryStore,
    embedder: Embedder,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Callable[[ReindexProgress], None] | None = None,
) -> ReindexReport:
    """Give every segment and resource a vector under ``embedder``'s fingerprint, then switch.

    Loops ``texts_to_embed → embed → store_vectors`` in chunks of ``batch_size`` until nothing
    is left, then calls ``switch_fingerprint`` once. Interrupted at any point, the old vectors
    stay live; calling it again resumes where it stopped.
    """
    if batch_size < 1:
        raise ConfigError(f"reindex batch size {batch_size} is too small: use a whole number >= 1")
    started = time.monotonic()
    fingerprint = embedder.fingerprint
    report = ReindexReport(fingerprint=fingerprint, previous=store.fingerprint())
    total = _count(store, fingerprint)
    if progress is not None:
        progress(ReindexProgress(done=0, total=total))  # the total before the first (slowest) chunk
    staged: set[tuple[str, str]] = set()
    while True:
        rows = store.texts_to_embed(fingerprint, batch_size)
        if not rows:
            break
        keys = [(kind, row_id) for kind, row_id, _ in rows]
        if all(k in staged for k in keys):
            # The store keeps handing back rows it was just given vectors for: looping again
            # would never end, so stop and say which store misbehaves.
            raise StoreError(
                f"store {type(store).__name__} did not keep the vectors staged for {fingerprint.describe()}; "
                "the reindex stopped without switching (the old vectors are still in use)"
            )
        # Equal texts (the same line in many files) are embedded once.
        unique = list(dict.fromkeys(text for _, _, text in rows))
        vectors = embedder.embed(unique)
        if len(vectors) != len(unique):
            raise StoreError(
                f"the embedder returned {len(vectors)} vectors for {len(unique)} texts; nothing was staged"
            )
        by_text = dict(zip(unique, vectors, strict=True))
        store.store_vectors(fingerprint, [(kind, row_id, by_text[text]) for kind, row_id, text in rows])
        staged.update(keys)
        report.chunks += 1
        report.texts_sent += len(unique)
        report.embedded += len(rows)
        for kind, _, _ in rows:
            report.kinds[kind] = report.kinds.get(kind, 0) + 1
        if progress is not None:
            progress(ReindexProgress(done=report.embedded, total=total))
    report.segments = report.kinds.get("segment", 0)
    report.resources = report.kinds.get("resource", 0)
    if report.previous != fingerprint or report.embedded:
        store.switch_fingerprint(fingerprint)
        report.switched = report.previous != fingerprint
    report.seconds = time.monotonic() - started
    return report


def run_reindex(
    store: MemoryStore,
    embedder: Embedder,
    out: IO[str],
    err: IO[str],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Callable[[ReindexProgress], None] | None = None,
    as_json: bool = False,
) -> int:
    """The ``memu reindex`` command's body: re-embed ``store`` under ``embedder``, print one line
    (``as_json``: one JSON object with the report's counts and both embedding spaces).

    The caller opens both (memu's composition root, from the settings); the store is closed here
    when the run ends. ``progress`` is told after every staged chunk (the CLI draws a bar on a
    terminal and writes count lines to ``err`` when piped); the summary goes to ``out``. Store
    problems raise :class:`~memu_core.errors.MemuError` (one line and an exit code at the CLI).
    Returns 0.
    """
    try:
        report = reindex(store, embedder, batch_size=batch_size, progress=progress)
    finally:
        store.close()
    if as_json:
        import json

        out.write(json.dumps(report.as_json(), indent=2) + "\n")
        return 0
    out.write(report.summary() + "\n")
    return 0
