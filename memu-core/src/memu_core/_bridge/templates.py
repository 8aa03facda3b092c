"""Job templates, the retrieval skill and the host guides, resolved through the template resolvers.

:func:`choose` asks every :class:`~memu_core.interfaces.TemplateResolver` registered through
``memu_register_template_resolvers`` (memu-core's ``server``, ``cache`` and ``embedded``, see
:mod:`memu_core._bridge.template_sources`, and any plugin's) and keeps the **newest valid**
answer: the highest version header wins, and between equal versions the lower ``priority``
(asked first). So a stale cached copy never shadows a newer installed package, and a plugin
overrides memu's texts by publishing them at a version at least as high. A resolver that
raises or answers an invalid text is passed over with one note on stderr; the embedded copy is
the floor, so resolution never fails a command.
"""

from __future__ import annotations

from memu_core._bridge import template_text as tt
from memu_core._bridge.template_sources import EmbeddedTemplates, embedded
from memu_core.errors import UsageError

PLACEHOLDERS = tt.PLACEHOLDERS


def candidates(name: str) -> list[tt.Candidate]:
    """Every valid answer for ``name``, in the order the resolvers were asked."""
    from memu_core._plugins.manager import get_plugins

    def note(message: str) -> None:
        from memu_core._bridge import template_fetch  # notes only for a resolver that failed

        template_fetch.note(message)

    found: list[tt.Candidate] = []
    for resolver in get_plugins().resolvers():
        source = str(getattr(resolver, "name", type(resolver).__name__))
        try:
            text = resolver.resolve(name)
        except Exception as exc:  # a broken resolver must not stop a bridging run
            note(f"template {name}: resolver {source!r} failed ({type(exc).__name__}: {exc})")
            continue
        if text is None:
            continue
        try:
            found.append(tt.read(name, source, text))
        except ValueError as exc:
            note(f"template {name}: resolver {source!r} answered an unusable text: {exc}")
    return found


def choose(name: str, *, floor: str | None = None) -> tt.Candidate:
    """The text to use now for ``name``: the newest valid answer (ties: the first asked).

    ``floor`` is the caller's installed copy (a host guide read from the spec's own package),
    counted as the embedded answer when the ``embedded`` resolver has none.
    """
    if not tt.known(name):
        raise UsageError(f"{name!r} is not a template; use one of {', '.join(tt.PLACEHOLDERS)} or docs/<host>/<FILE>")
    found = candidates(name)
    embedded_name = EmbeddedTemplates.name
    if not any(c.source == embedded_name for c in found):
        fallback = floor if floor is not None else EmbeddedTemplates().resolve(name)
        if fallback is not None:
            found.append(_installed(name, fallback))
    if not found:
        raise UsageError(f"no text for template {name!r}: nothing installed answers it")
    # max() keeps the first of equal keys, and candidates come in the order they were asked.
    return max(found, key=lambda c: c.version)


def _installed(name: str, text: str) -> tt.Candidate:
    """The installed copy as a candidate; it came with a package, so it is used even when a
    served copy would be refused (a third-party host's guide may use fewer tokens)."""
    try:
        return tt.read(name, EmbeddedTemplates.name, text)
    except ValueError:
        return tt.Candidate(name, EmbeddedTemplates.name, tt.UNVERSIONED, text)


def resolve(name: str, *, floor: str | None = None) -> str:
    """The body (header removed) of the text :func:`choose` picks for ``name``."""
    return choose(name, floor=floor).body


__all__ = ["PLACEHOLDERS", "candidates", "choose", "embedded", "resolve"]
