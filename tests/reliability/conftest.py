"""The reliability suite: memu's real binaries killed, raced and fed hostile input.

``reliability_kit`` (beside this file) holds the shared helpers; this conftest puts it on the
import path. Every test here runs in a bounded form in the normal suite and with larger counts
under ``MEMU_SOAK=1`` (``nox -s soak``): kill loops through ``reliability_kit.count``, property
tests through the ``memu-soak`` hypothesis profile loaded here, which multiplies the examples.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import reliability_kit  # noqa: E402

if reliability_kit.SOAK:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is in requirements-dev
        pass
    else:
        settings.register_profile(
            "memu-soak",
            deadline=None,
            max_examples=int(os.environ.get("MEMU_SOAK_EXAMPLES", "2000")),
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        settings.load_profile("memu-soak")
