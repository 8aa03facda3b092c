"""Importing ONNX Runtime cheaply in a short-lived process.

``import onnxruntime`` imports numpy (its extension needs numpy's C API), and numpy loads
OpenBLAS, which starts one worker thread per core the moment it is loaded; those threads spin
for a while before they sleep. A per-turn ``retrieve`` answered in its own process never asks
numpy for a matrix product (ONNX Runtime does the model's arithmetic with its own kernels, on
its own threads), so that start-up is pure cost: measured on the 2-core machine, about 50 ms
of CPU out of a retrieve's 0.5 s (docs/benchmarks.md, issue 17's cold section).

:func:`import_onnxruntime` therefore loads numpy with OpenBLAS held to one thread when numpy is
not loaded yet, and puts the environment back afterwards, so child processes (a warm server
started on the way) and libraries loaded later (faiss's own BLAS) see what the user set.
"""

from __future__ import annotations

import os
import sys
from typing import Any

BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
"""What OpenBLAS reads, once, when it is loaded (``OMP_NUM_THREADS`` is its fallback)."""


def import_onnxruntime() -> Any:
    """``onnxruntime``, imported with numpy's OpenBLAS on one thread if this import loads numpy.

    A user's own ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS`` is respected; numpy already
    loaded (by the caller, or by faiss) is left as it is.
    """
    if "onnxruntime" in sys.modules:
        return sys.modules["onnxruntime"]  # the untyped module: Any, as every caller uses it
    chosen = BLAS_THREADS_ENV in os.environ or "OMP_NUM_THREADS" in os.environ
    if "numpy" in sys.modules or chosen:
        import onnxruntime

        return onnxruntime
    os.environ[BLAS_THREADS_ENV] = "1"
    try:
        import numpy  # noqa: F401  (loaded here, under the setting, rather than inside onnxruntime)
        import onnxruntime
    finally:
        # OpenBLAS has read the value by now; nothing later in this process or its children
        # should inherit a setting the user did not make.
        os.environ.pop(BLAS_THREADS_ENV, None)
    return onnxruntime
