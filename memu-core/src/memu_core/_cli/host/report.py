"""``<binary> report install|uninstall|error|flush``: what an agent reports from a guide.

The guides and the bridging prompt call these where memU's do (after installing, before
uninstalling, and in the ON FAILURE step). They always exit 0: with telemetry off (the default)
they say so and record nothing, and a report that cannot be delivered stays in the spool.
"""

from __future__ import annotations

import re
import sys

from memu_core._hostkit.spec import HostSpec

OFF = "reporting is off; nothing recorded"

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
# An absolute, home-relative or Windows path: it names users, projects and files.
_PATH = re.compile(r"(?:(?<=[\s(\"'=])|^)(?:~|[A-Za-z]:)?[\\/][^\s:'\"()]*")
# A long run of letters and digits mixing both: keys, tokens, hashes.
_TOKEN = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}\b")
_FILE = re.compile(r"\b[\w.-]+\.(?:md|jsonl?|txt|py|toml|ya?ml|env|sqlite3?|db|log|sh|ps1)\b")


def scrub(detail: str) -> str:
    """``detail`` on one line with secrets, URLs, paths, file names and e-mail addresses replaced,
    cut to :data:`memu_core._events.MAX_DETAIL_CHARS` characters."""
    from memu_core._events import MAX_DETAIL_CHARS

    text = " ".join(detail.split())
    try:
        from memu_core._bridge.redact import redact

        text = redact(text)[0]
    except Exception:  # the transcript redactor is a refinement; the token rule below still runs
        pass
    text = _TOKEN.sub("<secret>", text)
    text = _URL.sub("<url>", text)
    text = _EMAIL.sub("<email>", text)
    text = _PATH.sub("<path>", text)
    text = _FILE.sub("<file>", text)
    return text[:MAX_DETAIL_CHARS]


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def record(spec: HostSpec, name: str) -> None:
    """``report install`` / ``report uninstall``: record ``name`` and deliver the spool."""
    from memu_core import _events

    if not _events.recording():
        _say(OFF)
        return
    _events.emit(name, host=spec.id, session_env=spec.session_id_env)
    _events.flush()
    _say("recorded")


def error(spec: HostSpec, stage: str, detail: str) -> None:
    """``report error --stage S [--detail TEXT]``: the agent's failure, scrubbed, once an hour."""
    from memu_core import _events

    if not _events.recording():
        _say(OFF)
        return
    _events.report_error(stage, scrub(detail), host=spec.id, session_env=spec.session_id_env)
    _events.flush()
    _say("recorded")


def flush() -> None:
    """``report flush``: deliver the spool now."""
    from memu_core import _events

    accepted, rejected = _events.flush()
    _say(f"delivered {accepted} event(s)")
    if rejected:
        sys.stderr.write(f"{rejected} event(s) discarded — the server rejected them\n")
