"""A per-turn hybrid `retrieve` with no warm server: the local model answers in process without
pydantic, torch or the CLI framework, and builds the embedder exactly as the full settings do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._config import resolve
from memu_core._config.raw import RawSettings, builds_from_raw
from memu_core.errors import ConfigError
from memu_core.settings import load_settings, models_dir

REPO = Path(__file__).resolve().parents[1]
SHARED_MODELS = models_dir()
"""The models folder of the user running the tests (the export is made once and shared)."""
HEAVY = {"typer", "pydantic", "pydantic_settings", "sqlalchemy", "alembic", "torch", "sentence_transformers", "faiss"}
"""faiss is heavy here too: the examples store is far below dense.FAISS_FROM vectors (a numpy scan)."""


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for var in list(os.environ):
        if var.startswith("MEMU_"):
            monkeypatch.delenv(var, raising=False)
    config = tmp_path / "config.env"
    monkeypatch.setenv("MEMU_CONFIG_ENV", str(config))
    resolve.reload()
    yield config
    resolve.reload()


@pytest.mark.parametrize(
    ("env", "file"),
    [
        ({}, ""),
        ({"MEMU_EMBED_BATCH_SIZE": "16", "MEMU_EMBED_RUNTIME": "torch"}, ""),
        ({}, "MEMU_EMBED_BATCH_SIZE=8\nMEMU_EMBED_DEVICE=cpu\nMEMU_EMBED_RUNTIME=onnx\n"),
        ({"MEMU_EMBED_BATCH_SIZE": "", "MEMU_EMBED_RUNTIME": " onnx "}, "MEMU_EMBED_BATCH_SIZE=32\n"),
    ],
)
def test_raw_settings_build_the_local_embedder_the_full_settings_build(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], file: str
) -> None:
    from memu_embed_local import LocalEmbedder

    assert builds_from_raw(LocalEmbedder)
    clean_env.write_text(file)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    resolve.reload()
    raw = LocalEmbedder.from_settings(RawSettings()).describe()
    assert raw == LocalEmbedder.from_settings(load_settings()).describe()


def test_a_bad_raw_value_is_refused_in_one_line(clean_env: Path) -> None:
    from memu_embed_local import LocalEmbedder

    clean_env.write_text("MEMU_EMBED_BATCH_SIZE=many\n")
    resolve.reload()
    with pytest.raises(ConfigError, match="MEMU_EMBED_BATCH_SIZE='many'"):
        LocalEmbedder.from_settings(RawSettings())
    with pytest.raises(ConfigError, match="MEMU_EMBED_BATCH_SIZE"):
        load_settings()


@pytest.mark.parametrize("value", [None, "/srv/memu-models", "~/models-here"])
def test_the_embedder_finds_the_models_folder_where_settings_say(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    from memu_embed_local.model import models_root

    if value is None:
        monkeypatch.delenv("MEMU_MODELS_DIR", raising=False)
    else:
        monkeypatch.setenv("MEMU_MODELS_DIR", value)
    assert models_root() == models_dir()


@pytest.mark.minilm
def test_cold_hybrid_host_retrieve_answers_without_the_framework(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(
        HOME=str(tmp_path),
        HF_HUB_OFFLINE="1",
        MEMU_EMBED_PROVIDER="local",
        MEMU_SERVE_AUTOSTART="0",
        MEMU_MODELS_DIR=str(SHARED_MODELS),
    )
    done = subprocess.run(
        [sys.executable, "-m", "memu_core._cli.main", "commit", "--from-dir", str(REPO / "examples")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    code = (
        "import sys\nfrom memu_core.host import run_host\nfrom memu_host_claude_code.spec import SPEC\n"
        "assert run_host(SPEC, ['retrieve', 'how do we ship a new version']) == 0\n"
        f"print('LOADED', sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})), "
        "'onnxruntime' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "LOADED [] True" in out.stderr, out.stderr[-800:]  # the model ran, nothing heavy around it
    answer = json.loads(out.stdout)
    assert answer["files"][0]["name"] == "release-checklist"
