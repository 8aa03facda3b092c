"""The ``memu_*`` hook specifications.

Implement a hook with ``@memu_core.hookimpl`` in the module your ``memu`` entry point names;
an implementation may take fewer arguments than the spec (pluggy passes only those it names).

Registration hooks (``memu_register_<kind>s``) return *classes* (or data-only host specs). They
must do no I/O and import nothing heavy: memu builds instances later, from validated settings.
Any number of plugins may implement one; the answers merge into a keyed registry, and a name
registered twice is an error naming both distributions. memu-core's own plugin registers its
built-ins through the same hooks, and is asked first: a third-party entry point loads only when
no built-in has what a command looks for, or when the command needs every plugin. Declare the
names your plugin registers in its metadata (an entry point per name in ``memu.stores``,
``memu.embedders``, ``memu.backends``, ``memu.hosts`` or ``memu.template_resolvers``, named
after what it registers, pointing where your ``memu`` entry point does) and memu imports it
only for those names; a plugin that declares nothing loads on every miss. Behaviour never
depends on the order plugins answer in.

Command hooks (``memu_register_commands``, ``memu_register_host_commands``) add commands to a
``typer.Typer``; each plugin is called on its own, so one that raises is reported in
``memu plugins`` and the others still add theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookspec

if TYPE_CHECKING:
    import typer

    from memu_core._hostkit.spec import HostSpec
    from memu_core.interfaces import (
        AgenticMemoryBackend,
        Embedder,
        EventSink,
        MemoryStore,
        TemplateResolver,
    )

EVENTS: dict[str, str] = {
    "memory_search_succeeded": "a host's `retrieve` (and `memu retrieve`) answered: `result_count`, `latency_ms`",
    "memory_search_failed": "`retrieve` failed: `result_count` (0), `latency_ms`",
    "memory_list_succeeded": "`prepare` listed the store for its mirror, or `memu list-files` ran: "
    "`result_count`, `latency_ms`",
    "memory_list_failed": "that listing failed: `result_count` (so far), `latency_ms`",
    "memory_commit_succeeded": "`commit` stored files (hosts and `memu commit`): `recall_file_count`, "
    "`resource_count`, `session_count`, `latency_ms`",
    "memory_commit_failed": "`commit` failed: the same counts",
    "memory_update_started": "a host's `prepare` wrote the run marker (or `MEMU_BRIDGING_RUN` is set)",
    "memory_update_succeeded": "a host's `commit` closed that run: the commit's counts, `duration_ms`",
    "memory_update_failed": "`report error --stage remember`",
    "cli_install_started": "`init` wrote the configuration (`memu` and host binaries)",
    "install_guide_opened": "a host's `docs install`",
    "uninstall_guide_opened": "a host's `docs uninstall`",
    "cli_install_succeeded": "`report install`",
    "cli_install_failed": "`report error --stage install`",
    "cli_uninstall_succeeded": "`report uninstall`",
    "cli_uninstall_failed": "`report error --stage uninstall`",
    "agent_error_reported": "`report error`: `stage`, `detail` (scrubbed, capped; once an hour per report)",
    "cli_error": "a command failed in the CLI shell: `command`, `error_type`, `frames`, `frames_truncated`",
    "cli_events_dropped": "a sink lost events (spool full, disk full): `dropped_count`",
}
"""Every event an :class:`~memu_core.interfaces.EventSink` receives, and when (with which
properties). :data:`memu_core.events.CATALOGUE` holds the allow-list: a property it does not
name never reaches a sink. Properties are counts and durations, never content."""


@hookspec
def memu_register_stores() -> list[type[MemoryStore]]:
    """Register :class:`~memu_core.interfaces.MemoryStore` classes.

    Fires when a command first opens the local store (``retrieve``, ``commit``, ``prepare``…):
    memu-core's stores (``sqlite``, ``memory``) are asked first, and the other plugins only when
    none of them claims ``MEMU_DB``'s URL, or when every store is listed (``memu plugins``).

    Returns the classes, each with a unique ``name`` and the ``url_schemes`` it claims
    (``postgresql://``…); a bare path selects ``sqlite``.
    """
    raise NotImplementedError


@hookspec
def memu_register_embedders() -> list[type[Embedder]]:
    """Register :class:`~memu_core.interfaces.Embedder` classes.

    Fires when memu first chooses the embedder: a ``commit`` or ``retrieve`` whose
    ``MEMU_EMBED_PROVIDER`` is not lexical-only (``none``), ``memu reindex`` and ``doctor``.

    Returns the classes, each with a unique ``name``; ``MEMU_EMBED_PROVIDER`` selects by it.
    An embedder may override ``prepare_to_serve()``: a warm server (``memu serve``, memu-server)
    calls it once before its first request, to build whatever makes each later query cheapest
    (the local model loads its pre-packed session there). The default does nothing.
    """
    raise NotImplementedError


@hookspec
def memu_register_backends() -> list[type[AgenticMemoryBackend]]:
    """Register :class:`~memu_core.interfaces.AgenticMemoryBackend` classes (``local``, ``cloud``…).

    Fires when a command first needs a backend (``retrieve``, ``commit``, ``prepare``,
    ``list-files``…); the built-in ``local`` backend answers without loading other plugins.

    Returns the classes, each with a unique ``name``; ``MEMU_MEMORY_MODE`` (``local`` or
    ``cloud``) selects by it.
    """
    raise NotImplementedError


@hookspec
def memu_register_hosts() -> list[HostSpec]:
    """Register hosts as :class:`~memu_core.host.HostSpec` data (no I/O, nothing heavy).

    Fires when a host binary starts: it passes its host id to :func:`memu_core.host.run_host`,
    which looks the spec up here (the binary's own plugin answers; the others load only if it
    does not), and when ``memu plugins`` lists the installed hosts. The spec names the host's
    ``TranscriptSource``, which the bridging pipeline builds from it.

    Returns the specs, each with a unique ``id``.
    """
    raise NotImplementedError


@hookspec
def memu_register_event_sinks() -> list[type[EventSink]]:
    """Register :class:`~memu_core.interfaces.EventSink` classes.

    Fires on a process's first event. Events are emitted at the points memU records them:
    ``init``, a host's ``docs install|uninstall``, ``prepare``, ``commit``, ``retrieve`` and
    ``report``, ``memu list-files``, and any failed command (the table below lists them).
    Nothing is emitted when the user opted out (``MEMU_TELEMETRY=0`` or ``DO_NOT_TRACK=1``).
    So that the per-turn ``retrieve`` never imports every plugin to find out whether one
    listens, memu asks only plugins that declare this hook: an entry point of the same name in
    the group ``memu.event_sinks`` (in-process plugins need not; ``memu plugins`` flags a plugin
    that implements it undeclared).

    Returns the classes, each with a unique ``name`` and a constructor taking no argument.
    memu builds each once per process and gives every instance every event
    (:class:`memu_core.types.Event`); a sink that raises is skipped, the others still receive it.
    """
    raise NotImplementedError


@hookspec
def memu_register_template_resolvers() -> list[type[TemplateResolver]]:
    """Register :class:`~memu_core.interfaces.TemplateResolver` classes.

    Fires the first time a process needs a job template, the retrieval skill or a host guide: a
    host's ``prepare`` (the job files, and the retrieval procedure it refreshes),
    ``install-instruction``, ``docs`` and ``memu templates list``. Every plugin is loaded for it.

    Returns the classes, each with a unique ``name``, a ``priority`` (lower is asked first;
    default 100) and a constructor taking no argument. Every resolver is asked; among the valid
    answers the newest version header wins, and between equal versions the one asked first
    (see docs/templates.md). memu-core registers ``server`` (``MEMU_TEMPLATE_BASE_URL`` and
    ``MEMU_DOCS_BASE_URL``, priority 500), ``cache`` (their last good copies, 600) and
    ``embedded`` (the installed texts, 1000), which always answers.
    """
    raise NotImplementedError


@hookspec
def memu_register_commands(app: typer.Typer) -> None:
    """Add commands to the ``memu`` CLI.

    ``app`` is the ``memu`` ``typer.Typer``. Fires each time the ``memu`` app is built: for
    memu-core's own plugin, which adds the built-in commands this way, and for every other
    plugin only when the command line names a command that is not built in (so neither
    ``memu --help`` nor a built-in command imports third-party code; ``memu plugins`` lists what
    plugins add). Built-ins are added first (``tryfirst``).

    Returns nothing.
    """
    raise NotImplementedError


@hookspec
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """Add commands to a host binary (``memu-<host>``).

    ``spec`` is the host being run and ``app`` its ``typer.Typer``. Fires each time a host
    binary builds its CLI (every verb but the per-turn ``retrieve`` and the plain ``prepare``
    and ``commit``): memu-core adds the shared verbs, the host's own plugin its extras (check
    ``spec.id``: ``detect``, ``cowork``, ``register-cron-job``…), other plugins only when the
    command line names a verb neither of those two adds.

    Returns nothing.
    """
    raise NotImplementedError
