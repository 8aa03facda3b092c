"""Deprecated: ``memu_core.hosting.instruction`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._bridge.instruction import (
    END_MARKER,
    SKILL_NAME,
    Change,
    begin_marker,
    block,
    install,
    instruction_text,
    patch,
    refresh,
    remove,
    retrieval_body,
    skill_text,
    strip,
    write_file,
)
from memu_core.hosting import warn_moved

__all__ = [
    "END_MARKER",
    "SKILL_NAME",
    "Change",
    "begin_marker",
    "block",
    "install",
    "instruction_text",
    "patch",
    "refresh",
    "remove",
    "retrieval_body",
    "skill_text",
    "strip",
    "write_file",
]

warn_moved(__name__, "memu_core.host (install_instruction, remove_instruction, instruction_marker)")
