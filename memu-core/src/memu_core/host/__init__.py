"""The host SDK: everything a host plugin imports from memu, in one module.

A host plugin provides a :class:`TranscriptSource` (where its sessions live, how a record is
classified) and a :class:`HostSpec` (names, paths, guides), registers the spec through
``memu_register_hosts``, and ships a console script that calls :func:`run_host`::

    from memu_core.host import HostSpec, RecordKind, TranscriptSource, run_host

The helpers below cover what the built-in hosts needed more than once: walking JSONL folders,
epoch timestamps, recognising bridging runs by their working folder (or, through
:meth:`TranscriptSource.self_sessions`, by the host's own records), reading a host's SQLite
database without writing to it, merging sources, the per-host working tree, atomic writes and
the managed instruction block.

Nothing is imported eagerly, not even :class:`HostSpec`: a host binary's per-turn ``retrieve``
imports this module for :func:`run_host` and must not pay for the rest. Every name loads on
first use. The implementations live in private modules (``memu_core._hostkit``, ``memu_core._bridge``…);
import them from here only, they move without notice.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs the per-turn ``retrieve`` several milliseconds
if TYPE_CHECKING:
    from typing import Any

    import typer

    from memu_core._atomic import read_json
    from memu_core._atomic import write_json as write_json_atomic
    from memu_core._atomic import write_text as write_text_atomic
    from memu_core._bridge.instruction import Change as InstructionChange
    from memu_core._bridge.instruction import begin_marker as instruction_marker
    from memu_core._bridge.instruction import install as install_instruction
    from memu_core._bridge.instruction import remove as remove_instruction
    from memu_core._bridge.selfskip import load as load_self_sessions
    from memu_core._hostkit.composite import CompositeSource
    from memu_core._hostkit.epoch import EpochTimestamps, iso_utc
    from memu_core._hostkit.spec import HostSpec
    from memu_core._hostkit.sqlite_ro import columns as readonly_columns
    from memu_core._hostkit.sqlite_ro import connect_readonly, readonly_uri
    from memu_core._hostkit.sqlite_ro import query as readonly_query
    from memu_core._hostkit.worktree import SkipRunsInTree, cwd_in_tree, escaped_in_tree
    from memu_core._jsonl import MAX_LINE_CHARS, jsonl_files, load_line, newest_first, relative_key, top_level_value
    from memu_core._layout import TRACKS, Layout, hosts_root
    from memu_core._plugins.hostindex import KnownHost, known_hosts
    from memu_core.errors import TranscriptReadError
    from memu_core.interfaces import TranscriptSource
    from memu_core.types import Record, RecordKind, SelfSessions, SessionFile, TranscriptRead

_LAZY: dict[str, tuple[str, str]] = {
    "HostSpec": ("memu_core._hostkit.spec", "HostSpec"),
    # the seam and its records
    "TranscriptSource": ("memu_core.interfaces", "TranscriptSource"),
    # the same classes memu_core.types re-exports, without its other dataclasses
    "Record": ("memu_core._transcript_types", "Record"),
    "RecordKind": ("memu_core._transcript_types", "RecordKind"),
    "SessionFile": ("memu_core._transcript_types", "SessionFile"),
    "SelfSessions": ("memu_core._transcript_types", "SelfSessions"),
    "TranscriptRead": ("memu_core._transcript_types", "TranscriptRead"),
    "TranscriptReadError": ("memu_core.errors", "TranscriptReadError"),
    # reading JSONL logs
    "jsonl_files": ("memu_core._jsonl", "jsonl_files"),
    "newest_first": ("memu_core._jsonl", "newest_first"),
    "relative_key": ("memu_core._jsonl", "relative_key"),
    "top_level_value": ("memu_core._jsonl", "top_level_value"),
    "load_line": ("memu_core._jsonl", "load_line"),
    "MAX_LINE_CHARS": ("memu_core._jsonl", "MAX_LINE_CHARS"),
    # source mixins and helpers
    "EpochTimestamps": ("memu_core._hostkit.epoch", "EpochTimestamps"),
    "iso_utc": ("memu_core._hostkit.epoch", "iso_utc"),
    "SkipRunsInTree": ("memu_core._hostkit.worktree", "SkipRunsInTree"),
    "cwd_in_tree": ("memu_core._hostkit.worktree", "cwd_in_tree"),
    "escaped_in_tree": ("memu_core._hostkit.worktree", "escaped_in_tree"),
    "hosts_root": ("memu_core._layout", "hosts_root"),
    "CompositeSource": ("memu_core._hostkit.composite", "CompositeSource"),
    # a host's own SQLite database, read-only
    "connect_readonly": ("memu_core._hostkit.sqlite_ro", "connect_readonly"),
    "readonly_uri": ("memu_core._hostkit.sqlite_ro", "readonly_uri"),
    "readonly_query": ("memu_core._hostkit.sqlite_ro", "query"),
    "readonly_columns": ("memu_core._hostkit.sqlite_ro", "columns"),
    # the working tree and writing into it
    "Layout": ("memu_core._layout", "Layout"),
    "TRACKS": ("memu_core._layout", "TRACKS"),
    "read_json": ("memu_core._atomic", "read_json"),
    "write_json_atomic": ("memu_core._atomic", "write_json"),
    "write_text_atomic": ("memu_core._atomic", "write_text"),
    "load_self_sessions": ("memu_core._bridge.selfskip", "load"),
    # the managed instruction block
    "InstructionChange": ("memu_core._bridge.instruction", "Change"),
    "install_instruction": ("memu_core._bridge.instruction", "install"),
    "remove_instruction": ("memu_core._bridge.instruction", "remove"),
    "instruction_marker": ("memu_core._bridge.instruction", "begin_marker"),
    # every host memu knows of, installed or only catalogued (``memu-agent detect``)
    "KnownHost": ("memu_core._plugins.hostindex", "KnownHost"),
    "known_hosts": ("memu_core._plugins.hostindex", "known_hosts"),
}

__all__ = [
    "MAX_LINE_CHARS",
    "TRACKS",
    "CompositeSource",
    "EpochTimestamps",
    "HostSpec",
    "InstructionChange",
    "KnownHost",
    "Layout",
    "Record",
    "RecordKind",
    "SelfSessions",
    "SessionFile",
    "SkipRunsInTree",
    "TranscriptRead",
    "TranscriptReadError",
    "TranscriptSource",
    "build_host_app",
    "connect_readonly",
    "cwd_in_tree",
    "escaped_in_tree",
    "hosts_root",
    "install_instruction",
    "instruction_marker",
    "iso_utc",
    "jsonl_files",
    "known_hosts",
    "load_line",
    "load_self_sessions",
    "newest_first",
    "read_json",
    "readonly_columns",
    "readonly_query",
    "readonly_uri",
    "relative_key",
    "remove_instruction",
    "run_host",
    "top_level_value",
    "write_json_atomic",
    "write_text_atomic",
]


def __getattr__(name: str) -> Any:
    # Resolved on first use and cached in the module, so the per-turn path stays light.
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def build_host_app(spec: HostSpec) -> typer.Typer:
    """The typer app of a host binary: the shared verbs, the config commands, the host's extras."""
    from memu_core._cli.host.app import build_host_app as build

    return build(spec)


