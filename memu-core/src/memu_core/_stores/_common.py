"""Rules every built-in store shares, so the memory and sqlite stores answer alike."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence

from memu_core.errors import FingerprintMismatch, UsageError, WriteConflict
from memu_core.types import SCOPE_FIELDS, ChangeSet, Fingerprint

ScopeFilter = dict[str, tuple[str, ...]]
"""A checked ``where``: scope field → accepted values (one or more). Missing field = any."""


def new_id() -> str:
    """A fresh row id: 32 hex characters, time-ordered then random (like a UUIDv7).

    The random half keeps ids from colliding across machines that sync; the time-ordered half
    makes each commit's new rows land together at the end of the id index instead of on random
    pages all over it (a 100-file commit into a 10,000-file store spent half its time there).
    """
    # os.urandom is what secrets.token_hex reads; importing secrets (hmac, OpenSSL's hashes) cost
    # every process that registers the built-in stores a few milliseconds.
    return f"{time.time_ns() // 1000:014x}{os.urandom(9).hex()}"


def check_where(where: Mapping[str, object] | None) -> ScopeFilter:
    """Validate a ``where`` filter; raise ``UsageError`` naming the bad key or value.

    ``None`` values are dropped (a wildcard, as in memU); an empty list matches nothing.
    """
    checked: ScopeFilter = {}
    for key, value in (where or {}).items():
        if key not in SCOPE_FIELDS:
            raise UsageError(f"unknown where filter field {key!r}; use one of {', '.join(SCOPE_FIELDS)}")
        if value is None:
            continue
        if isinstance(value, str):
            checked[key] = (value,)
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            checked[key] = tuple(value)
        else:
            raise UsageError(f"where filter {key!r} must be a string or a list of strings, got {value!r}")
    return checked


def check_tracks(tracks: Sequence[str] | None) -> tuple[str, ...] | None:
    """``None`` means every track; a bare string is refused (it would match per character)."""
    if tracks is None:
        return None
    if isinstance(tracks, str):
        raise UsageError(f"tracks must be a list of track names, got the string {tracks!r}")
    return tuple(tracks)


def check_limit(limit: int, what: str = "limit") -> None:
    """Paging limits must be positive (memU crashed on 0 and misbehaved on negatives)."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise UsageError(f"{what} must be a positive integer, got {limit!r}; pass 1 or more")


def fingerprint_key(fp: Fingerprint) -> str:
    """The stable text key vectors are stored under (JSON, so any model name is safe)."""
    return json.dumps({"provider": fp.provider, "model": fp.model, "dimension": fp.dimension}, sort_keys=True)


def fingerprint_from_key(key: str) -> Fingerprint:
    """Inverse of :func:`fingerprint_key`."""
    data = json.loads(key)
    return Fingerprint(str(data["provider"]), str(data["model"]), int(data["dimension"]))


def mismatch(stored: Fingerprint, given: Fingerprint) -> FingerprintMismatch:
    """The error raised when a write or query comes from another embedding space."""
    return FingerprintMismatch(
        f"the store's vectors were made by {stored.describe()} but this request uses "
        f"{given.describe()}; run `memu reindex` to re-embed the store under the new model"
    )


def check_change_vectors(changes: ChangeSet) -> None:
    """Refuse vectors without a fingerprint, or of the wrong length, before anything is written."""
    vectors: Iterable[list[float] | None] = [
        *(d.vector for f in changes.files for d in f.segments),
        *(r.vector for r in changes.resources),
    ]
    fp = changes.fingerprint
    for vector in vectors:
        if vector is None:
            continue
        if fp is None:
            raise UsageError(
                "the change set carries vectors but no fingerprint; set ChangeSet.fingerprint "
                "to the embedder's fingerprint"
            )
        if len(vector) != fp.dimension:
            raise UsageError(
                f"a vector has {len(vector)} dimensions but the change set's fingerprint "
                f"{fp.describe()} says {fp.dimension}; embed with the configured model"
            )


def check_query_vector(vector: Sequence[float], live: Fingerprint) -> None:
    """A query vector must have the live space's dimension (mixing spaces gives nonsense)."""
    if len(vector) != live.dimension:
        raise FingerprintMismatch(
            f"the query vector has {len(vector)} dimensions but the store's vectors are "
            f"{live.describe()}; configure the same embedder or run `memu reindex`"
        )


def conflict(track: str, name: str, expected: int | None, actual: int | None) -> WriteConflict:
    """The error raised when a file's stored revision is not the one the engine planned against."""
    seen = "absent" if actual is None else f"at revision {actual}"
    wanted = "absent" if expected is None else f"at revision {expected}"
    return WriteConflict(
        f"file {track}/{name} is {seen} but the commit expected it {wanted}; "
        "another writer got there first, re-plan the commit and retry"
    )
