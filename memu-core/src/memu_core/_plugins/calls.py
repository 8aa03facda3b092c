"""Calling a hook through pluggy with each plugin isolated and each answer credited.

pluggy's own call (``pm.hook.<name>(...)``) is what runs, so opt-in arguments (an
implementation taking fewer arguments than the spec), ``tryfirst``/``trylast`` and
``MEMU_TRACE_PLUGINS`` all behave as pluggy documents. What pluggy does not do is keep going
when one implementation raises, or say which plugin returned which value; the two helpers here
add that by asking one plugin at a time through ``PluginManager.subset_hook_caller`` when needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pluggy

OnError = Callable[[str, str, Exception], None]
"""Told ``(plugin name, hook name, exception)`` when a plugin fails; may raise to stop."""


def _ordinary(impls: list[pluggy.HookImpl]) -> list[pluggy.HookImpl]:
    # Wrappers contribute no result of their own; pluggy runs them around the others.
    return [i for i in impls if not (i.hookwrapper or i.wrapper)]


def call_each(
    pm: pluggy.PluginManager,
    hook: str,
    kwargs: Mapping[str, object],
    on_error: OnError,
    only: set[str] | None = None,
) -> list[tuple[str, object]]:
    """Call ``hook`` for one plugin at a time, in pluggy's order; ``(plugin, result)`` pairs.

    For hooks with side effects (adding commands): a plugin that raises is reported through
    ``on_error`` and the others still run, and no plugin is ever called twice.
    """
    impls = getattr(pm.hook, hook).get_hookimpls()
    answers: list[tuple[str, object]] = []
    for impl in reversed(_ordinary(impls)):  # pluggy calls the last registered (and tryfirst) first
        if only is not None and impl.plugin_name not in only:
            continue
        single = pm.subset_hook_caller(hook, [i.plugin for i in impls if i.plugin is not impl.plugin])
        try:
            answers.extend((impl.plugin_name, result) for result in single(**kwargs))
        except Exception as exc:
            on_error(impl.plugin_name, hook, exc)
    return answers


def collect(
    pm: pluggy.PluginManager, hook: str, on_error: OnError, only: set[str] | None = None
) -> list[tuple[str, object]]:
    """Every value a registration hook returned, with the plugin that returned it.

    One ``pm.hook.<name>()`` call answers when every implementation returns a list (results come
    back in call order, so each is credited by position). If one raises or returns nothing, each
    plugin is asked on its own instead: registration hooks are pure, so asking twice is harmless.
    """
    caller = getattr(pm.hook, hook)
    impls = list(reversed(_ordinary(caller.get_hookimpls())))
    if only is not None:
        caller = pm.subset_hook_caller(hook, [i.plugin for i in impls if i.plugin_name not in only])
        impls = [i for i in impls if i.plugin_name in only]
    try:
        results: list[object] | None = caller()
    except Exception:
        results = None
    if results is None or len(results) != len(impls):
        answered = call_each(pm, hook, {}, on_error, only)
    else:
        answered = [(impl.plugin_name, result) for impl, result in zip(impls, results, strict=True)]
    values: list[tuple[str, object]] = []
    for plugin_name, result in answered:
        if not isinstance(result, (list, tuple)):
            on_error(plugin_name, hook, TypeError(f"returned {type(result).__name__}, not a list"))
            continue
        values.extend((plugin_name, value) for value in result)
    return values
