"""Importing ONNX Runtime through memu_embed_local.runtime: numpy's OpenBLAS on one thread, the
environment as it was, and a user's own thread setting respected.

Each case runs in a fresh interpreter: OpenBLAS reads its setting once, when numpy loads it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("threadpoolctl")

PROBE = """
import json, os
from memu_embed_local.runtime import import_onnxruntime
import_onnxruntime()
from threadpoolctl import threadpool_info
numpy_blas = [p["num_threads"] for p in threadpool_info()
              if p.get("internal_api") == "openblas" and "numpy" in p.get("filepath", "")]
print(json.dumps({"threads": numpy_blas, "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def _probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True, timeout=120, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_numpy_blas_runs_on_one_thread_and_the_environment_is_put_back() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS starts one thread on a one-core machine anyway")
    got = _probe()
    assert got == {"threads": [1], "env": None}


def test_a_users_thread_setting_is_kept() -> None:
    assert _probe(OPENBLAS_NUM_THREADS="2") == {"threads": [2], "env": "2"}
