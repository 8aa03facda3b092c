"""The host framework: what a host plugin implements and the machinery shared by every host.

A host plugin provides a :class:`TranscriptSource` (where its sessions live, how a record is
classified) and a :class:`HostSpec` (names, paths, guides), registers the spec through
``memu_register_hosts``, and ships a console script that calls :func:`run_host`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memu_core.hosting.spec import HostSpec

if TYPE_CHECKING:
    import typer

    from memu_core.hosting.source import (
        Record,
        RecordKind,
        SessionFile,
        TranscriptRead,
        TranscriptReadError,
        TranscriptSource,
    )

_FROM_SOURCE = frozenset(
    {"Record", "RecordKind", "SessionFile", "TranscriptRead", "TranscriptReadError", "TranscriptSource"}
)


def __getattr__(name: str) -> Any:
    # The source types load on first use: a host binary's per-turn ``retrieve`` imports this
    # package for its HostSpec and never reads a transcript.
    if name in _FROM_SOURCE:
        from memu_core.hosting import source

        return getattr(source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "HostSpec",
    "Record",
    "RecordKind",
    "SessionFile",
    "TranscriptRead",
    "TranscriptReadError",
    "TranscriptSource",
    "build_host_app",
    "run_host",
]


def build_host_app(spec: HostSpec) -> typer.Typer:
    """The typer app of a host binary (see :mod:`memu_core.hosting.cli`)."""
    from memu_core.hosting.cli import build_host_app as build

    return build(spec)


def run_host(spec: HostSpec, argv: list[str] | None = None) -> Any:
    """Run a host binary: parse ``argv`` (default ``sys.argv``), return the exit code."""
    from memu_core.hosting.cli import run_host as run

    return run(spec, argv)
