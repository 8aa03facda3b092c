"""The ONNX runtime: the same vectors as torch, no torch per process, and its faults.

Real components only: the packaged all-MiniLM-L6-v2, a real export with torch, ONNX Runtime, and
real processes racing to export. The export is made once into the user's models folder and shared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from memu_embed_local import LocalEmbedder
from memu_embed_local.onnx_model import META_FILE, MODEL_FILE, ModelFileError, OnnxModel

from memu_core.errors import ConfigError
from memu_core.settings import models_dir

pytestmark = pytest.mark.minilm

SHARED_MODELS = models_dir()
"""The models folder of the user running the tests, read before any fixture moves HOME."""

SENTENCES = [
    "How do I run the test suite?",
    "Use pytest to execute all the tests.",
    "My grandmother bakes bread on Sundays.",
    "the deploy script needs AWS credentials in ~/.aws/config",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "git rebase -i HEAD~3 && git push --force-with-lease",
    "déjà vu: naïve café au lait, 東京の天気",
    "",
    "a",
    "release " * 300,
    "What did Melanie paint last year? A lake at sunrise.",
    "def embed(texts: list[str]) -> list[list[float]]: ...",
]
MIN_COSINE = 0.9999
MAX_ABS_DIFF = 1e-4


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    for var in list(os.environ):
        if var.startswith("MEMU_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMU_MODELS_DIR", str(SHARED_MODELS))
    yield


@pytest.fixture(scope="module")
def exported() -> Path:
    """The shared export's folder (exported now if this machine has none yet)."""
    os.environ["MEMU_MODELS_DIR"] = str(SHARED_MODELS)
    from memu_embed_local import embedder as module

    # A model loaded earlier in this process under another name (MEMU_EMBED_MODEL=<path>) shares
    # the cache key and would hand back that name's folder, not the one the subprocesses use.
    module._models.clear()
    embedder = LocalEmbedder()
    assert embedder.runtime == "onnx"
    folder: Path = embedder.onnx_model().folder
    return folder


def _env(models: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HF_HUB_OFFLINE="1", MEMU_MODELS_DIR=str(models), **extra)
    return env


def test_onnx_vectors_match_torch_on_fixed_sentences(exported: Path) -> None:
    onnx = LocalEmbedder(runtime="onnx")
    torch = LocalEmbedder(runtime="torch")
    got, want = onnx.embed(SENTENCES), torch.embed(SENTENCES)
    for text, a, b in zip(SENTENCES, got, want, strict=True):
        cosine = sum(x * y for x, y in zip(a, b, strict=True))
        worst = max(abs(x - y) for x, y in zip(a, b, strict=True))
        assert cosine >= MIN_COSINE, (text[:40], cosine)
        assert worst <= MAX_ABS_DIFF, (text[:40], worst)
    # Same space, so the same fingerprint: every store built with torch stays valid.
    assert onnx.fingerprint == torch.fingerprint
    assert (onnx.fingerprint.provider, onnx.fingerprint.dimension) == ("local", 384)
    # Batching and order never change a vector.
    assert onnx.embed(list(reversed(SENTENCES))) == list(reversed(got))


