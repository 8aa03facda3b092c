"""Deprecated: the host SDK is :mod:`memu_core.host` now (one import for everything a host needs).

``memu_core.hosting`` and the submodules hosts imported (``source``, ``spec``, ``epoch``,
``worktree``, ``walk``, ``sqlite_ro``, ``layout``, ``atomic``, ``composite``, ``selfskip``,
``instruction``, ``rehearse``, ``source_contract``) stay importable for one release as thin
re-exports; each warns with a :class:`DeprecationWarning` naming its replacement.
"""

from __future__ import annotations

import warnings
from typing import Any


def warn_moved(old: str, new: str) -> None:
    """Warn that module ``old`` is deprecated in favour of ``new`` (at import of ``old``)."""
    warnings.warn(
        f"{old} is deprecated and goes away in the next release; import from {new} instead",
        DeprecationWarning,
        stacklevel=3,
    )


warn_moved(__name__, "memu_core.host")


def __getattr__(name: str) -> Any:
    # The names of memu_core.host, resolved there (lazily, like the SDK itself).
    import memu_core.host as host

    if name in host.__all__:
        return getattr(host, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
