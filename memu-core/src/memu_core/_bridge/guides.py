"""The host guides (``INSTALL.md``, ``BRIDGING_TASK.md``, ``UNINSTALL.md``), rendered from a closed
set of ``{{token}}``s.

Each guide resolves like a template, as ``docs/<host>/<FILE>``: from ``MEMU_DOCS_BASE_URL`` when
one is configured (cached under ``~/.memu/cache/docs/<host>/``), else the copy shipped inside
the host package (see :mod:`memu_core._bridge.templates`)."""

from __future__ import annotations

import re
from importlib import resources

from memu_core._hostkit.spec import GUIDES, HostSpec
from memu_core._layout import host_tree_shown
from memu_core.errors import UsageError

_TOKEN = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def _ere_escape(text: str) -> str:
    """Escape for ``grep -E`` (``re.escape`` also escapes ``-``, which newer greps warn about)."""
    return re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", text)


def tokens(spec: HostSpec) -> dict[str, str]:
    """The values a guide may use."""
    former = ", ".join(f"`{n}`" for n in spec.former_task_names) or "none"
    return {
        "task_name": spec.task_name,
        "former_task_names": former,
        "all_task_names": ", ".join(f"`{n}`" for n in spec.all_task_names),
        "task_name_pattern": "|".join(_ere_escape(n) for n in spec.all_task_names),
        "task_doc_name": f"create-{spec.task_name}-task",
        "binary": spec.binary,
        "host_id": spec.id,
        "display": spec.display,
        "instruction_path": spec.instruction_path or "(none)",
        "skills_dir": spec.skills_dir or "(none)",
        "session_dir": spec.session_dir or "(given with --session-dir)",
        "base_dir": spec.base_dir or host_tree_shown(spec.id),
        "schedule_command": spec.schedule_command or "(the host's own scheduler)",
    }


def render(spec: HostSpec, text: str) -> str:
    """Fill the tokens; an unknown token is a packaging bug and raises."""
    values = tokens(spec)
    unknown = sorted({m.group(1) for m in _TOKEN.finditer(text)} - values.keys())
    if unknown:
        raise UsageError(
            f"unknown guide token(s) {', '.join(unknown)} in {spec.package}; use one of {', '.join(values)}"
        )
    return _TOKEN.sub(lambda m: values[m.group(1)], text)


def load(spec: HostSpec, topic: str) -> str:
    """The rendered guide for ``topic`` (``install``, ``task`` or ``uninstall``)."""
    if topic not in GUIDES:
        raise UsageError(f"unknown guide {topic!r}; choose one of {', '.join(GUIDES)}")
    from memu_core._bridge import templates
    from memu_core._bridge.template_text import guide_name

    shipped = resources.files(spec.package).joinpath("guides", GUIDES[topic]).read_text(encoding="utf-8")
    return render(spec, templates.resolve(guide_name(spec.id, GUIDES[topic]), floor=shipped))
