"""The import and fsync budget of a steady-state ``prepare`` (one session grew since the last
run): what a scheduled bridging run pays every time, in a fresh process (ADR 0026, ADR 0032).

The run must import no plugin but its host's (the template resolvers and the host come from
declared plugins), none of the frameworks, and none of the standard modules it used to pull in
for nothing; it builds no dataclass and imports no ``dataclasses`` (the public types a host
plugin builds, the host spec and the transcript types, are value classes that import it only when
the dataclasses API is used on them); it fsyncs only the staged cursor and the run marker (file and
folder each).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

THIRD_PARTY = ("memu_backend_", "memu_embed_", "memu_telemetry", "memu_host_")
FRAMEWORKS = {"typer", "click", "pydantic", "pydantic_settings", "sqlalchemy", "torch", "litellm", "hyperscan"}
OFF_THE_PATH = {
    "sqlite3",
    "datetime",
    "threading",
    "memu_core.events",
    "memu_core._eventline",
    "memu_core._retrieve_output",
    "memu_core._bridge.template_fetch",
    "memu_core._bridge.template_sign",
    "bisect",
    "memu_core._bridge.resources",
    "memu_core._bridge.runlog",
    "contextvars",
}
"""ADR 0026's sixth pass: SQLite for the mirror's stamp (the store's files vouch for it while no
write moved them), ``threading`` for the progress ticker (``_thread`` does), the event catalogue
for an event nobody hears, the answer formatter for the JSON report, the template fetcher and
signature checker while no template server is configured, ``bisect`` for a batch without a
secret, the commit's own modules, and the context variable of an actor nobody narrows."""
NOT_NEEDED = {
    "secrets",
    "importlib.resources",
    "zipfile",
    "importlib.metadata",
    "memu_core._serve.turn",
    "tempfile",
    "shutil",
    "memu_core.types",
    "memu_core._compose",
    "memu_core._engine.engine",
    "memu_core._stores.sqlite.store",
    "hashlib",
    "base64",
    "binascii",
    "dataclasses",
}
"""Modules the steady path once imported for a random suffix, a packaged text file, entry points
and the warm server's client (which only a ``retrieve`` can use); then, for a temp file's name
and the staging folders' removal, the store and engine dataclasses beside the transcript types,
and the engine and the store to list an unchanged store again for the mirror (ADR 0026's third
amendment); then OpenSSL's hashes (no mirrored file to digest, no Cowork session to name) and
base64 (no template key to read), ADR 0026's fourth amendment; then ``dataclasses`` (ADR 0026's
fifth amendment: the five public dataclasses a host plugin builds became value classes). Each cost
milliseconds."""

PROBE = """
import os, sys
fsyncs = []
_fsync = os.fsync
def counting(fd):
    fsyncs.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else fd)
    _fsync(fd)
os.fsync = counting
from memu_host_claude_code.cli import main
sys.argv = ["memu-claude-code", "prepare", "--session-dir", sys.argv[1], "--base-dir", sys.argv[2], "--json"]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
mods = sorted(m for m in sys.modules if m.startswith(THIRD_PARTY) or m.split(".")[0] in FRAMEWORKS or m in NOT_NEEDED)
print("LOADED", mods, file=sys.stderr)
print("FSYNCS", [os.path.basename(str(f)) for f in fsyncs], file=sys.stderr)
# A class with dataclass fields made (by @dataclass, or by a value class on first use of the
# dataclasses API): none may be, and the value classes must still be ready to make theirs.
built = sorted(
    {
        obj.__qualname__
        for name, module in list(sys.modules.items())
        if name.startswith("memu") and module is not None
        for obj in vars(module).values()
        if isinstance(obj, type) and isinstance(vars(obj).get("__dataclass_fields__"), dict)
    }
)
print("DATACLASSES", built, file=sys.stderr)
from memu_core._hostkit.spec import HostSpec
from memu_core._transcript_types import KeptRead
import dataclasses
print("API", dataclasses.is_dataclass(HostSpec), [f.name for f in dataclasses.fields(KeptRead)][-1], file=sys.stderr)
"""


