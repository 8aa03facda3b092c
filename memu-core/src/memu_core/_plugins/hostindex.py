"""Every host memu knows of: the ones installed (their specs, registered through
``memu_register_hosts``, built-in or third-party) and the ones the catalogue lists but this
machine lacks. ``memu-agent detect`` matches the agents it finds against this list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownHost:
    """One host and the distribution that serves it."""

    id: str
    display: str
    distribution: str
    """The distribution that registers it (installed) or would (the catalogue's)."""
    installed: bool
    session_dir: str
    """Its default session folder (``~/.codex/sessions``); empty when it has none."""
    instruction_path: str
    """The instruction file its retrieve block goes into (``~/.claude/CLAUDE.md``)."""
    install_line: str
    """The command that installs its distribution (``pip install memu-host-codex``)."""

    @property
    def plugins_install(self) -> str:
        """The same through memu's own installer: ``memu plugins install <distribution>``."""
        return f"memu plugins install {self.distribution}"

    @property
    def binary(self) -> str:
        """``memu-<id>``."""
        return f"memu-{self.id}"


def known_hosts() -> list[KnownHost]:
    """Installed hosts first (registration order), then the catalogue's hosts not installed.

    Loads every plugin (a host can come from any of them); a plugin that fails to load is left
    out, as ``memu plugins`` reports it.
    """
    from memu_core._plugins.catalogue import CATALOGUE, for_host
    from memu_core._plugins.manager import get_plugins

    registry = get_plugins().hosts()
    found: list[KnownHost] = []
    for host_id in registry:
        spec = registry[host_id]
        dist = registry.distribution(host_id)
        entry = for_host(host_id)
        line = entry.install_line if entry is not None else f"pip install {dist}"
        found.append(KnownHost(host_id, spec.display, dist, True, spec.session_dir, spec.instruction_path, line))
    for entry in CATALOGUE:
        if entry.host and entry.host not in registry:
            display = entry.summary.rstrip(".")
            found.append(
                KnownHost(
                    entry.host,
                    display,
                    entry.distribution,
                    False,
                    entry.session_dir,
                    entry.instruction_path,
                    entry.install_line,
                )
            )
    return found


__all__ = ["KnownHost", "known_hosts"]
