"""``memu_core.hosting`` stays importable for one release: a host written against it still runs,
and every old import warns with the new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

# A third-party host as it was written before the re-cut, driven through a whole cycle.
OLD_HOST = textwrap.dedent(
    """
    import json, sys, types, warnings
    from pathlib import Path

    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from memu_core.hosting import HostSpec, RecordKind, TranscriptSource
        from memu_core.hosting.epoch import EpochTimestamps
        from memu_core.hosting.rehearse import run_cycle
        from memu_core.hosting.source import SessionFile
        from memu_core.hosting.walk import jsonl_files, newest_first

    class OldSource(EpochTimestamps, TranscriptSource):
        name = "oldhost"

        def default_root(self) -> Path:
            return Path.home() / ".oldhost" / "sessions"

        def discover(self) -> list[SessionFile]:
            return newest_first(jsonl_files(self.root()))

        def classify_record(self, obj):
            return RecordKind.MESSAGE if obj.get("role") in ("user", "assistant") else RecordKind.OTHER

    module = types.ModuleType("oldhost_source")
    module.OldSource = OldSource
    sys.modules["oldhost_source"] = module
    spec = HostSpec(
        id="oldhost", display="Old host", source="oldhost_source:OldSource", package="memu_host_codex",
        session_dir="~/.oldhost/sessions",
    )
    root = Path.home() / ".oldhost" / "sessions"
    root.mkdir(parents=True)
    (root / "s1.jsonl").write_text(
        json.dumps({"role": "user", "text": "ship the billing service with make ship", "timestamp": 1767261600000})
        + "\\n",
        encoding="utf-8",
    )
    cycle = run_cycle(
        spec,
        memory=("billing-deploys", "how billing ships", "Billing ships with make ship."),
        skill=("ship-billing", "ship billing", "Run make ship."),
        query="billing ship",
    )
    print(json.dumps({
        "prepared": cycle.prepare_out,
        "files": [f["name"] for f in cycle.retrieved["files"]],
        "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    }))
    """
)


def test_a_host_written_against_memu_core_hosting_still_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(tmp_path), USERPROFILE=str(tmp_path), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    done = subprocess.run(
        [sys.executable, "-c", OLD_HOST], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "prepared 1 session(s)" in report["prepared"]
    assert {"billing-deploys", "ship-billing"} <= set(report["files"])
    messages = [m for _, m in report["warnings"]]
    assert {c for c, _ in report["warnings"]} == {"DeprecationWarning"}
    for old, new in [
        ("memu_core.hosting", "memu_core.host"),
        ("memu_core.hosting.epoch", "memu_core.host"),
        ("memu_core.hosting.source", "memu_core.host"),
        ("memu_core.hosting.walk", "memu_core.host"),
        ("memu_core.hosting.rehearse", "memu_core.testing.rehearse"),
    ]:
        assert any(m.startswith(f"{old} is deprecated") and f"import from {new}" in m for m in messages), (
            old,
            messages,
        )


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("memu_core.hosting", "HostSpec", "memu_core.host"),
        ("memu_core.hosting", "run_host", "memu_core.host"),
        ("memu_core.hosting.source", "TranscriptSource", "memu_core.interfaces"),
        ("memu_core.hosting.source", "RecordKind", "memu_core.types"),
        ("memu_core.hosting.source", "TranscriptReadError", "memu_core.errors"),
        ("memu_core.hosting.spec", "HostSpec", "memu_core.host"),
        ("memu_core.hosting.worktree", "SkipRunsInTree", "memu_core.host"),
        ("memu_core.hosting.sqlite_ro", "query", "memu_core.host:readonly_query"),
        ("memu_core.hosting.atomic", "write_json", "memu_core.host:write_json_atomic"),
        ("memu_core.hosting.composite", "CompositeSource", "memu_core.host"),
        ("memu_core.hosting.layout", "Layout", "memu_core.host"),
        ("memu_core.hosting.selfskip", "load", "memu_core.host:load_self_sessions"),
        ("memu_core.hosting.instruction", "remove", "memu_core.host:remove_instruction"),
        ("memu_core.hosting.source_contract", "SourceContract", "memu_core.testing.source_contract"),
    ],
)
def test_old_names_are_the_new_objects(old: str, name: str, new: str) -> None:
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        value = getattr(importlib.import_module(old), name)
    module, _, attr = new.partition(":")
    assert value is getattr(importlib.import_module(module), attr or name)
