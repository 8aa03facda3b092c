"""``memu ui`` as a user runs it: it prints the address, opens the browser with it, serves, and
stops on Ctrl-C; a bad ``--port`` is one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from memu_core._compose import local_engine

# Ctrl-C as a terminal delivers it: a shell without job control starts background commands with
# SIGINT ignored, and a test run started that way would hand the ignored signal down to memu ui.
MEMU = [
    sys.executable,
    "-c",
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from memu_core._cli.main import main; sys.argv[0] = 'memu'; main()",
]


def _start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*MEMU, "ui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert first.startswith("memu ui: http://127.0.0.1:"), (first, proc.stderr.read() if proc.poll() else "")
    return proc, first.split(": ", 1)[1].strip()


def _stop(proc: subprocess.Popen[str]) -> int:
    """Ctrl-C, then wait while draining both pipes: a child blocked writing to a full pipe that
    nobody reads would never exit. A child still running after 30 s fails with what it wrote."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        said = f"stdout {out[-2000:]!r}, stderr {err[-2000:]!r}"
        raise AssertionError(f"memu ui did not stop on Ctrl-C; {said}") from None
    return proc.returncode


def test_memu_ui_opens_the_browser_on_its_tokened_address_and_stops_on_ctrl_c(memu_home: Path) -> None:
    db = memu_home / "ui.sqlite3"
    os.environ["MEMU_DB"] = str(db)
    engine = local_engine()
    engine.commit_results(recall_files=[{"name": "release", "content": "Cut the release branch on Tuesday."}])
    engine.close()
    opened = memu_home / "opened.txt"
    # webbrowser honours $BROWSER: a "browser" that writes down the address it was given.
    browser = memu_home / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n', encoding="utf-8")
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": f"{browser} %s"}
    proc, url = _start([], env)
    try:
        for _ in range(100):
            if opened.exists() and opened.read_text():
                break
            time.sleep(0.1)
        assert opened.read_text() == url and "?token=" in url
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as page:  # the sign-in redirect sets the cookie
            assert "release" in page.read().decode("utf-8")
    except Exception:
        proc.kill()
        raise
    assert _stop(proc) == 0


def test_no_browser_prints_the_address_and_the_page_answers(memu_home: Path) -> None:
    env = {**os.environ, "MEMU_DB": str(memu_home / "ui.sqlite3"), "BROWSER": "/bin/false"}
    proc, url = _start(["--no-browser"], env)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as page:
            body = page.read().decode("utf-8")
        assert "<h1>Memory files</h1>" in body and "No files match." in body
    finally:
        assert _stop(proc) == 0


def test_a_bad_port_is_one_line_and_exit_2(memu_home: Path) -> None:
    done = subprocess.run([*MEMU, "ui", "--port", "70000", "--no-browser"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --port 70000 is not a port; pass 1-65535, or leave it out for any free port"
    ]


def test_cloud_mode_points_at_the_servers_page(memu_home: Path) -> None:
    env = {**os.environ, "MEMU_MEMORY_MODE": "cloud"}
    done = subprocess.run([*MEMU, "ui", "--no-browser"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: MEMU_MEMORY_MODE is cloud: ") and "/ui/" in line


def test_the_per_turn_retrieve_never_loads_the_page(memu_home: Path) -> None:
    """``memu retrieve`` and a host's ``retrieve`` leave ``memu_core._ui`` unimported."""
    os.environ["MEMU_DB"] = str(memu_home / "ui.sqlite3")
    engine = local_engine()
    engine.commit_results(recall_files=[{"name": "release", "content": "Cut the release branch on Tuesday."}])
    engine.close()
    code = (
        "import sys\nfrom memu_core._cli.main import main\nsys.argv = ['memu', 'retrieve', 'release branch']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from memu_core.host import run_host\nfrom memu_host_claude_code.spec import SPEC\n"
        "run_host(SPEC, ['retrieve', 'release branch'])\n"
        "print('UI', sorted(m for m in sys.modules if m.startswith('memu_core._ui')), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "UI []" in done.stderr, done.stderr[-800:]
    assert done.stdout.count('"segments"') == 2  # both answered
