"""The export as ONNX Runtime loads it fastest: optimised once, weights in a file of their own.

Creating an inference session from the exported ``model.onnx`` costs about a second on a
2-core machine, every process: ONNX Runtime parses 90 MB of protobuf with the weights inline and
then rewrites the graph (fusing attention, layer norm, GELU). Both are the same every time, so
the first process that loads an export saves the rewritten graph beside it, in
``prepared-ort<version>/``: ``model.onnx`` (the graph, about 90 KB) and ``model.data`` (the
weights, read as one block). Later processes load that with graph optimisation off, in about a
tenth of the time.

The folder is named after the onnxruntime version that wrote it: the fused operators are that
runtime's own, so another version prepares its own copy. ``prepared.json`` records the sizes of
both files and the size and mtime of the ``model.onnx`` it came from; a copy that disagrees (or
whose probe fails, which the caller checks) is ignored and written again. Writers race safely:
each writes a private temporary folder and renames it into place; the loser discards its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

GRAPH_FILE = "model.onnx"
WEIGHTS_FILE = "model.data"
RECORD_FILE = "prepared.json"
SAVE_LEVEL = "ORT_ENABLE_EXTENDED"
"""The highest level whose saved graph is not tied to this CPU's instruction set (ORT warns above it)."""


def prepared_dir(folder: Path, ort_version: str) -> Path:
    """Where the prepared copy of the export in ``folder`` lives for this onnxruntime version."""
    return folder / f"prepared-ort{ort_version}"


def _source_stamp(model_file: Path) -> dict[str, int]:
    info = model_file.stat()
    return {"source_bytes": info.st_size, "source_mtime_ns": info.st_mtime_ns}


def usable(prepared: Path, model_file: Path) -> bool:
    """Whether ``prepared`` holds a whole copy made from ``model_file`` as it is now."""
    try:
        record = json.loads((prepared / RECORD_FILE).read_text(encoding="utf-8"))
        return bool(
            record.get("graph_bytes") == (prepared / GRAPH_FILE).stat().st_size
            and record.get("weights_bytes") == (prepared / WEIGHTS_FILE).stat().st_size
            and all(record.get(k) == v for k, v in _source_stamp(model_file).items())
        )
    except (OSError, ValueError, AttributeError):
        return False


def start(folder: Path) -> Path | None:
    """A private temporary folder inside ``folder`` to save a prepared copy into, or ``None``
    when the export folder is read-only (then nothing is prepared and loading stays slower)."""
    try:
        return Path(tempfile.mkdtemp(prefix=".prepare.", dir=folder))
    except OSError:
        return None


def save_options(options: Any, tmp: Path) -> None:
    """Make the session built with ``options`` write its optimised graph into ``tmp``."""
    import onnxruntime

    options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, SAVE_LEVEL)
    options.optimized_model_filepath = str(tmp / GRAPH_FILE)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS_FILE)
    # Tensors under 1 KB stay in the graph (ORT's default threshold): shape inference reads small
    # constants there and refuses to load a graph whose constants are all external.
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")


def publish(tmp: Path, prepared: Path, model_file: Path) -> None:
    """Record what ``tmp`` holds and rename it into place; another process's copy wins a race."""
    try:
        record = {
            "graph_bytes": (tmp / GRAPH_FILE).stat().st_size,
            "weights_bytes": (tmp / WEIGHTS_FILE).stat().st_size,
            **_source_stamp(model_file),
        }
        (tmp / RECORD_FILE).write_text(json.dumps(record), encoding="utf-8")
        os.chmod(tmp, 0o755)
        if prepared.exists() and not usable(prepared, model_file):
            discard(prepared)
        with contextlib.suppress(OSError):  # already there: a racing process published first
            os.rename(tmp, prepared)
    except OSError:
        pass  # a copy not saved only means the next process prepares again
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def discard(prepared: Path) -> None:
    """Remove a prepared copy (damaged, or made from another ``model.onnx``); moved aside first so
    a process loading it never sees half a folder."""
    with contextlib.suppress(OSError):
        aside = Path(tempfile.mkdtemp(prefix=".discard.", dir=prepared.parent))
        with contextlib.suppress(OSError):
            os.replace(prepared, aside / "x")
        shutil.rmtree(aside, ignore_errors=True)
