"""The reliability suite: memu's real binaries killed, raced and fed hostile input.

``reliability_kit`` (beside this file) holds the shared helpers; this conftest puts it on the
import path. Every test here runs in a bounded form in the normal suite and with larger counts
under ``MEMU_SOAK=1`` (``nox -s soak``): loops through ``reliability_kit.count(bounded, soak)``,
property tests through the hook below, which multiplies their examples.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import pytest  # noqa: E402
import reliability_kit  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under the soak, every property test here runs ``MEMU_SOAK_EXAMPLES_FACTOR`` (default 20)
    times as many examples as it asks for (or as hypothesis' default), so a test that states
    ``@settings(max_examples=15)`` for the bounded form runs 300 in the soak."""
    if not reliability_kit.SOAK:
        return
    try:
        from hypothesis import settings
    except ImportError:  # pragma: no cover - hypothesis is in requirements-dev
        return
    factor = int(os.environ.get("MEMU_SOAK_EXAMPLES_FACTOR", "20"))
    here = Path(__file__).parent
    for item in items:
        test = getattr(item, "obj", None)
        if test is None or not hasattr(test, "hypothesis") or here not in Path(str(item.path)).parents:
            continue
        current = getattr(test, "_hypothesis_internal_use_settings", None) or settings.default
        test._hypothesis_internal_use_settings = settings(current, max_examples=current.max_examples * factor)
