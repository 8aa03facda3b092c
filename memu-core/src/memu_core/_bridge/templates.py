"""Job templates and the retrieval texts, resolved through the registered template resolvers.

:func:`resolve` asks every :class:`~memu_core.interfaces.TemplateResolver` registered through
``memu_register_template_resolvers``, by ascending ``priority``, and keeps the first answer that
is valid for the name (every placeholder present, no stray braces). memu-core registers two:

- ``remote`` (priority 500): opt-in. With ``MEMU_TEMPLATE_BASE_URL`` set, ``<url>/<name>.txt``
  is fetched with a short timeout, validated and cached under ``~/.memu/cache/instructions/``;
  when the server fails, the last good copy is used. Without the variable it never answers and
  nothing touches the network, so an upgrade is never shadowed by an older cached text.
- ``embedded`` (priority 1000): the copy shipped in this package; it always answers, last.
"""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from pathlib import Path
from typing import ClassVar

from memu_core._atomic import write_text
from memu_core._layout import instruction_cache
from memu_core.interfaces import TemplateResolver

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
    return instruction_cache(name)


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


class RemoteTemplates(TemplateResolver):
    """``MEMU_TEMPLATE_BASE_URL``'s copy, else its last good cached copy; silent when unset."""

    name: ClassVar[str] = "remote"
    priority: ClassVar[int] = 500

    def resolve(self, name: str) -> str | None:
        """The server's text (cached on success), the cached text, or ``None``."""
        base_url = os.environ.get(BASE_URL_ENV, "").strip()
        if not base_url:
            return None
        text = _fetch(base_url, name)
        if text is not None and valid(name, text):
            with contextlib.suppress(OSError):  # a cache we cannot write only costs a fetch next time
                write_text(_cache_path(name), text)
            return text
        try:
            return _cache_path(name).read_text(encoding="utf-8")
        except OSError:
            return None


class EmbeddedTemplates(TemplateResolver):
    """The texts shipped in memu-core; asked last and always answers."""

    name: ClassVar[str] = "embedded"
    priority: ClassVar[int] = 1000

    def resolve(self, name: str) -> str | None:
        """The embedded text of ``name``."""
        return embedded(name)


def resolve(name: str) -> str:
    """The template text to use now: the first valid answer of the registered resolvers.

    Never raises for a resolver's trouble (a raising or invalid answer passes to the next); the
    embedded copy is the answer of last resort even if no resolver is registered.
    """
    from memu_core._plugins.manager import get_plugins

    for resolver in get_plugins().resolvers():
        try:
            text = resolver.resolve(name)
        except Exception:  # a broken resolver must not stop a bridging run
            continue
        if text is not None and valid(name, text):
            return text
    return embedded(name)