def run_host(spec: HostSpec | str, argv: list[str] | None = None) -> int:
    """Run a host binary: parse ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    A console script passes its host id (``run_host("codex")``): the spec is looked up among
    those plugins register through ``memu_register_hosts``, loading only the binary's own plugin
    when it has it. Passing the spec itself still works.

    Handled errors (:class:`memu_core.errors.MemuError`) become one line on stderr and their
    exit code. A console script's ``retrieve`` asks the warm server before anything else is
    imported (:mod:`memu_core._serve.turn`: no spec, no plugins, no framework), and runs the full
    command only when that gives no answer.
    """
    import sys

    # Only a ``retrieve`` can be answered by the warm server: every other verb (the scheduled
    # ``prepare`` above all) skips importing the client.
    if isinstance(spec, str) and argv is None and "retrieve" in sys.argv[1:]:
        from memu_core._serve.turn import host_answer

        code = host_answer(spec, sys.argv[1:])
        if code is not None:
            return code
    console = isinstance(spec, str) and argv is None
    if console:
        import gc

        # A console script's start-up (the imports, the host's lookup) makes objects that live
        # until the process exits: the cycle collector would walk them again and again for
        # nothing (about 3 ms of a scheduled prepare), so it is off until the command starts.
        gc.disable()
    from memu_core._cli.host.app import run_host as run

    code = run(spec, argv, started=_command_starts if console else None)
    if console:
        # The process ends right after this, and the interpreter's exit runs full collections
        # over every object the imports and the command made (several ms of a scheduled
        # prepare). Frozen, the collector skips them: the exit still runs the atexit hooks,
        # flushes the streams and frees what the modules held; only objects caught in reference
        # cycles are left to the OS with the rest of the process. memu closes every file it
        # writes before a command returns. A program calling this in-process (argv given, or a
        # spec) keeps its collector as it was.
        gc.freeze()
    return code


def _command_starts() -> None:
    """The console script's start-up is over: what it made is frozen out of the collector's
    sight (it lives until exit), and the collector is back on for the command itself."""
    import gc

    gc.freeze()
    gc.enable()