def test_default_runtime_is_onnx_and_a_process_never_imports_torch(exported: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        from memu_embed_local import LocalEmbedder
        e = LocalEmbedder()
        v = e.embed(["how do we cut a release"])
        print(e.describe()["runtime"], len(v[0]), "torch" in sys.modules, "sentence_transformers" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(SHARED_MODELS), capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["onnx", "384", "False", "False"], out.stderr


def test_no_torch_and_no_export_names_the_cpu_wheel(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        from memu_embed_local import LocalEmbedder
        from memu_core.errors import ConfigError
        print("available", LocalEmbedder.available(None))
        try:
            LocalEmbedder().embed(["x"])
        except ConfigError as exc:
            print("error", exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path / "models"), capture_output=True, text=True, timeout=300
    )
    assert "available False" in out.stdout, out.stderr
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in out.stdout
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").glob("*/model.onnx"))


def test_a_wrong_probe_is_refused(exported: Path, tmp_path: Path) -> None:
    copy = tmp_path / exported.name
    shutil.copytree(exported, copy)
    meta = json.loads((copy / META_FILE).read_text())
    meta["probe"] = [-x for x in meta["probe"]]
    (copy / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="probe"):
        OnnxModel.load(copy)
    assert OnnxModel.load(exported).dimension == 384


def test_runtime_setting_is_checked() -> None:
    with pytest.raises(ConfigError, match="MEMU_EMBED_RUNTIME"):
        LocalEmbedder(runtime="tensorflow")


def test_two_processes_repair_a_damaged_export_once(exported: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    damaged = models / exported.name
    shutil.copytree(exported, damaged)
    size = (damaged / MODEL_FILE).stat().st_size
    with open(damaged / MODEL_FILE, "r+b") as f:  # same size, garbage in the last layers' weights
        f.seek(size - 3_000_000)
        f.write(os.urandom(1_000_000))
    code = "from memu_embed_local import LocalEmbedder; print(len(LocalEmbedder().embed(['hello world'])[0]))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=_env(models), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert [o[0].strip() for o in outs] == ["384", "384"]
    announced = sum(o[1].count("exporting") for o in outs)
    assert announced == 1, outs  # the second process waited for the lock and used the result
    assert OnnxModel.load(damaged).dimension == 384
    assert [p.name for p in models.iterdir() if p.is_dir()] == [exported.name]  # no temp folder left


def _prepared_of(folder: Path) -> Path:
    import onnxruntime
    from memu_embed_local.prepared import prepared_dir

    return prepared_dir(folder, onnxruntime.__version__)


def _unprepared_vectors(folder: Path, texts: list[str]) -> list[list[float]]:
    """The vectors of a session built from the export's own ``model.onnx`` (the path before the
    prepared copy), with ORT's default optimisation."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    session = onnxruntime.InferenceSession(str(folder / MODEL_FILE), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    out = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        out.append([float(x) for x in session.run(["embedding"], feeds)[0][0]])
    return out


def _close(got: list[list[float]], want: list[list[float]]) -> None:
    for a, b in zip(got, want, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) <= MAX_ABS_DIFF


def test_the_prepared_copy_answers_like_the_export(exported: Path) -> None:
    from memu_embed_local import prepared

    OnnxModel.load(exported, light=True)  # prepares the copy if this export has none yet
    ready = _prepared_of(exported)
    assert prepared.usable(ready, exported / MODEL_FILE)
    assert (ready / prepared.GRAPH_FILE).stat().st_size < 1_000_000  # the weights sit in model.data
    assert not list(exported.glob(".prepare.*"))  # no temporary folder left
    want = _unprepared_vectors(exported, SENTENCES)
    _close(OnnxModel.load(exported, light=True).encode(SENTENCES), want)
    _close(OnnxModel.load(exported).encode(SENTENCES), want)


def test_a_damaged_prepared_copy_is_replaced(exported: Path, tmp_path: Path) -> None:
    from memu_embed_local import prepared

    OnnxModel.load(exported, light=True)
    copy = tmp_path / exported.name
    copy.mkdir()
    for name in (MODEL_FILE, META_FILE, "tokenizer.json"):  # linked: read only, never written here
        os.link(exported / name, copy / name)
    shutil.copytree(_prepared_of(exported), _prepared_of(copy))
    weights = _prepared_of(copy) / prepared.WEIGHTS_FILE
    size = weights.stat().st_size
    with open(weights, "r+b") as f:  # same size, so only the probe can tell
        f.seek(size // 2)
        f.write(os.urandom(2_000_000))
    assert prepared.usable(_prepared_of(copy), copy / MODEL_FILE)
    got = OnnxModel.load(copy, light=True).encode(SENTENCES[:3])
    _close(got, OnnxModel.load(exported, light=True).encode(SENTENCES[:3]))
    assert prepared.usable(_prepared_of(copy), copy / MODEL_FILE)  # written again from the export
    # A copy prepared from another model.onnx (the export replaced since) is not used.
    record = _prepared_of(copy) / prepared.RECORD_FILE
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "source_mtime_ns": data["source_mtime_ns"] + 1}))
    assert not prepared.usable(_prepared_of(copy), copy / MODEL_FILE)


def test_a_query_loads_the_light_session_and_a_batch_the_full_one(exported: Path) -> None:
    code = textwrap.dedent(
        """
        from memu_embed_local import LocalEmbedder
        from memu_embed_local import embedder as module
        e = LocalEmbedder()
        e.embed(["how do we cut a release"])
        print(sorted(kind for _, kind in module._models))
        e.embed(["text %d" % i for i in range(module.LIGHT_MAX_TEXTS + 1)])
        e.embed(["how do we cut a release"])
        print(sorted(kind for _, kind in module._models))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(SHARED_MODELS), capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.splitlines() == ["['onnx-light']", "['onnx']"], out.stderr


def test_a_warm_server_answers_its_first_query_on_the_full_session(exported: Path, tmp_path: Path) -> None:
    # A one-off process loads the light session for a query; a warm server prepares the full one
    # (pre-packed weights, cheaper per query) before its first request, and never loads both.
    code = textwrap.dedent(
        f"""
        import os
        os.environ["MEMU_DB"] = {str(tmp_path / "store.sqlite3")!r}
        from memu_core import _compose
        from memu_embed_local import embedder as module
        backend = _compose.serving_backend(local=True)
        print(sorted(kind for _, kind in module._models))
        backend.progressive_retrieve("how do we cut a release", None)
        print(sorted(kind for _, kind in module._models))
        """
    )
    env = {**_env(SHARED_MODELS), "HOME": str(tmp_path), "MEMU_EMBED_PROVIDER": "local"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.splitlines() == ["['onnx']", "['onnx']"], out.stderr


def test_a_batch_session_uses_every_core_without_spinning_even_in_the_warm_server(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The warm server sets OMP_NUM_THREADS=1 (for torch and faiss); a commit's batch still runs on
    # every core, its pool threads sleeping between runs, with the vectors of the one-thread session.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    full = OnnxModel.load(exported)
    options = full.session.get_session_options()
    assert options.intra_op_num_threads == min(4, len(os.sched_getaffinity(0)))
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    texts = [f"Step {i} of the release: run tool-{i} before deploying." for i in range(40)] + SENTENCES[:9]
    _close(full.encode(texts), OnnxModel.load(exported, light=True).encode(texts))
