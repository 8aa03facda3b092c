"""A minimal host for exercising the shared machinery without any real host package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memu_core.host import HostSpec, RecordKind, TranscriptSource


class ToySource(TranscriptSource):
    """``{"role": "user"|"assistant"|"tool"|..., "text": ...}`` per line under a root."""

    name: ClassVar[str] = "toy"

    def default_root(self) -> Path:
        return Path.home() / ".toy" / "sessions"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        role = obj.get("role")
        if role in ("user", "assistant"):
            return RecordKind.MESSAGE
        if role == "tool":
            return RecordKind.TOOL
        return RecordKind.OTHER


TOY = HostSpec(
    id="toy",
    display="Toy",
    source="tests_hosting_toy:ToySource",
    package="memu_host_codex",  # borrows real guides for the docs verb
    session_dir="~/.toy/sessions",
    instruction_path="~/.toy/AGENTS.md",
    skills_dir="~/.toy/skills",
    session_id_env="TOY_SESSION_ID",
)


def toy_line(role: str, text: str, ts: str | None = None) -> str:
    """One record line."""
    rec: dict[str, Any] = {"role": role, "text": text}
    if ts:
        rec["timestamp"] = ts
    return json.dumps(rec) + "\n"


def write_session(root: Path, name: str, *lines: str, mtime: float | None = None) -> Path:
    """Append ``lines`` to ``root/name.jsonl`` (created), optionally setting its mtime."""
    import os

    path = root / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(lines)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture(autouse=True)
def _toy_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``TOY.source`` importable by name."""
    import sys
    import types

    mod = types.ModuleType("tests_hosting_toy")
    mod.ToySource = ToySource  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tests_hosting_toy", mod)


@pytest.fixture
def home(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``memu_home`` with the warm server's autostart off: tests must not leave daemons behind."""
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    return memu_home


@pytest.fixture
def sessions_root(home: Path) -> Path:
    root = home / ".toy" / "sessions"
    root.mkdir(parents=True)
    return root
