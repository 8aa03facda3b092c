"""What a schedule installs, resolved once at install time, and the registry file recording it.

Everything a scheduled run needs is decided here, while the user's shell is still around to
answer: the absolute path of the host binary, of the agent, the prompt and the interval. A
scheduler then starts the run with no ``PATH``, no profile and no working directory, and nothing
it runs looks anything up again.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memu_core import _atomic
from memu_core._hostkit.spec import HostSpec
from memu_core.errors import UsageError

DEFAULT_INTERVAL = 60
"""Minutes between two runs when ``--interval`` is not given (hourly, as memU schedules)."""

DEFAULT_TIMEOUT = 50 * 60
"""Seconds an agent run may take before the runner stops it (less than the default interval)."""

PASSED_PREFIXES = ("MEMU_",)
"""Variables of the installing shell that a scheduled run keeps: memu's own settings (a store or
config named only in the shell would otherwise be lost under cron)."""

PASSED_NAMES = ("HERMES_HOME", "OPENCLAW_STATE_DIR", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME")
"""Host home folders a run must see to find the same sessions the user's shell does."""

NOT_PASSED = frozenset({"MEMU_BRIDGING_RUN", "MEMU_DEBUG", "MEMU_TRACE_PLUGINS"})
"""Per-process switches: a scheduled run sets its own."""


@dataclass(frozen=True)
class Plan:
    """One host's schedule, fully resolved. Written to the registry file as JSON."""

    host: str
    task_name: str
    backend: str
    interval: int
    """Minutes between runs."""
    timeout: int
    """Seconds an agent run may take."""
    base: str
    """The host's working tree (absolute)."""
    binary: str
    """The host binary's absolute path."""
    agent: list[str]
    """The agent's argv with ``{prompt}`` where the prompt goes; ``agent[0]`` is absolute."""
    prompt: str
    """The prompt file (absolute)."""
    wrapper: str
    """The wrapper script the scheduler starts (absolute)."""
    log: str
    """The run log (absolute)."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables the wrapper sets, beyond ``HOME``, the locale and ``PATH``."""
    path: list[str] = field(default_factory=list)
    """The ``PATH`` the wrapper sets: the binary's and the agent's folders, then the system's."""
    wrapper_sha256: str = ""
    """The wrapper's content hash at install time; ``verify`` notices a hand edit."""
    installed_at: str = ""
    crontab_existed: bool = True
    """Whether the user had a crontab before memu's first entry (cron only): uninstall then
    leaves exactly what was there, no crontab included."""

    @property
    def base_path(self) -> Path:
        return Path(self.base)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def registry_file(base: Path, host: str) -> Path:
    """``<tree>/.schedule.<host>.json``: what ``schedule install`` put where."""
    return base / f".schedule.{host}.json"


def state_file(base: Path, host: str) -> Path:
    """``<tree>/.schedule.<host>.last.json``: the last scheduled run's outcome."""
    return base / f".schedule.{host}.last.json"


def load(base: Path, host: str) -> Plan | None:
    """The installed plan of ``host``, or ``None`` when nothing is installed."""
    data = _atomic.read_json(registry_file(base, host), None)
    if not isinstance(data, dict):
        return None
    try:
        return Plan.from_json(data)
    except TypeError:
        return None


def save(plan: Plan) -> None:
    """Record ``plan`` (mode 0600: it may carry variables with credentials)."""
    _atomic.write_json(registry_file(plan.base_path, plan.host), plan.as_json(), mode=0o600)


def check_interval(minutes: int) -> int:
    """``minutes`` if it is a usable interval, else a :class:`UsageError` naming the fix."""
    if minutes < 1:
        raise UsageError(f"--interval {minutes}: give a positive number of minutes (default {DEFAULT_INTERVAL})")
    return minutes


def agent_argv(spec: HostSpec, agent_command: str | None) -> list[str]:
    """The agent's command line, its program resolved to an absolute path now.

    ``agent_command`` (``--agent-command``) replaces the host's own (``claude -p {prompt}``);
    a host with neither (the generic adapter) must be given one.
    """
    command = agent_command or spec.schedule_command
    if not command:
        raise UsageError(
            f"{spec.binary} does not know how to start your agent headless; pass "
            "--agent-command 'your-agent --headless-flag {prompt}'"
        )
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--agent-command {command!r} is not a valid command line ({exc})") from None
    if "{prompt}" not in argv:
        raise UsageError(f"agent command {command!r} has no {{prompt}} argument; add one where the prompt goes")
    found = shutil.which(argv[0])
    if found is None:
        raise UsageError(
            f"the agent command {argv[0]!r} is not on PATH; install it, or put its folder on PATH "
            f"in this shell, or pass --agent-command '/full/path/to/{Path(argv[0]).name} …' and re-run"
        )
    return [os.path.abspath(found), *argv[1:]]


def host_binary(spec: HostSpec) -> str:
    """The absolute path of ``memu-<host>``: the one beside this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / spec.binary
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which(spec.binary)
    if found is None:
        raise UsageError(
            f"{spec.binary} is not installed as a command; reinstall the host plugin "
            f"(pip install memu-core memu-host-{spec.id}) and run schedule install again"
        )
    return os.path.abspath(found)


def passed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The installing shell's variables a scheduled run keeps (see :data:`PASSED_PREFIXES`)."""
    environ = dict(os.environ if environ is None else environ)
    return {
        key: value
        for key, value in sorted(environ.items())
        if (key.startswith(PASSED_PREFIXES) or key in PASSED_NAMES) and key not in NOT_PASSED
    }


def kept_env(names: list[str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables named with ``--keep-env``, from this shell; a name that is unset is refused."""
    environ = dict(os.environ if environ is None else environ)
    missing = [name for name in names if name not in environ]
    if missing:
        raise UsageError(f"--keep-env {missing[0]} is not set in this shell; export it first, then install again")
    return {name: environ[name] for name in names}


def run_path(binary: str, agent: str) -> list[str]:
    """The wrapper's ``PATH``: where the binary and the agent live, then the system folders."""
    system = ["/usr/local/bin", "/usr/bin", "/bin"] if os.name == "posix" else []
    folders: list[str] = []
    for folder in (str(Path(binary).parent), str(Path(agent).parent), *system):
        if folder not in folders:
            folders.append(folder)
    return folders


def now() -> str:
    """UTC now, RFC 3339 with seconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
