"""The agent-facing reshaping of retrieve results, and the light import path it sits on."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memu_core._retrieve_output import fit, list_item_bytes, render, shape_for_agent

RESULT: dict[str, Any] = {
    "segments": [
        {
            "id": "s1",
            "recall_file_id": "f1",
            "track": "memory",
            "text": "No sugar.",
            "score": 0.4,
            "embedding": [0.1],
        },
        {"id": "s2", "recall_file_id": "gone", "track": "memory", "text": "orphan", "score": 0.1},
    ],
    "files": [
        {
            "id": "f1",
            "name": "coffee preferences",
            "track": "memory",
            "description": "Coffee",
            "content": "No sugar.",
            "resource_urls": [],
            "score": 0.4,
        },
        {
            "id": "f2",
            "name": "odd",
            "track": "workspace",
            "description": "x",
            "content": "inline",
            "score": 0.2,
        },
    ],
    "resources": [
        {
            "id": "r1",
            "url": "/home/u/notes.md",
            "local_path": "/home/u/notes.md",
            "caption": "notes",
            "score": 0.3,
        }
    ],
    "mode": "lexical",
    "embedder": None,
}


def test_shape_matches_memu() -> None:
    shaped = shape_for_agent(RESULT, lambda f: "/m/coffee-preferences.md" if f["track"] == "memory" else None)
    assert shaped["segments"][0] == {
        "id": "s1",
        "track": "memory",
        "text": "No sugar.",
        "score": 0.4,
        "source_file": "memory/coffee preferences",
    }
    assert shaped["segments"][1]["source_file"] is None
    assert shaped["files"][0] == {
        "id": "f1",
        "name": "coffee preferences",
        "track": "memory",
        "description": "Coffee",
        "score": 0.4,
        "path": "/m/coffee-preferences.md",
    }
    assert shaped["files"][1]["content"] == "inline" and "path" not in shaped["files"][1]
    assert shaped["resources"] == [{"id": "r1", "caption": "notes", "score": 0.3, "path": "/home/u/notes.md"}]
    assert shaped["mode"] == "lexical"
    assert "resource_urls" in RESULT["files"][0]  # input untouched
    assert json.loads(render(shaped)) == shaped


def test_without_locate_files_keep_content_inline() -> None:
    shaped = shape_for_agent(RESULT)
    assert all("content" in f and "path" not in f for f in shaped["files"])


def test_retrieve_output_imports_nothing_heavy() -> None:
    code = (
        "import sys, memu_core._retrieve_output, memu_core.host\n"
        "heavy = {'typer', 'click', 'pydantic', 'sqlalchemy', 'numpy', 'faiss', 'torch', 'litellm'}\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_host_plugin_registration_is_light() -> None:
    code = (
        "import sys, memu_host_claude_code.plugin, memu_host_codex.plugin\n"
        "print(sorted(m for m in ('typer', 'click', 'pydantic', 'sqlalchemy', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),  # quotes, backslashes, newlines, control and non-ASCII characters
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_ITEMS = st.dictionaries(st.text(max_size=10), _VALUES, max_size=5)


@given(
    extra=st.dictionaries(st.sampled_from(["mode", "embedder", "omitted"]), _VALUES, max_size=2),
    appends=st.lists(st.tuples(st.sampled_from(["segments", "files", "resources"]), _ITEMS), max_size=12),
)
@settings(max_examples=300, deadline=None)
def test_counted_item_bytes_are_what_render_prints(extra: dict[str, Any], appends: list[tuple[str, Any]]) -> None:
    # fit() counts the answer's size item by item instead of printing it again each time; the
    # count must be exactly what render() prints, or an answer could overrun its budget.
    doc: dict[str, Any] = {"segments": [], "files": [], "resources": [], **extra}
    size = len(render(doc).encode())
    for layer, item in appends:
        size += list_item_bytes(item, first=not doc[layer])
        doc[layer].append(item)
        assert size == len(render(doc).encode())


@given(
    st.lists(_ITEMS, max_size=15), st.lists(_ITEMS, max_size=6), st.lists(_ITEMS, max_size=6), st.integers(0, 4000)
)
@settings(max_examples=300, deadline=None)
def test_a_fitted_answer_stays_within_its_budget(
    segments: list[Any], files: list[Any], resources: list[Any], max_bytes: int
) -> None:
    # Whatever was left out, its counts fit in what the budget kept free for them.
    out = fit({"segments": segments, "files": files, "resources": resources, "mode": "hybrid"}, max_bytes)
    if max_bytes and (out["segments"] or out["files"] or out["resources"]):
        assert len(render(out).encode()) <= max_bytes
