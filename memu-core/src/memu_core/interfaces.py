"""The interfaces a plugin implements. Each has a contract-test base class in ``memu_core.testing``.

Registration hooks return the *classes* below (each with a ``name``); memu builds instances
later, from validated settings. Nothing here imports a heavy library.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from memu_core.types import (
    ChangeSet,
    Fingerprint,
    Hit,
    RecallFile,
    Resource,
    Scope,
    Segment,
    StoredFile,
    Where,
)

__all__ = [
    "AgenticMemoryBackend",
    "Embedder",
    "EventSink",
    "MemoryStore",
    "TemplateResolver",
]


class Embedder(ABC):
    """Turns texts into vectors in one stable embedding space.

    Implementations import their SDK inside ``__init__`` or ``embed``, never at module top.
    """

    name: ClassVar[str]
    """The value of ``MEMU_EMBED_PROVIDER`` that selects this embedder (``local``, ``litellm``…)."""

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Any) -> Embedder:
        """Build an instance from :class:`memu_core.settings.Settings`; raise ``ConfigError``
        naming the variable to set when something required is missing."""

    @property
    @abstractmethod
    def fingerprint(self) -> Fingerprint:
        """(provider, model, dimension) of the vectors this embedder returns."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, each of ``fingerprint.dimension`` floats and L2-normalised.

        An empty input returns ``[]`` without any call. Failures raise ``EmbeddingError``.
        """


class MemoryStore(ABC):
    """Persistence and raw search under the local engine.

    The engine plans, embeds and fuses; a store keeps rows and answers ranked lists. Every method
    that writes is one transaction: all of it or none of it.
    """

    name: ClassVar[str]
    """The store's registry key (``sqlite``, ``memory``, ``postgres``)."""

    url_schemes: ClassVar[tuple[str, ...]] = ()
    """``MEMU_DB`` prefixes this store claims (``postgresql://``…). A bare path means ``sqlite``."""

    @classmethod
    @abstractmethod
    def open(cls, url: str) -> MemoryStore:
        """Open (and create or migrate when needed) the store at ``url``."""

    # -- metadata -------------------------------------------------------------------------
    @abstractmethod
    def fingerprint(self) -> Fingerprint | None:
        """The embedding fingerprint recorded with the store's first vector, or ``None``."""

    @abstractmethod
    def generation(self) -> int:
        """A number that grows with every committed write (lets caches know they are stale)."""

    # -- planning reads -------------------------------------------------------------------
    @abstractmethod
    def get_files(self, scope: Scope, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
        """The stored files among ``(track, name)`` keys in exactly ``scope``."""

    @abstractmethod
    def get_resources(self, scope: Scope, paths: Iterable[str]) -> dict[str, Resource]:
        """The stored resources among ``paths`` in exactly ``scope``."""

    # -- writes ---------------------------------------------------------------------------
    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Write a whole commit in one transaction.

        Raises ``WriteConflict`` when a file's revision moved since planning (nothing written),
        and ``FingerprintMismatch`` when ``changes.fingerprint`` differs from the stored one.
        Unchanged segment texts keep their rows and vectors.
        """

    @abstractmethod
    def delete_file(self, scope: Scope, track: str, name: str) -> RecallFile | None:
        """Delete a file and its segments; return what was deleted, ``None`` if absent."""

    # -- listing and search ---------------------------------------------------------------
    @abstractmethod
    def list_files(
        self, where: Where, after: tuple[str, str, str] | None, limit: int
    ) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
        """One keyset page ordered by ``(track, name, id)`` strictly after ``after``."""

    @abstractmethod
    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        """Best-first segment ids for a free-text query (BM25-style); ``[]`` when nothing matches."""

    @abstractmethod
    def search_segments_dense(
        self, vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        """Best-first segment ids by cosine similarity; segments without vectors never appear."""

    @abstractmethod
    def search_resources_lexical(self, query: str, where: Where, limit: int) -> list[Hit]:
        """Best-first resource ids for a free-text query over path and description."""

    @abstractmethod
    def search_resources_dense(self, vector: Sequence[float], where: Where, limit: int) -> list[Hit]:
        """Best-first resource ids by cosine similarity of their description vectors."""

    @abstractmethod
    def fetch_segments(self, ids: Sequence[str]) -> dict[str, Segment]:
        """Segments by id (missing ids are absent from the result)."""

    @abstractmethod
    def fetch_files(self, ids: Sequence[str]) -> dict[str, RecallFile]:
        """Files by id."""

    @abstractmethod
    def fetch_resources(self, ids: Sequence[str]) -> dict[str, Resource]:
        """Resources by id."""

    # -- re-embedding (``memu reindex``) --------------------------------------------------
    @abstractmethod
    def texts_to_embed(self, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
        """Up to ``limit`` ``(kind, id, text)`` rows (kind ``segment`` or ``resource``) whose vector
        is missing or was not made under ``fingerprint``."""

    @abstractmethod
    def store_vectors(self, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
        """Stage ``(kind, id, vector)`` rows for ``fingerprint`` in one transaction. Staged vectors
        are not searched until :meth:`switch_fingerprint`."""

    @abstractmethod
    def switch_fingerprint(self, fingerprint: Fingerprint) -> None:
        """Atomically make the staged vectors of ``fingerprint`` the live ones and record it."""

    @classmethod
    def upgrade_schema(cls, url: str) -> str | None:
        """Migrate the schema at ``url`` to the newest revision and return it (``memu db upgrade``).

        Stores without migrations return ``None``.
        """
        return None

    @classmethod
    def schema_revision(cls, url: str) -> str | None:
        """The schema revision at ``url`` (``memu db current``), ``None`` when not created yet."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections and files."""


class AgenticMemoryBackend(ABC):
    """memU's three operations (plus ``forget``): the surface every host and the server call.

    The local engine and the cloud client implement it; results are JSON-ready dicts in memU's
    shapes so agent instructions written for memU keep working.
    """

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Any) -> AgenticMemoryBackend:
        """Build the backend from :class:`memu_core.settings.Settings` (``MEMU_MEMORY_MODE`` picks it)."""

    @abstractmethod
    def list_all_recall_files(
        self, where: Mapping[str, Any] | None = None, *, cursor: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """One page ``{"recall_files": [...], "next_cursor": str | None}``; ``limit >= 1``."""

    @abstractmethod
    def progressive_retrieve(
        self,
        query: str,
        where: Mapping[str, Any] | None = None,
        *,
        top_k: int | None = None,
        tracks: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """``{"segments", "files", "resources", "mode", ...}``, each hit carrying a ``score``."""

    @abstractmethod
    def commit_results(
        self,
        *,
        recall_files: Sequence[Mapping[str, Any]] | None = None,
        resource: Sequence[Mapping[str, Any]] | None = None,
        user: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store files and resources; ``{"recall_files": [...], "resources": [...]}``."""

    @abstractmethod
    def forget(self, name: str, *, track: str = "memory", user: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Delete one file and its segments; ``{"forgotten": [file dict]}`` (empty when absent)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release the store or the HTTP client."""


class EventSink(ABC):
    """Receives lifecycle events (``commit``, ``retrieve``, ``prepare``…). Must never raise."""

    name: ClassVar[str]

    @abstractmethod
    def emit(self, event: str, properties: Mapping[str, Any]) -> None:
        """Record one event. Called synchronously; keep it cheap (spool, do not send)."""


class TemplateResolver(ABC):
    """Finds job templates, the retrieval skill and the host guides by name."""

    name: ClassVar[str]

    @abstractmethod
    def resolve(self, name: str) -> str | None:
        """The text of template ``name``, or ``None`` to let the next resolver answer."""