def _record(i: int, session: str, role: str, text: str) -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": f"u{i}",
            "parentUuid": f"p{i}",
            "sessionId": session,
            "cwd": "/home/u/proj",
            "timestamp": f"2026-09-01T00:00:{i % 60:02d}Z",
            "message": {"role": role, "content": text},
        }
    )


def _session(path: Path, session: str, start: int, count: int) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for i in range(start, start + count):
            role = "user" if i % 2 == 0 else "assistant"
            fh.write(_record(i, session, role, f"turn {i}: the build fails when the fixture races") + "\n")


def _date_back(store: Path) -> None:
    """Set the store's and its log's modification times an hour back."""
    at = time.time_ns() - 3600 * 1_000_000_000
    for path in (store, Path(f"{store}-wal")):
        if path.exists():
            os.utime(path, ns=(at, at))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="names the fsynced files through /proc")
def test_a_steady_prepare_imports_only_its_host_and_fsyncs_only_cursor_and_marker(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(
        HOME=str(tmp_path / "home"),
        MEMU_DB=str(tmp_path / "memu.sqlite3"),
        MEMU_EMBED_PROVIDER="none",
        MEMU_SERVE_AUTOSTART="0",
        MEMU_COWORK_ROOTS="",
    )
    projects, base = tmp_path / "projects" / "-home-u-proj", tmp_path / "base"
    projects.mkdir(parents=True)
    sessions = [f"0000000{n}-0000-4000-8000-00000000000{n}" for n in range(3)]
    for session in sessions:
        _session(projects / f"{session}.jsonl", session, 0, 6)
    binary = [sys.executable, "-c", "from memu_host_claude_code.cli import main; main()"]
    args = ["--session-dir", str(tmp_path / "projects"), "--base-dir", str(base)]
    for round_ in range(3):  # the first mirror writes the tree; the second finds it settled
        if round_:
            _session(projects / f"{sessions[0]}.jsonl", sessions[0], 4 + 2 * round_, 2)
        if round_ == 2:  # a steady run's store was written hours before, this one's just now:
            _date_back(tmp_path / "memu.sqlite3")  # its files vouch for the stamp from this run on
        for verb in (["prepare", *args], ["commit", "--base-dir", str(base)]):
            done = subprocess.run([*binary, *verb], env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr

    _session(projects / f"{sessions[1]}.jsonl", sessions[1], 6, 4)  # one session grew
    not_needed = NOT_NEEDED | OFF_THE_PATH
    code = f"THIRD_PARTY = {THIRD_PARTY!r}\nFRAMEWORKS = {FRAMEWORKS!r}\nNOT_NEEDED = {not_needed!r}\n{PROBE}"
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "projects"), str(base)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["sessions"] == 1
    loaded = next(line for line in out.stderr.splitlines() if line.startswith("LOADED"))
    assert loaded == (
        "LOADED ['memu_host_claude_code', 'memu_host_claude_code.cli', 'memu_host_claude_code.plugin', "
        "'memu_host_claude_code.source', 'memu_host_claude_code.spec']"
    ), loaded
    built = next(line for line in out.stderr.splitlines() if line.startswith("DATACLASSES"))
    assert built == "DATACLASSES []", built
    api = next(line for line in out.stderr.splitlines() if line.startswith("API"))
    assert api == "API True corrupt", api  # the dataclasses API still answers once imported
    fsyncs = next(line for line in out.stderr.splitlines() if line.startswith("FSYNCS"))
    # The staged cursor and the run marker, each a temp file then its folder: the order a crash
    # needs (ADR 0014). The backlog count and an unchanged mirror baseline are not fsynced.
    names = ast.literal_eval(fsyncs.removeprefix("FSYNCS "))
    assert len(names) == 4, names
    assert ".session_manifest.claude-code.json.pending" in names[0] and names[1] == "base"
    assert ".bridging_run.claude-code.json" in names[2] and names[3] == "base"
