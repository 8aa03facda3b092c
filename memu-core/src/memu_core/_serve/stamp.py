"""The handshake: which memu and which configuration a warm server was started for.

Client and server compute the same two strings with stdlib only, cheaply enough for every
turn. A client sends them with each request; a server that computed something else answers
409 (never a result) and exits, so a changed ``config.env``, ``MEMU_*`` environment or an
upgraded memu can never be answered by a server still holding the old store or embedder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memu_core._serve import turn

VERSION_HEADER = "X-Memu-Version"
CONFIG_HEADER = "X-Memu-Config"

# Knobs that change how the server runs, not what it answers: a client with a different idle
# time must not force a restart. MEMU_DB enters in its resolved form instead (below).
_IGNORED = turn.IGNORED_VARIABLES


def memu_version() -> str:
    """``<version>+<install stamp>`` of the installed memu-core (see :func:`.turn.memu_version`)."""
    return turn.memu_version()


def store_in_use(environ: Mapping[str, str] | None = None) -> str:
    """The store ``MEMU_DB`` names, resolved as the settings resolve it (process > file > default).

    A relative path is relative to this process's directory, so two clients giving the same
    relative ``MEMU_DB`` from different folders mean different stores: the raw text cannot tell
    them apart, the resolved one can.
    """
    from memu_core._config import resolve
    from memu_core._config.dsn import normalise_db

    env = os.environ if environ is None else environ
    return normalise_db(env.get("MEMU_DB") or resolve.file_values().get("MEMU_DB") or "")


def config_fingerprint(environ: Mapping[str, str] | None = None) -> str:
    """A short checksum of everything that decides what retrieval answers: the config file's bytes,
    the store in use and every other ``MEMU_*`` variable of the process (except run-time knobs)."""
    env = os.environ if environ is None else environ
    path = turn.config_path()
    return turn.fingerprint(path, turn.read_config(path), store_in_use(env), env)
