"""A warm server that dies in the middle of a request: the turn is still answered, in process,
with the same bytes as without a server.

The dying server is a small process of its own on the real socket path: it accepts the turn's
connection, reads the request and exits without answering, as ``memu serve`` killed at that
moment would (killing the real server between reading and answering cannot be timed reliably).
Later connections find the dead server's socket file and nobody listening.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memu_core import _layout

HOST_MAIN = "import sys; from memu_host_claude_code.cli import main; sys.argv[0] = 'memu-claude-code'; main()"
MEMU_MAIN = "import sys; from memu_core._cli.main import main; sys.argv[0] = 'memu'; sys.exit(main())"
DYING_SERVER = """
import os, socket, sys
path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(8)
print("ready", flush=True)
conn, _ = listener.accept()
conn.recv(65536)  # the request arrives...
os._exit(1)  # ...and the server dies before it answers
"""


def _run(main: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", main, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("main", [HOST_MAIN, MEMU_MAIN], ids=["memu-claude-code", "memu"])
def test_a_server_dying_mid_request_leaves_the_answer_to_the_process(home: Path, main: str) -> None:
    cold = _run(main, "retrieve", "green tea deploy")
    assert cold.returncode == 0 and '"segments"' in cold.stdout, cold.stderr
    _layout.ensure_run_dir()
    server = subprocess.Popen(
        [sys.executable, "-c", DYING_SERVER, str(_layout.serve_socket())], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
    turn = _run(main, "retrieve", "green tea deploy")
    assert server.wait(30) == 1  # it took the request and died
    assert turn.returncode == 0, turn.stderr
    assert turn.stdout == cold.stdout  # the same answer, computed in process
