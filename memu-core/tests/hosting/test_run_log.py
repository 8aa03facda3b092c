"""Each finished bridging run leaves one line in its host's run log, and ``memu ui``'s runs page
shows the run: host, sessions mined, files it added, changed and forgot (real toy host, CLI,
SQLite store, the page over HTTP)."""

from __future__ import annotations

import http.cookiejar
import json
import urllib.request
from pathlib import Path

from memu_core._bridge import runlog
from memu_core._compose import local_engine
from memu_core._layout import Layout
from memu_core._ui.server import start
from memu_core.host import run_host

from .conftest import TOY, toy_line, write_session


def _mirror(layout: Layout, name: str, body: str) -> None:
    (layout.base / "memory").mkdir(parents=True, exist_ok=True)
    (layout.base / "memory" / f"{name}.md").write_text(f"---\nname: {name}\ndescription: d\n---\n{body}\n")


def test_a_run_is_logged_with_its_sessions_and_shown_on_the_runs_page(sessions_root: Path, home: Path) -> None:
    layout = Layout.at(home / ".memu" / "hosts" / "toy", "toy")
    write_session(sessions_root, "s1", toy_line("user", "we deploy on Tuesdays"))
    write_session(sessions_root, "s2", toy_line("user", "the garden needs water"))
    assert run_host(TOY, ["prepare"]) == 0
    run_id = json.loads(layout.run_marker.read_text())["run"]
    _mirror(layout, "deploys", "Deploys happen on Tuesdays.")
    assert run_host(TOY, ["commit"]) == 0
    assert run_host(TOY, ["commit"]) == 0  # no run prepared: nothing to log

    [entry] = runlog.read(runlog.all_logs(home / ".memu" / "hosts"))
    assert entry["run"] == run_id and entry["host"] == "toy"
    assert (entry["sessions"], entry["stored"], entry["forgotten"]) == (2, 1, 0)

    engine = local_engine()
    running = start(engine).start_background()
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        opener.open(running.url, timeout=30).read()
        page = opener.open(f"{running.address}/runs", timeout=30).read().decode("utf-8")
    finally:
        running.stop()
        engine.close()
    row = next(r for r in page.split("<tr>") if f"toy run {run_id}" in r)
    assert "<td>toy</td>" in row and "<td>2</td>" in row and "memory/deploys" in row


def test_the_log_keeps_the_newest_lines_and_skips_damaged_ones(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path / "tree", "toy")
    layout.base.mkdir(parents=True)
    for n in range(runlog.KEEP + 5):
        runlog.record(layout, run=f"r{n}", sessions=n, stored=0, forgotten=0)
    with runlog.path(layout).open("a", encoding="utf-8") as log:
        log.write("{not json\n")
    entries = runlog.read([runlog.path(layout)])
    assert len(entries) == runlog.KEEP
    assert {e["run"] for e in entries} == {f"r{n}" for n in range(5, runlog.KEEP + 5)}
