"""memU's per-call local flags: ``--db``, ``--provider``, ``--embed-model``, ``--base-url``, ``--api-key``.

memU's ``memu`` takes them on each memory command and hands them to its backend selector as
local overrides of ``MEMU_DB``, ``MEMU_EMBED_PROVIDER``, ``MEMU_EMBED_MODEL``, ``MEMU_BASE_URL``
and ``MEMU_API_KEY``. Here they become those variables in this process's environment, which
outranks ``config.env`` in every reading of the settings (the light one included), so the store
and the embedder are chosen exactly as if the user had exported them for this one command.

The warm server's handshake fingerprints every ``MEMU_*`` variable and the resolved store, so a
server started for another store or embedder refuses the call and it is answered in process;
callers pass ``autostart=False`` so an override never launches a server for its one-off setup.
Like memU, cloud mode ignores them (with a note, where memU says nothing).
"""

from __future__ import annotations

import os
import sys

FLAG_VARIABLES = (
    ("db", "--db", "MEMU_DB"),
    ("provider", "--provider", "MEMU_EMBED_PROVIDER"),
    ("embed_model", "--embed-model", "MEMU_EMBED_MODEL"),
    ("base_url", "--base-url", "MEMU_BASE_URL"),
    ("api_key", "--api-key", "MEMU_API_KEY"),
)
"""``(keyword, flag, variable)`` for each override, in memU's order."""


def apply(**values: str | None) -> bool:
    """Export each given override (an empty value counts as not given); ``True`` when any was.

    Keywords are the first column of :data:`FLAG_VARIABLES`.
    """
    given = [(flag, var, (values.get(key) or "").strip()) for key, flag, var in FLAG_VARIABLES]
    given = [item for item in given if item[2]]
    if not given:
        return False
    from memu_core._config import resolve

    mode = (resolve.lookup("MEMU_MEMORY_MODE") or "local").strip().lower()
    if mode != "local":
        flags = ", ".join(flag for flag, _, _ in given)
        sys.stderr.write(f"note: MEMU_MEMORY_MODE={mode} ignores the local-memory flag(s) {flags}\n")
    for _, var, value in given:
        os.environ[var] = value
    return True
