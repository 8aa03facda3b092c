"""Deprecated: ``memu_core.hosting.source_contract`` moved; import from :mod:`memu_core.testing.source_contract`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core.hosting import warn_moved
from memu_core.testing.source_contract import SourceContract, SourceFixture

__all__ = ["SourceContract", "SourceFixture"]

warn_moved(__name__, "memu_core.testing.source_contract")
