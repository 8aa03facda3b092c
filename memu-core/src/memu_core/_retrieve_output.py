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


# --- The byte budget: an answer sized for an agent's context ------------------------------------

DEFAULT_MAX_BYTES = 6000
"""The per-turn answer's default size in bytes of printed JSON, like memU's ~4 KB answers: the
top segments, each with its file once, a mirror path rather than the file's text."""
MAX_BYTES_ENV = "MEMU_RETRIEVE_MAX_BYTES"
"""Sets the default budget (``0`` = no budget); ``--max-bytes`` wins over it."""
CONTEXT_LINES = 1
"""Lines kept on each side of a matching line when a file's text has to be inline."""
GAP = "…"
"""Stands for the lines a trimmed file's text leaves out."""


def budget(explicit: int | None = None) -> int:
    """The byte budget: ``--max-bytes`` when given, else ``MEMU_RETRIEVE_MAX_BYTES`` (process
    environment, then config file) when it is a whole number, else :data:`DEFAULT_MAX_BYTES`."""
    if explicit is not None:
        return max(explicit, 0)
    from memu_core._config import resolve

    text = (resolve.lookup(MAX_BYTES_ENV, "") or "").strip()
    return int(text) if text.isdigit() else DEFAULT_MAX_BYTES


def trim_content(content: str, texts: list[str]) -> str:
    """``content`` cut to the lines holding one of ``texts`` and :data:`CONTEXT_LINES` around
    each, the gaps marked with :data:`GAP`; only the first line when none of them is found."""
    lines = content.splitlines()
    wanted = [t.strip() for t in texts if t.strip()]
    hits = [i for i, line in enumerate(lines) if any(_holds(line, t) for t in wanted)]
    if not hits:
        return lines[0] + ("\n" + GAP if len(lines) > 1 else "") if lines else ""
    keep = sorted({j for i in hits for j in range(i - CONTEXT_LINES, i + CONTEXT_LINES + 1) if 0 <= j < len(lines)})
    out: list[str] = [GAP] if keep[0] > 0 else []
    for before, index in zip([None, *keep], keep, strict=False):
        if before is not None and index > before + 1:
            out.append(GAP)
        out.append(lines[index])
    if keep[-1] < len(lines) - 1:
        out.append(GAP)
    return "\n".join(out)


def _holds(line: str, text: str) -> bool:
    # A segment is a line, or a piece of a long one.
    bare = line.strip()
    return text in line or (len(bare) >= 8 and bare in text)


def _file_key(item: Mapping[str, Any]) -> Any:
    name = item.get("name")
    return f"{item['track']}/{name}" if item.get("track") else name


def _parent_index(seg: Mapping[str, Any], files: list[Mapping[str, Any]]) -> int | None:
    raw = seg.get("recall_file_id")
    for i, item in enumerate(files):
        if raw is not None and item.get("id") == raw:
            return i
        if raw is None and seg.get("source_file") is not None and _file_key(item) == seg.get("source_file"):
            return i
    return None


_ITEM_INDENT = 4
"""Spaces before each line of an item in a top-level list, as :func:`render` prints it."""


def list_item_bytes(item: Any, *, first: bool) -> int:
    """How many bytes appending ``item`` to one of a rendered answer's top-level lists adds to
    :func:`render`'s output: the item's own lines, each indented, and the separator (``[]`` opens
    into lines for the ``first`` item, a comma joins the others). Lets :func:`fit` count the
    answer's size as it grows instead of printing the whole answer again for every item."""
    text = json.dumps(item, indent=2, ensure_ascii=False, default=str)
    lines = text.count("\n") + 1
    # "[]" becomes "[\n    ITEM\n  ]" (4 more bytes besides the item); "…\n  ]" becomes
    # "…,\n    ITEM\n  ]" (2 more).
    return len(text.encode()) + _ITEM_INDENT * lines + (4 if first else 2)


def _omitted_note_bytes(segments: int, files: int, resources: int) -> int:
    """The most the ``omitted`` counts can add to the printed answer: every layer that has items
    left out with all of them (what :func:`fit` keeps free, no more)."""
    counts = {k: n for k, n in (("segments", segments), ("files", files), ("resources", resources)) if n}
    if not counts:
        return 0
    return len(render({"segments": [], "omitted": counts}).encode()) - len(render({"segments": []}).encode())


def fit(doc: Mapping[str, Any], max_bytes: int) -> dict[str, Any]:
    """``doc`` (shaped for an agent, or the engine's raw answer) within ``max_bytes`` of printed
    JSON (``0`` = no budget; the other top-level keys kept).

    Items are taken best first: each segment, then its file once; then the files only a header
    hit brought in, while the answer names no more files than it has segments (top_k; every file
    when it has no segments); then the resources. An item that does not fit is left out and the
    next one tried. A file whose text is inline (no mirror path) keeps only the lines around its
    shown segments. What was left out is counted under ``omitted``. Never mutates ``doc``.
    """
    if max_bytes <= 0:
        return dict(doc)
    segments = list(doc.get("segments") or [])
    files = list(doc.get("files") or [])
    resources = list(doc.get("resources") or [])
    out: dict[str, Any] = {"segments": [], "files": [], "resources": []}
    out.update((k, v) for k, v in doc.items() if k not in out)
    limit = max_bytes - _omitted_note_bytes(len(segments), len(files), len(resources))
    taken_files: dict[int, int] = {}  # index in ``files`` -> its position in out["files"]
    texts: dict[int, list[str]] = {}
    size = len(render(out).encode())  # kept equal to the printed size as items are added

    def add(layer: str, item: Any) -> bool:
        nonlocal size
        grown = size + list_item_bytes(item, first=not out[layer])
        if grown > limit:
            return False
        out[layer].append(item)
        size = grown
        return True

    def inline(index: int) -> bool:
        return "path" not in files[index] and isinstance(files[index].get("content"), str)

    def add_file(index: int) -> None:
        item = dict(files[index])
        if inline(index):
            item["content"] = trim_content(item["content"], texts.get(index, []))
        if add("files", item):
            taken_files[index] = len(out["files"]) - 1

    shown_segments = 0
    for seg in segments:
        if not add("segments", dict(seg)):
            continue
        shown_segments += 1
        parent = _parent_index(seg, files)
        if parent is not None:
            texts.setdefault(parent, []).append(str(seg.get("text") or ""))
    for parent in texts:
        add_file(parent)
    cap = max(len(segments), len(taken_files)) if segments else len(files)
    for index in [i for i in range(len(files)) if i not in taken_files][: cap - len(taken_files)]:
        add_file(index)
    shown_resources = sum(add("resources", dict(r)) for r in resources)
    omitted = {
        "segments": len(segments) - shown_segments,
        "files": len(files) - len(taken_files),
        "resources": len(resources) - shown_resources,
    }
    if any(omitted.values()):
        out["omitted"] = {k: v for k, v in omitted.items() if v}
    return out


def agent_answer(result: Mapping[str, Any], locate: Locate | None, max_bytes: int) -> str:
    """What a host's ``retrieve`` prints: ``result`` shaped for the agent, within ``max_bytes``."""
    return render(fit(shape_for_agent(result, locate), max_bytes))
