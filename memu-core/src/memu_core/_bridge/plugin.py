"""memu-core's plugin for the bridging pipeline: the built-in template resolvers.

Registered by name with memu-core's other built-ins (see ``memu_core._plugins.builtin``); it
imports nothing at module level beyond the marker, so registering it costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookimpl

if TYPE_CHECKING:
    from memu_core.interfaces import TemplateResolver


@hookimpl
def memu_register_template_resolvers() -> list[type[TemplateResolver]]:
    """``server`` (the configured template and docs servers), ``cache`` (their last good copies)
    and ``embedded`` (the installed texts; always answers)."""
    from memu_core._bridge.template_sources import CachedTemplates, EmbeddedTemplates, ServerTemplates

    return [ServerTemplates, CachedTemplates, EmbeddedTemplates]
