"""Reshape a backend's ``progressive_retrieve`` result into the JSON a host's agent reads.

Pure and import-light on purpose: the per-turn ``retrieve`` (and, later, its socket fast path)
calls it before anything heavy is loaded. The shape is memU's, so instructions written for memU
keep working:

- ``files``: ``content`` and ``resource_urls`` removed; ``path`` added when a current copy of
  the file exists on disk (``locate`` says where), otherwise ``content`` is kept inline.
- ``segments``: ``recall_file_id`` replaced by ``source_file`` = ``"<track>/<name>"`` of the
  parent file (``null`` when the parent is not among the returned files). Vectors dropped.
- ``resources``: ``local_path`` removed, ``url`` renamed ``path``.
Other top-level keys (``mode``, ``embedder``) pass through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Locate = Callable[[Mapping[str, Any]], str | None]
"""Given a file dict, the absolute path of an on-disk copy with the same content, or ``None``."""

_DROP = frozenset({"embedding", "vector", "embeddings"})


def _clean(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in _DROP}


def shape_files(files: list[Mapping[str, Any]], locate: Locate | None) -> list[dict[str, Any]]:
    """The ``files`` layer (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for item in files:
        shaped = _clean(item)
        shaped.pop("resource_urls", None)
        path = locate(item) if locate is not None and item.get("name") else None
        if path:
            shaped.pop("content", None)
            shaped["path"] = path
        out.append(shaped)
    return out


def shape_segments(segments: list[Mapping[str, Any]], files: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``segments`` layer: each names its parent as ``<track>/<name>``."""
    parents: dict[Any, str] = {}
    for f in files:
        name = f.get("name")
        if f.get("id") is not None and name:
            parents[f["id"]] = f"{f['track']}/{name}" if f.get("track") else str(name)
    out: list[dict[str, Any]] = []
    for seg in segments:
        shaped = _clean(seg)
        parent = shaped.pop("recall_file_id", None)
        shaped["source_file"] = parents.get(parent)
        out.append(shaped)
    return out


def shape_resources(items: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``resources`` layer: ``url`` becomes ``path``."""
    out: list[dict[str, Any]] = []
    for item in items:
        shaped = _clean(item)
        local = shaped.pop("local_path", None)
        url = shaped.pop("url", None)
        shaped["path"] = url if url is not None else local
        out.append(shaped)
    return out


def shape_for_agent(result: Mapping[str, Any], locate: Locate | None = None) -> dict[str, Any]:
    """The whole reshaping; never mutates ``result``."""
    files = list(result.get("files") or [])
    shaped: dict[str, Any] = {
        "segments": shape_segments(list(result.get("segments") or []), files),
        "files": shape_files(files, locate),
        "resources": shape_resources(list(result.get("resources") or [])),
    }
    for key, value in result.items():
        if key not in shaped:
            shaped[key] = value
    return shaped


def render(shaped: Mapping[str, Any]) -> str:
    """The printed form: indented JSON, UTF-8 kept, datetimes as strings."""
    return json.dumps(shaped, indent=2, ensure_ascii=False, default=str)


def locate_in_mirror(base: Path) -> Locate:
    """A :data:`Locate` over the host mirror under ``base``: its copy, when it is current."""

    def locate(item: Mapping[str, Any]) -> str | None:
        from memu_core._mirror import RecallDoc, candidates, read_doc

        track, name = item.get("track"), item.get("name")
        if track not in ("memory", "skill") or not name:
            return None
        want = RecallDoc(track, str(name), item.get("description") or "", item.get("content") or "").digest()
        # The mirror gives a name its readable file, or the tagged one when another name has that.
        for candidate in candidates(str(name)):
            path = base / track / candidate
            try:
                on_disk = read_doc(path, track).digest()
            except Exception:  # missing or unreadable: the content goes inline instead
                continue
            if on_disk == want:
                return str(path)
        return None

    return locate
