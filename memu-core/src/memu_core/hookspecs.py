"""The ``memu_*`` hook specifications.

Registration hooks fire once, when memu first needs the kind of thing they register (a store,
an embedder…), after every plugin has loaded. They return *classes* (or data-only specs) and
must do no I/O and import nothing heavy: instances are built later from validated settings.
Each hook may be implemented by any number of plugins; the results are merged into a keyed
registry, and a name registered twice is an error naming both distributions. Behaviour never
depends on the order plugins were called in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memu_core import hookspec

if TYPE_CHECKING:
    from memu_core.interfaces import (
        AgenticMemoryBackend,
        Embedder,
        EventSink,
        MemoryStore,
        TemplateResolver,
    )


@hookspec
def memu_register_stores() -> list[type[MemoryStore]]:
    """Return :class:`~memu_core.interfaces.MemoryStore` classes, each with a unique ``name``.

    Fires the first time memu opens a local store. ``MEMU_DB`` chooses among them by URL scheme
    (``MemoryStore.url_schemes``); a bare path selects ``sqlite``.
    """
    raise NotImplementedError


@hookspec
def memu_register_embedders() -> list[type[Embedder]]:
    """Return :class:`~memu_core.interfaces.Embedder` classes, each with a unique ``name``.

    Fires the first time memu needs vectors. ``MEMU_EMBED_PROVIDER`` chooses by ``name``.
    """
    raise NotImplementedError


@hookspec
def memu_register_backends() -> list[type[AgenticMemoryBackend]]:
    """Return :class:`~memu_core.interfaces.AgenticMemoryBackend` classes (``local``, ``cloud``…).

    Fires when a command first needs a backend. ``MEMU_MEMORY_MODE`` chooses by ``name``.
    """
    raise NotImplementedError


@hookspec
def memu_register_hosts() -> list[Any]:
    """Return host specs (:class:`memu_core.hosting.HostSpec`), each with a unique ``id``.

    Fires when a host binary starts or ``memu plugins`` lists what is installed. A spec is data
    only; it names its ``TranscriptSource`` class.
    """
    raise NotImplementedError


@hookspec
def memu_register_event_sinks() -> list[type[EventSink]]:
    """Return :class:`~memu_core.interfaces.EventSink` classes, each with a unique ``name``.

    Fires on the first event of a process. Every registered sink receives every event; one sink
    raising never stops the others.
    """
    raise NotImplementedError


@hookspec
def memu_register_template_resolvers() -> list[type[TemplateResolver]]:
    """Return :class:`~memu_core.interfaces.TemplateResolver` classes, each with a unique ``name``.

    Fires the first time a job template, the retrieval skill or a guide is rendered. Resolvers
    are asked in order of their ``priority`` attribute (lower first, default 100); the built-in
    resolver (embedded texts) answers last.
    """
    raise NotImplementedError


@hookspec
def memu_register_commands(app: Any) -> None:
    """Add commands to the ``memu`` CLI. ``app`` is its ``typer.Typer``.

    Fires only when the command line names a command that is not built in, so neither
    ``memu --help`` nor a built-in command imports third-party code. A plugin failing here is
    reported in ``memu plugins``, never fatal.
    """
    raise NotImplementedError
