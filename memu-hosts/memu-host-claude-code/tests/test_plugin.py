"""The installed entry point registers the host with memu's plugin manager."""

from __future__ import annotations

from memu_host_claude_code.plugin import memu_register_hosts
from memu_host_claude_code.spec import SPEC

from memu_core._plugins.manager import Plugins


def test_entry_point_registers_both_bundled_hosts() -> None:
    hosts = Plugins().load().hosts()
    assert hosts["claude-code"] is SPEC
    assert hosts["codex"].binary == "memu-codex"


def test_spec_values() -> None:
    assert memu_register_hosts() == [SPEC]
    assert SPEC.binary == "memu-claude-code" and SPEC.session_id_env == "CLAUDE_CODE_SESSION_ID"
    assert SPEC.task_name == "memu-bridging-claude-code"
    assert SPEC.all_task_names == ("memu-bridging-claude-code", "memu-remember-claude-code")
    assert SPEC.make_source("/nowhere").name == "claude-code"
