"""Validation of what callers hand the engine: commit payloads, scopes and ``where`` filters.

Each check fails with a :class:`UsageError` that names the offending item and how to fix it, and
runs before anything is embedded or written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memu_core.errors import UsageError
from memu_core.types import DEFAULT_SCOPE_VALUE, SCOPE_FIELDS, Scope, Where

_USER_KEYS = frozenset({*SCOPE_FIELDS, "user_name", "agent_name"})

MAX_CONTENT_CHARS = 1_000_000
"""The most characters one recall file's content may hold.

A recall file is distilled memory, a few kilobytes; a megabyte is already about 2,000 segments
to index (and embed). Past that, a commit costs minutes and the store grows by more than ten
times the text, so a pasted log or dump is refused up front instead of half-indexed."""


@dataclass(frozen=True, slots=True)
class FileInput:
    """A recall file as the caller sent it, normalised."""

    track: str
    name: str
    description: str
    content: str

    @property
    def key(self) -> tuple[str, str]:
        """The file's identity within a scope."""
        return (self.track, self.name)


@dataclass(frozen=True, slots=True)
class ResourceInput:
    """A resource as the caller sent it, normalised (``description`` ``None`` clears it)."""

    path: str
    description: str | None


def content_hash(track: str, name: str, description: str, content: str) -> str:
    """Stable hash of everything that decides a file's segments; equal hash = nothing to do."""
    digest = hashlib.sha256()
    for part in (track, name, description, content):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _text(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return value.strip()


def _items(value: Any, label: str) -> Sequence[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(item, Mapping) for item in value):
        raise UsageError(f"{label!r} must be a list of JSON objects")
    return value


def parse_files(recall_files: Any) -> list[FileInput]:
    """Normalise ``recall_files``; a repeated (track, name) keeps the last one at the first position."""
    out: dict[tuple[str, str], FileInput] = {}
    for index, item in enumerate(_items(recall_files, "recall_files")):
        where = f"recall_files[{index}]"
        name = _text(item, "name", where)
        if not name:
            raise UsageError(f"{where} has no name: every recall file needs a non-empty 'name'")
        track = _text(item, "track", where) or "memory"
        parsed = FileInput(track, name, _text(item, "description", where), _text(item, "content", where))
        _check_size(parsed, where)
        out[parsed.key] = parsed
    return list(out.values())


def _check_size(parsed: FileInput, where: str) -> None:
    if len(parsed.content) > MAX_CONTENT_CHARS:
        raise UsageError(
            f"{where} ({parsed.name!r}) has {len(parsed.content):,} characters of content, over the "
            f"limit of {MAX_CONTENT_CHARS:,} (MAX_CONTENT_CHARS): split it into smaller recall files"
        )


def parse_resources(resource: Any) -> list[ResourceInput]:
    """Normalise ``resource`` records; a repeated path keeps the last one at the first position."""
    out: dict[str, ResourceInput] = {}
    for index, item in enumerate(_items(resource, "resource")):
        where = f"resource[{index}]"
        path = _text(item, "path", where)
        if not path:
            raise UsageError(f"{where} has no path: every resource needs a non-empty 'path'")
        out[path] = ResourceInput(path, _text(item, "description", where) or None)
    return list(out.values())


def parse_scope(user: Mapping[str, Any] | None, default: Scope | None = None) -> Scope:
    """The exact scope a commit writes to; missing fields take ``default`` (then ``"default"``)."""
    base = default or Scope()
    if user is None:
        return base
    if not isinstance(user, Mapping):
        raise UsageError("'user' must be a JSON object with user_id and/or agent_id")
    unknown = set(user) - _USER_KEYS
    if unknown:
        raise UsageError(
            f"unknown field(s) in 'user': {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(_USER_KEYS))}"
        )
    values = {}
    for key in SCOPE_FIELDS:
        raw = user.get(key)
        if raw is not None and not isinstance(raw, str):
            raise UsageError(f"'user.{key}' must be a string")
        values[key] = (raw or "").strip() or getattr(base, key) or DEFAULT_SCOPE_VALUE
    return Scope(**values)


def parse_where(where: Mapping[str, Any] | None) -> Where:
    """Validate a scope filter. Only ``user_id`` and ``agent_id`` (optionally ``__in``) exist."""
    if not where:
        return {}
    if not isinstance(where, Mapping):
        raise UsageError('\'where\' must be a JSON object such as {"user_id": "alice"}')
    out: Where = {}
    for key, value in where.items():
        if value is None:
            continue
        field, _, op = key.partition("__")
        if field not in SCOPE_FIELDS or op not in ("", "in"):
            raise UsageError(
                f"unknown filter field {key!r}: filter on {', '.join(SCOPE_FIELDS)} (or <field>__in with a list)"
            )
        if isinstance(value, str):
            out[field] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[field] = list(value)
        else:
            raise UsageError(f"filter {key!r} needs a string or a list of strings")
    return out
