"""What makes a template text acceptable: its version header and its placeholders.

A published template may start with one header line naming itself and its version::

    <!-- memu-template memory-job v3 -->

The version is one or more dot-separated integers (``3``, ``2025.8.1``) compared as numbers, so
it only ever grows. A text without the header is version 0: it loses to every versioned text.
The header is stripped before the text is used; a signature covers it (see
:mod:`memu_core._bridge.template_sign`), so nobody can raise a version without the key.

Names: the job templates ``memory-job``, ``skill-job``, ``resource-job`` and the retrieval skill
``retrieval-skill`` (``str.format`` placeholders), and the host guides ``docs/<host>/<FILE>``
(``{{token}}`` placeholders). Stdlib only.
"""

from __future__ import annotations

import functools
import re

from memu_core._value import Frozen

Version = tuple[int, ...]

UNVERSIONED: Version = (0,)

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "memory-job": ("input_path", "track_dir"),
    "skill-job": ("input_path", "track_dir", "resource_log"),
    "resource-job": ("verify_command", "resource_file"),
    "retrieval-skill": ("binary",),
}
"""The resolvable templates and the placeholders each must use (memU's names and contract)."""

GUIDE_FILES = ("INSTALL.md", "BRIDGING_TASK.md", "UNINSTALL.md")

GUIDE_REQUIRED = ("task_name", "former_task_names", "all_task_names")
"""Tokens every guide must use: a guide with hard-coded task names would schedule a stale task."""

GUIDE_TOKENS = frozenset(
    {
        *GUIDE_REQUIRED,
        "task_name_pattern",
        "task_doc_name",
        "binary",
        "host_id",
        "display",
        "instruction_path",
        "skills_dir",
        "session_dir",
        "base_dir",
        "schedule_command",
    }
)
"""Every token a guide may use (the keys of :func:`memu_core._bridge.guides.tokens`)."""

_HEADER_START = "<!-- memu-template"
_HEADER_OPEN, _HEADER_CLOSE = _HEADER_START + " ", " -->"
_GUIDE_START = "docs/"


# Compiled on first use: a steady prepare resolves only job templates and the skill, never a
# guide, and each pattern costs 0.2-0.3 ms to compile (ADR 0026's sixth pass).
@functools.cache
def _guide_name() -> re.Pattern[str]:
    return re.compile(r"docs/(?P<host>[a-z0-9][a-z0-9_-]*)/(?P<file>[A-Z_]+\.md)")


@functools.cache
def _token() -> re.Pattern[str]:
    return re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


class Candidate(Frozen):
    """One valid answer for a template: where it came from, its version, and its text."""

    __slots__ = ("body", "name", "source", "version")
    _fields = ("name", "source", "version", "body")
    name: str
    source: str
    version: Version
    body: str
    """The text to use (the header removed)."""

    def __init__(self, name: str, source: str, version: Version, body: str) -> None:
        self._init(name, source, version, body)

    @property
    def version_text(self) -> str:
        """The version as written (``v3``), or ``unversioned``."""
        return "unversioned" if self.version == UNVERSIONED else "v" + ".".join(map(str, self.version))


def guide_name(host_id: str, filename: str) -> str:
    """The template name of a host guide: ``docs/<host>/<FILE>``."""
    return f"docs/{host_id}/{filename}"


def split_guide(name: str) -> tuple[str, str] | None:
    """``(host, FILE)`` of a guide's name, or ``None`` when ``name`` is not a guide."""
    if not name.startswith(_GUIDE_START):  # what the pattern's match needs first: no guide
        return None
    m = _guide_name().fullmatch(name)
    if m is None or m.group("file") not in GUIDE_FILES:
        return None
    return m.group("host"), m.group("file")


def known(name: str) -> bool:
    """Whether ``name`` is a template memu resolves (a job template, the skill, or a guide)."""
    return name in PLACEHOLDERS or split_guide(name) is not None


def header(name: str, version: str) -> str:
    """The header line that marks a text as version ``version`` (digits and dots) of ``name``."""
    return f"<!-- memu-template {name} v{version} -->"


