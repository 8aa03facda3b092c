"""Job templates and the retrieval texts: an optional server copy, its last-good cache, or the
copy embedded in this package, in that order.

Remote refresh is opt-in: with ``MEMU_TEMPLATE_BASE_URL`` set, ``<url>/<name>.txt`` is fetched
with a short timeout, validated (every placeholder present, no stray braces) and cached under
``~/.memu/cache/instructions/``. Without it the embedded copy is used and nothing touches the
network, so an upgrade is never shadowed by an older cached text.
"""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from pathlib import Path

from memu_core._atomic import write_text

BASE_URL_ENV = "MEMU_TEMPLATE_BASE_URL"
FETCH_TIMEOUT = 4.0
MAX_BYTES = 64 * 1024

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "memory-job": ("input_path", "track_dir"),
    "skill-job": ("input_path", "track_dir", "resource_log"),
    "resource-job": ("verify_command", "resource_file"),
    "retrieval-body": ("binary",),
}


def embedded(name: str) -> str:
    """The text shipped in this package."""
    return (
        resources.files("memu_core._bridge").joinpath("templates", f"{name}.txt").read_text(encoding="utf-8")
    )


def valid(name: str, text: str) -> bool:
    """Whether ``text`` can stand in for template ``name``: all placeholders, nothing else."""
    keys = PLACEHOLDERS.get(name, ())
    if not text.strip() or any("{" + k + "}" not in text for k in keys):
        return False
    try:
        text.format(**dict.fromkeys(keys, ""))
    except (KeyError, IndexError, ValueError):
        return False
    return True


def _cache_path(name: str) -> Path:
    return Path.home() / ".memu" / "cache" / "instructions" / f"{name}.txt"


def _fetch(base_url: str, name: str) -> str | None:
    import urllib.request

    url = f"{base_url.rstrip('/')}/{name}.txt"
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as resp:
            if resp.status != 200:
                return None
            data: bytes = resp.read(MAX_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def resolve(name: str) -> str:
    """The template text to use now (never raises for network trouble; falls back)."""
    base_url = os.environ.get(BASE_URL_ENV, "").strip()
    if base_url:
        text = _fetch(base_url, name)
        if text is not None and valid(name, text):
            with contextlib.suppress(OSError):  # a cache we cannot write only costs a fetch next time
                write_text(_cache_path(name), text)
            return text
        try:
            cached = _cache_path(name).read_text(encoding="utf-8")
        except OSError:
            cached = ""
        if valid(name, cached):
            return cached
    return embedded(name)
