"""The local model through ONNX Runtime and the ``tokenizers`` library: no torch per process.

A sentence-transformers model made of a transformer, mean pooling and L2 normalisation (the
layout of all-MiniLM-L6-v2) is exported once to ``~/.memu/models/<name>-<key>/`` (see
:mod:`memu_embed_local.export`) and loaded from there by every later process. The folder holds:

- ``model.onnx``: the transformer with the pooling and the normalisation in the graph, so one
  ``run`` returns the sentence vectors;
- ``tokenizer.json``: the model's own fast tokenizer, copied;
- ``meta.json``: what was exported from where, the file's size, and a probe: the vector torch
  computed for a fixed sentence. Loading embeds the probe again and compares, so a damaged
  file is caught (and exported again) instead of silently answering in another space.

The key in the folder name is derived from the source's files (paths, sizes, modification
times) and the export format, so another model, an upgraded weights package or a new export
format gets a folder of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXPORT_FORMAT = 1
"""Bumped whenever the exported graph changes shape or meaning; old folders are then ignored."""
PROBE_TEXT = "memu checks its exported embedding model with this sentence."
PROBE_MIN_COSINE = 0.9999
"""How close the probe must come to torch's vector (the tests hold every sentence to this)."""
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "meta.json"
LOCK_FILE = ".export.lock"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_KEY_FILES = (*_WEIGHT_FILES, "config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json")
TORCH_INSTALL = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
EXPORT_REQUIREMENT = "memu-embed-local[torch]"


class ModelFileError(Exception):
    """The exported model is missing, unreadable or fails its probe (export it again)."""


