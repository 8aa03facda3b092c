"""The Hermes host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="hermes",
    display="Hermes",
    source="memu_host_hermes.source:HermesSource",
    package="memu_host_hermes",
    # Resolved when prepare runs ($HERMES_HOME, then %LOCALAPPDATA%\hermes on Windows); this is
    # the usual place, shown in help and guides.
    session_dir="~/.hermes/state.db",
    # Inline on purpose: Hermes loads skills only when asked, so a pointer would go unread.
    instruction_path="~/.hermes/SOUL.md",
    session_id_env="HERMES_SESSION_ID",
    schedule_command="hermes -z {prompt}",
)
"""``memu-hermes``: sessions from ``state.db`` (read-only), the procedure inline in ``SOUL.md``."""
