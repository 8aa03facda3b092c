"""The handshake: which memu and which configuration a warm server was started for.

Client and server compute the same two strings with stdlib only, cheaply enough for every
turn. A client sends them with each request; a server that computed something else answers
409 (never a result) and exits, so a changed ``config.env``, ``MEMU_*`` environment or an
upgraded memu can never be answered by a server still holding the old store or embedder.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Mapping

from memu_core._layout import config_file

VERSION_HEADER = "X-Memu-Version"
CONFIG_HEADER = "X-Memu-Config"

# Knobs that change how the server runs, not what it answers: a client with a different idle
# time must not force a restart. MEMU_DB enters in its resolved form instead (below).
_IGNORED = frozenset({"MEMU_SERVE_AUTOSTART", "MEMU_SERVE_IDLE", "MEMU_DEBUG", "MEMU_TELEMETRY", "MEMU_DB"})

_version_cache: str | None = None


def memu_version() -> str:
    """``<version>+<install stamp>`` of the installed memu-core, without importlib.metadata.

    importlib.metadata costs ~100 ms on the per-turn path; the dist-info directory's name holds
    the version and its mtime changes with every (re)install, which is what "upgraded" means.
    """
    global _version_cache
    if _version_cache is not None:
        return _version_cache
    found = "0+unknown"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("memu_core-") and name.endswith(".dist-info"):
                version = name[len("memu_core-") : -len(".dist-info")]
                try:
                    stamp = os.stat(os.path.join(entry, name)).st_mtime_ns
                except OSError:
                    stamp = 0
                found = f"{version}+{stamp}"
                break
        else:
            continue
        break
    _version_cache = found
    return found


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
    path = config_file()
    try:
        content = path.read_bytes()
    except OSError:
        content = b"<missing>"
    parts = [str(path).encode(), content, f"db={store_in_use(env)}".encode()]
    parts += [
        f"{key}={env[key]}".encode()
        for key in sorted(k for k in env if k.startswith("MEMU_") and k not in _IGNORED)
    ]
    data = b"\0".join(parts)
    # Change detection, not security: two zlib checksums (64 bits) cost nothing to import,
    # where hashlib loads OpenSSL (~20 ms on the per-turn path).
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"