def supported(source: str) -> bool:
    """Whether ``source`` is a local sentence-transformers folder ONNX can run: transformer, mean
    pooling, normalisation, and a fast tokenizer. Reads a few small JSON files only."""
    folder = Path(source)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
        if kinds != ["Transformer", "Pooling", "Normalize"]:
            return False
        pooling_dir = folder / str(modules[1].get("path") or "1_Pooling")
        pooling = json.loads((pooling_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        return False
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
    has_weights = any((folder / name).is_file() for name in _WEIGHT_FILES)
    return modes == {"pooling_mode_mean_tokens"} and has_weights and (folder / TOKENIZER_FILE).is_file()


def max_seq_length(source: str) -> int:
    """The truncation length sentence-transformers uses for ``source`` (256 for MiniLM)."""
    try:
        config = json.loads((Path(source) / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def cache_key(source: str) -> str:
    """12 hex digits naming the export of ``source``: its files' paths, sizes and mtimes."""
    folder = Path(source).resolve()
    parts = [f"format={EXPORT_FORMAT}", str(folder)]
    for name in _KEY_FILES:
        with contextlib.suppress(OSError):
            info = (folder / name).stat()
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def export_dir(models_root: Path, name: str, source: str) -> Path:
    """Where the export of model ``name`` from ``source`` lives under ``models_root``."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in Path(name).name or "model").strip(".-")
    return models_root / f"{slug or 'model'}-{cache_key(source)}"


def _why(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


def _options(onnxruntime: Any, light: bool) -> Any:
    options = onnxruntime.SessionOptions()
    # Without the arena, memory taken for a large batch goes back to the allocator afterwards,
    # so a warm server returns near its idle size after a big commit.
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    if light:
        # A query is a dozen tokens: a second thread only adds start-up and, on a busy machine,
        # waiting for a core; pre-packing the weights (a copy of all of them, ~0.15 s) pays off
        # only over many batches.
        options.intra_op_num_threads = 1
        options.add_session_config_entry("session.disable_prepacking", "1")
    else:
        options.intra_op_num_threads = batch_threads()
        # Idle pool threads sleep instead of spinning: on a shared machine a spinning thread burns
        # a core another process needs (measured under load: 20-40% more CPU for the same batch, and slower).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def _session(onnxruntime: Any, path: Path, options: Any, folder: Path) -> Any:
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ModelFileError(f"the exported model in {folder} does not load: {_why(exc)}") from exc


MAX_BATCH_THREADS = 4
"""More intra-op threads than this gain little for a 6-layer, 384-wide model."""


def batch_threads() -> int:
    """Intra-op threads of a full (batch) session: the cores this process may run on, at most
    :data:`MAX_BATCH_THREADS`.

    A commit's batch is the one place the model's arithmetic is the whole cost (about 10 ms of
    CPU per 25-token text), so it uses every core. ``OMP_NUM_THREADS`` is not consulted: the warm
    server sets it to 1 for torch and faiss, whose OpenMP threads spin, and ONNX Runtime's pool
    here does not spin. A query's light session keeps one thread.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_BATCH_THREADS, cores))


@dataclass(slots=True)
class OnnxModel:
    """A loaded export: tokenizer and inference session. ``encode`` is thread-safe."""

    folder: Path
    session: Any
    tokenizer: Any
    dimension: int
    _lock: threading.Lock

    @classmethod
    def load(cls, folder: Path, *, light: bool = False) -> OnnxModel:
        """Load and check the export in ``folder``; :class:`ModelFileError` when it is missing,
        damaged or answers the probe differently from torch.

        The prepared copy (:mod:`memu_embed_local.prepared`) is loaded when there is a good one,
        else the export itself, saving a prepared copy on the way. ``light`` builds a session for a
        few texts at a time (a query): one thread and no weight pre-packing, which saves most of
        the session's start-up and costs speed only on large batches.
        """
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            model_file = folder / MODEL_FILE
            if meta.get("format") != EXPORT_FORMAT:
                raise ModelFileError(f"{folder} holds export format {meta.get('format')}, not {EXPORT_FORMAT}")
            if model_file.stat().st_size != meta["model_bytes"]:
                size = model_file.stat().st_size
                raise ModelFileError(f"{model_file} is {size} bytes, expected {meta['model_bytes']}")
            probe = [float(x) for x in meta["probe"]]
            dimension = int(meta["dimension"])
        except FileNotFoundError as exc:
            raise ModelFileError(f"no exported model in {folder} ({Path(exc.filename or '').name} missing)") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(f"the exported model in {folder} is unreadable: {exc}") from exc
        from tokenizers import Tokenizer

        from memu_embed_local import prepared
        from memu_embed_local.runtime import import_onnxruntime

        onnxruntime = import_onnxruntime()

        try:
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        except Exception as exc:
            raise ModelFileError(f"the exported model in {folder} does not load: {_why(exc)}") from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(int(meta.get("max_seq_length") or 256))

        def build(session: Any) -> OnnxModel:
            return cls(folder=folder, session=session, tokenizer=tokenizer, dimension=dimension, _lock=threading.Lock())

        ready = prepared.prepared_dir(folder, onnxruntime.__version__)
        if prepared.usable(ready, model_file):
            options = _options(onnxruntime, light)
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            with contextlib.suppress(ModelFileError):
                model = build(_session(onnxruntime, ready / prepared.GRAPH_FILE, options, folder))
                model._check(probe)
                return model
            prepared.discard(ready)  # damaged or disagreeing: fall back to the export and prepare again
        tmp = prepared.start(folder)
        options = _options(onnxruntime, light)
        if tmp is not None:
            prepared.save_options(options, tmp)
        try:
            model = build(_session(onnxruntime, model_file, options, folder))
            model._check(probe)
        except BaseException:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        if tmp is not None:
            prepared.publish(tmp, ready, model_file)
        return model

    def _check(self, probe: list[float]) -> None:
        got = self.encode([PROBE_TEXT])[0]
        cosine = sum(a * b for a, b in zip(got, probe, strict=False)) if len(got) == len(probe) else 0.0
        if not cosine >= PROBE_MIN_COSINE:  # "not >=": damaged weights can give NaN, which compares False
            raise ModelFileError(
                f"the exported model in {self.folder} fails its probe (cosine {cosine:.6f} to torch's vector)"
            )

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        """One L2-normalised vector per text, in order (float32 values as Python floats).

        Texts are tokenised once, sorted by length and run in batches padded to their longest
        member, as sentence-transformers does; padding never changes a vector (mean pooling is
        masked), so batching only decides speed.
        """
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids))
        out: list[list[float]] = [[] for _ in encodings]
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            types = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = 1
                types[row, :n] = enc.type_ids
            with self._lock:  # one run at a time: ORT's own threads already use the cores
                (matrix,) = self.session.run(
                    ["embedding"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
                )
            for row, vector in zip(chunk, matrix.astype("float64").tolist(), strict=True):
                out[row] = vector
        return out
