"""The one-time export of a sentence-transformers model to ONNX (the only step that needs torch).

:func:`ensure_model` returns a loaded :class:`~memu_embed_local.onnx_model.OnnxModel`, exporting
first when the folder is missing or damaged. Exports are safe to race: each runs in a private
temporary folder under an ``flock`` and is renamed into place whole, so two processes exporting
at once leave one valid model and a reader never sees half a file.

``python -m memu_embed_local export`` runs it by hand (``--force`` exports again).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memu_embed_local.onnx_model import (
    EXPORT_FORMAT,
    EXPORT_REQUIREMENT,
    LOCK_FILE,
    META_FILE,
    MODEL_FILE,
    PROBE_MIN_COSINE,
    PROBE_TEXT,
    TOKENIZER_FILE,
    TORCH_INSTALL,
    ModelFileError,
    OnnxModel,
    export_dir,
    max_seq_length,
)

CHECK_TEXTS = (
    PROBE_TEXT,
    "How do we cut a release?",
    "pytest runs the whole suite in parallel with xdist",
    "naïve café, 日本語のテキスト and emoji 🚀",
    "",
    "word " * 400,
)
"""Sentences the export must embed like torch does before it is published (one past 256 tokens)."""


class ExportUnavailable(Exception):
    """Exporting needs torch (and onnx), which are not installed; the message says what to run."""


def export_hint() -> str:
    """The commands that make an export possible."""
    return f"{TORCH_INSTALL} && pip install '{EXPORT_REQUIREMENT}'"


def can_export() -> bool:
    """Whether torch, transformers and onnx are importable (checked without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "onnx"))


def _locked(path: Path) -> Any:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # waits for another exporter: its result is ours too
    return fd


def ensure_model(
    name: str,
    source: str,
    models_root: Path,
    *,
    announce: Callable[[str], None] | None = None,
    force: bool = False,
    light: bool = False,
) -> OnnxModel:
    """The export of ``source`` loaded, exporting (once, under a lock) when it is missing or damaged.

    Raises :class:`ExportUnavailable` when an export is needed and torch is not installed, and
    :class:`ModelFileError` when a fresh export still fails its check. ``light`` is passed to
    :meth:`OnnxModel.load`.
    """
    folder = export_dir(models_root, name, source)
    if not force:
        with contextlib.suppress(ModelFileError):
            return OnnxModel.load(folder, light=light)
    models_root.mkdir(parents=True, exist_ok=True)
    fd = _locked(models_root / f"{folder.name}{LOCK_FILE}")
    try:
        problem = "forced" if force else ""
        if not force:
            try:  # another process may have exported while we waited for the lock
                return OnnxModel.load(folder, light=light)
            except ModelFileError as exc:
                problem = str(exc)
        if not can_export():
            raise ExportUnavailable(
                f"the local embedding model {name} must be exported for ONNX Runtime once ({problem}), "
                f"and exporting needs torch: {export_hint()}"
            )
        if announce is not None:
            what = "exporting" if not folder.exists() else "re-exporting (the old export is damaged)"
            announce(f"{what} {name} for ONNX Runtime into {folder}; this happens once and takes a while")
        _export_into(folder, source)
        return OnnxModel.load(folder, light=light)
    finally:
        os.close(fd)


def _export_into(folder: Path, source: str) -> None:
    """Export to a private temporary folder, check it, then rename it into place."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        dimension, reference = _export_onnx(source, tmp / MODEL_FILE)
        shutil.copyfile(Path(source) / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
        meta = {
            "format": EXPORT_FORMAT,
            "source": str(Path(source).resolve()),
            "dimension": dimension,
            "max_seq_length": max_seq_length(source),
            "model_bytes": (tmp / MODEL_FILE).stat().st_size,
            "probe": reference[0],
            "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
        exported = OnnxModel.load(tmp)  # the probe check
        for text, want in zip(CHECK_TEXTS, reference, strict=True):
            got = exported.encode([text])[0]
            cosine = sum(a * b for a, b in zip(got, want, strict=True))
            if not cosine >= PROBE_MIN_COSINE:  # NaN fails too
                raise ModelFileError(
                    f"the ONNX export of {source} differs from torch on {text[:40]!r} (cosine {cosine:.6f})"
                )
        os.chmod(tmp, 0o755)
        if folder.exists():  # a damaged export: move it aside, then swap in the new one
            stale = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
            os.replace(folder, stale / "x")
            os.replace(tmp, folder)
            shutil.rmtree(stale, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _export_onnx(source: str, target: Path) -> tuple[int, list[list[float]]]:
    """Write ``source``'s transformer + mean pooling + normalisation as one ONNX graph to
    ``target``; return the dimension and torch's vectors for :data:`CHECK_TEXTS`."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    transformer = AutoModel.from_pretrained(source)
    transformer.eval()

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    wrapped = SentenceEmbedding(transformer)
    dummy = torch.ones((2, 8), dtype=torch.long)
    dims = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapped,
            (dummy, dummy, torch.zeros_like(dummy)),
            str(target),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": dims,
                "attention_mask": dims,
                "token_type_ids": dims,
                "embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    reference = _torch_reference(source, wrapped, AutoTokenizer)
    return len(reference[0]), reference


def _torch_reference(source: str, wrapped: Any, tokenizer_cls: Any) -> list[list[float]]:
    """torch's vectors for :data:`CHECK_TEXTS`: sentence-transformers' own when installed (what
    every existing store was built with), else the exported module's."""
    texts = list(CHECK_TEXTS)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        import torch

        tokenizer = tokenizer_cls.from_pretrained(source)
        batch = tokenizer(texts, padding=True, truncation=True, max_length=max_seq_length(source), return_tensors="pt")
        with torch.no_grad():
            out = wrapped(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
        return [[float(x) for x in row] for row in out.tolist()]
    model = SentenceTransformer(source, device="cpu")
    matrix = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    return [[float(x) for x in row] for row in matrix.tolist()]


def main(argv: list[str] | None = None) -> int:
    """``python -m memu_embed_local export [--force]``: export the configured local model now."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "export" or set(args[1:]) - {"--force"}:
        print("usage: python -m memu_embed_local export [--force]", file=sys.stderr)
        return 2
    from memu_embed_local.embedder import LocalEmbedder

    try:
        embedder = LocalEmbedder.from_settings(None)
        model = embedder.onnx_model(force="--force" in args)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{embedder.choice.name}: {model.folder} ({model.dimension} dims)")
    return 0
