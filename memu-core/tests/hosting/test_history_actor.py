"""A bridging run's commit stamps the versions it writes with its host and run id (issue 19), so
`memu history` tells which run changed what; a commit outside a run names the host only."""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._bridge import run as run_marker
from memu_core._layout import Layout
from memu_core.host import run_host
from memu_core.memory import open_memory

from .conftest import TOY, toy_line, write_session


def test_versions_name_the_run_that_wrote_them(
    sessions_root: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = Layout.at(home / ".memu" / "hosts" / "toy", "toy")
    write_session(sessions_root, "s1", toy_line("user", "we deploy with make ship"))
    assert run_host(TOY, ["prepare"]) == 0
    marker = run_marker.read(layout.run_marker)
    assert marker is not None
    # The agent writes a memory file into the mirror, as the job asks it to.
    (layout.track_dir("memory") / "deploy.md").write_text(
        "---\nname: deploy\ndescription: how we deploy\n---\n- run make ship\n", encoding="utf-8"
    )
    assert run_host(TOY, ["commit"]) == 0
    (layout.track_dir("memory") / "deploy.md").unlink()
    assert run_host(TOY, ["commit"]) == 0  # no run prepared: the host's plain commit forgets it
    capsys.readouterr()
    with open_memory() as memory:
        versions = memory.history("deploy")
    assert [(v.version, v.action, v.actor) for v in versions] == [
        (2, "forget", "toy commit"),
        (1, "commit", f"toy run {marker.run}"),
    ]