def _is_version(raw: str) -> bool:
    """Whether ``raw`` is decimal digits in dot-separated groups (the pattern ``\\d+(?:\\.\\d+)*``,
    checked without compiling it: every run reads the templates' versions)."""
    return all(part.isdecimal() for part in raw.split("."))


def _header_fields(line: str) -> tuple[str, str] | None:
    """``(name, version)`` of a whole header line ``<!-- memu-template NAME vVERSION -->``, where
    NAME has no whitespace, or ``None``."""
    if len(line) < len(_HEADER_OPEN) + len(_HEADER_CLOSE) or not line.startswith(_HEADER_OPEN):
        return None
    if not line.endswith(_HEADER_CLOSE):
        return None
    name, space, version = line[len(_HEADER_OPEN) : -len(_HEADER_CLOSE)].partition(" ")
    if not space or not name or any(char.isspace() for char in name) or not version.startswith("v"):
        return None
    return (name, version[1:]) if _is_version(version[1:]) else None


def parse_version(text: str) -> Version:
    """``"3"`` or ``"v2025.8.1"`` as a comparable tuple; raise ``ValueError`` otherwise."""
    raw = text.strip().removeprefix("v")
    if not _is_version(raw):
        raise ValueError(f"{text!r} is not a version (digits separated by dots, like 3 or 2025.8.1)")
    return tuple(int(part) for part in raw.split("."))


def read(name: str, source: str, text: str) -> Candidate:
    """Check ``text`` as template ``name``; the candidate, or ``ValueError`` saying what is wrong."""
    version, body = UNVERSIONED, text
    first, newline, rest = text.partition("\n")
    if first.startswith(_HEADER_START):
        fields = _header_fields(first.strip())
        if fields is None:
            raise ValueError(f"unreadable header line {first.strip()[:80]!r}")
        if fields[0] != name:
            raise ValueError(f"its header names {fields[0]!r}, not {name!r}")
        version, body = parse_version(fields[1]), rest if newline else ""
    problem = guide_problem(body) if split_guide(name) else job_problem(name, body)
    if problem:
        raise ValueError(problem)
    return Candidate(name, source, version, body)


def job_problem(name: str, body: str) -> str | None:
    """Why ``body`` cannot stand in for job template or skill ``name``, or ``None``."""
    keys = PLACEHOLDERS.get(name)
    if keys is None:
        return f"{name!r} is not a template name ({', '.join(PLACEHOLDERS)})"
    if not body.strip():
        return "it is empty"
    missing = [k for k in keys if "{" + k + "}" not in body]
    if missing:
        return "it lacks the placeholder(s) " + ", ".join("{" + k + "}" for k in missing)
    try:
        body.format(**dict.fromkeys(keys, ""))
    except Exception as exc:  # KeyError, IndexError, ValueError, AttributeError: all mean "not ours"
        return f"it has a brace memu cannot fill ({type(exc).__name__}: {exc}); double literal braces"
    return None


def guide_problem(body: str) -> str | None:
    """Why ``body`` cannot stand in for a host guide, or ``None``."""
    if not body.strip():
        return "it is empty"
    used = {m.group(1) for m in _token().finditer(body)}
    missing = [t for t in GUIDE_REQUIRED if t not in used]
    if missing:
        return "it lacks the token(s) " + ", ".join("{{" + t + "}}" for t in missing)
    unknown = sorted(used - GUIDE_TOKENS)
    if unknown:
        return "it uses unknown token(s) " + ", ".join("{{" + t + "}}" for t in unknown)
    rest = _token().sub("", body)
    if "{{" in rest or "}}" in rest:
        return "it has a stray {{ or }}"
    return None


__all__ = [
    "GUIDE_FILES",
    "GUIDE_TOKENS",
    "PLACEHOLDERS",
    "UNVERSIONED",
    "Candidate",
    "Version",
    "guide_name",
    "guide_problem",
    "header",
    "job_problem",
    "known",
    "parse_version",
    "read",
    "split_guide",
]
