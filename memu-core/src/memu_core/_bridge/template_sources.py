"""memu-core's three template resolvers, registered through ``memu_register_template_resolvers``.

- ``server`` (priority 500): with ``MEMU_TEMPLATE_BASE_URL`` set, ``<url>/<name>.txt``; with
  ``MEMU_DOCS_BASE_URL`` set, ``<url>/<host>/<FILE>`` for the guides. Both variables resolve
  like every other (environment, then ``~/.memu/config.env``); empty means off, and it is empty
  by default: memu never asks a server nobody named. A text that validates (and, with
  ``MEMU_TEMPLATE_KEYS`` set, carries a good ``.sig``) is written to the last-good cache.
- ``cache`` (priority 600): that last-good copy, checked again on every read. It answers only
  while its server is configured: unsetting the variable goes back to the wheel's texts.
- ``embedded`` (priority 1000): the texts shipped in memu-core and the guides shipped in each
  host package; always answers.

Which answer is used is decided in :mod:`memu_core._bridge.templates`: the newest version wins,
so an old cached copy never shadows a newer installed package.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import ClassVar

from memu_core._atomic import write_text
from memu_core._bridge import template_text as tt
from memu_core._config import resolve as config
from memu_core._layout import docs_cache, instruction_cache
from memu_core.interfaces import TemplateResolver

TEMPLATE_URL_ENV = "MEMU_TEMPLATE_BASE_URL"
DOCS_URL_ENV = "MEMU_DOCS_BASE_URL"


def base_url(name: str) -> str:
    """The configured server root for template ``name`` (``""`` when off)."""
    env = DOCS_URL_ENV if tt.split_guide(name) else TEMPLATE_URL_ENV
    return (config.lookup(env) or "").strip()


def url_of(base: str, name: str) -> str:
    """Where template ``name`` is published under ``base``."""
    guide = tt.split_guide(name)
    tail = f"{guide[0]}/{guide[1]}" if guide else f"{name}.txt"
    return f"{base.rstrip('/')}/{tail}"


def cache_path(name: str) -> Path:
    """The last-good copy of template ``name`` under ``~/.memu/cache``."""
    guide = tt.split_guide(name)
    return docs_cache(*guide) if guide else instruction_cache(name)


# The fetcher and the signature checker load only where a server is configured: with none (the
# default), a run resolves every template from the installed texts (ADR 0026's sixth pass).
def _sig_path(path: Path) -> Path:
    from memu_core._bridge import template_sign as signing

    return path.with_name(path.name + signing.SIG_SUFFIX)


def _check_signature(data: bytes, signature: str | None) -> None:
    from memu_core._bridge import template_sign as signing

    keys = signing.configured_keys()
    if keys:
        signing.verify(data, signature, keys)


class ServerTemplates(TemplateResolver):
    """The configured server's copy; silent (and offline) when no server is configured."""

    name: ClassVar[str] = "server"
    priority: ClassVar[int] = 500

    def resolve(self, name: str) -> str | None:
        """The served text when it validates (it is cached then), else ``None`` and a note."""
        base = base_url(name)
        if not base or not tt.known(name):
            return None
        from memu_core._bridge import template_fetch as fetch
        from memu_core._bridge import template_sign as signing

        url = url_of(base, name)
        try:
            data = fetch.get(url)
            text = fetch.text(data, url)
            served = tt.read(name, self.name, text)
            signature = self._signature(url) if signing.configured_keys() else None
            _check_signature(data, signature)
        except fetch.Skipped:
            return None
        except (fetch.FetchError, signing.SignatureProblem) as exc:
            fetch.note(f"template {name}: {exc}; using the next source")
            return None
        except ValueError as exc:
            fetch.note(f"template {name}: {url} refused: {exc}; using the next source")
            return None
        self._keep(name, served, text, signature)
        return text

    @staticmethod
    def _signature(url: str) -> str | None:
        from memu_core._bridge import template_fetch as fetch
        from memu_core._bridge import template_sign as signing

        try:
            return fetch.text(fetch.get(url + signing.SIG_SUFFIX), url + signing.SIG_SUFFIX)
        except fetch.NotPublished:
            return None

    @staticmethod
    def _keep(name: str, served: tt.Candidate, text: str, signature: str | None) -> None:
        """Cache the served text unless the cache already holds a newer valid one."""
        path = cache_path(name)
        try:
            cached = tt.read(name, "cache", path.read_text(encoding="utf-8"))
            if cached.version > served.version:
                return  # a rolled-back server does not pull the cache back with it
        except (OSError, ValueError):
            pass
        with contextlib.suppress(OSError):  # a cache we cannot write only costs a fetch next time
            if signature is not None:
                write_text(_sig_path(path), signature)
            else:
                _sig_path(path).unlink(missing_ok=True)
            write_text(path, text)


class CachedTemplates(TemplateResolver):
    """The server's last good copy, re-validated (and re-verified) on every read."""

    name: ClassVar[str] = "cache"
    priority: ClassVar[int] = 600

    def resolve(self, name: str) -> str | None:
        """The cached text while its server is configured and the text still passes, else ``None``."""
        if not base_url(name) or not tt.known(name):
            return None
        from memu_core._bridge import template_fetch as fetch
        from memu_core._bridge import template_sign as signing

        path = cache_path(name)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            text = data.decode("utf-8")
            tt.read(name, self.name, text)
            if signing.configured_keys():
                try:
                    signature: str | None = _sig_path(path).read_text(encoding="utf-8")
                except OSError:
                    signature = None
                _check_signature(data, signature)
        except (ValueError, signing.SignatureProblem) as exc:
            fetch.note(f"template {name}: cached copy {path} refused: {exc}")
            return None
        return text


class EmbeddedTemplates(TemplateResolver):
    """The texts installed with memu: memu-core's templates and each host package's guides."""

    name: ClassVar[str] = "embedded"
    priority: ClassVar[int] = 1000

    def resolve(self, name: str) -> str | None:
        """The installed text of ``name``, or ``None`` for a name memu does not ship."""
        guide = tt.split_guide(name)
        if guide is not None:
            return embedded_guide(*guide)
        if name not in tt.PLACEHOLDERS:
            return None
        return embedded(name)


def embedded(name: str) -> str:
    """A text shipped in memu-core's ``_bridge/templates`` folder."""
    # Beside this module, read as a plain file: memu-core installs unzipped, and importlib.resources
    # (with the zip reader it pulls in) costs every prepare a few milliseconds to find this path.
    return (Path(__file__).parent / "templates" / f"{name}.txt").read_text(encoding="utf-8")


def embedded_guide(host_id: str, filename: str) -> str | None:
    """Guide ``filename`` shipped in host ``host_id``'s package, or ``None``."""
    from importlib import resources

    from memu_core._plugins.manager import get_plugins

    try:
        package = get_plugins().host(host_id).package
        return resources.files(package).joinpath("guides", filename).read_text(encoding="utf-8")
    except Exception:  # an unknown host or a package without the guide: nothing embedded to offer
        return None


__all__ = [
    "DOCS_URL_ENV",
    "TEMPLATE_URL_ENV",
    "CachedTemplates",
    "EmbeddedTemplates",
    "ServerTemplates",
    "base_url",
    "cache_path",
    "embedded",
    "embedded_guide",
    "url_of",
]
