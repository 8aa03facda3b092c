"""Progress on long work (issue 19): count lines with totals when piped, a bar with a total and
an ETA on a terminal, a heartbeat instead of a silent minute, nothing for quick work."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._cli.progress import Progress
from memu_core.testing.embedding_server import EmbeddingServer


def test_quick_work_shows_nothing() -> None:
    out = io.StringIO()
    with Progress("export", 10, unit="files", stream=out) as bar:
        for _ in range(10):
            bar.advance()
    assert out.getvalue() == ""


def test_piped_lines_carry_counts_totals_and_the_time_left() -> None:
    out = io.StringIO()
    with Progress("import", 50, unit="texts", stream=out, quiet=0, every=10) as bar:
        for _ in range(50):
            bar.advance()
    lines = out.getvalue().splitlines()
    assert len(lines) == 5, lines
    assert lines[0].startswith("memu progress task=import done=10 total=50 unit=texts percent=20 elapsed_s=")
    assert all("eta_s=" in line for line in lines)
    assert "done=50 total=50" in lines[-1] and "percent=100" in lines[-1]


def test_a_slow_step_gets_a_heartbeat_not_silence() -> None:
    out = io.StringIO()
    with Progress("prepare", 3, unit="sessions", stream=out, quiet=0, heartbeat=0.3) as bar:
        time.sleep(1.0)  # one session that takes long to read: no count moves
        bar.advance(3)
    lines = out.getvalue().splitlines()
    assert any("done=0 total=3" in line and "state=working" in line for line in lines), lines


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(latency=0.05) as srv:
        yield srv


def _folder(root: Path, files: int) -> Path:
    for i in range(files):
        path = root / "notes" / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"- note {i} line {j}: port {i * 10 + j} serves topic{(i + j) % 7}" for j in range(3))
        path.write_text(f"---\nname: note {i}\ndescription: note number {i}\n---\n{body}\n", encoding="utf-8")
    return root / "notes"


def test_commit_from_dir_piped_says_it_loads_and_counts_the_texts(
    memu_home: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("memu_embed_litellm")
    from memu_core._cli.main import build, run_app

    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "openai-compatible")
    monkeypatch.setenv("MEMU_BASE_URL", server.base_url)
    monkeypatch.setenv("MEMU_EMBED_MODEL", "hash-model")
    monkeypatch.setenv("MEMU_EMBED_BATCH_SIZE", "16")
    monkeypatch.setenv("MEMU_EMBED_CONCURRENCY", "1")
    server.latency = 0.1  # 30 requests one after another: seconds of work, past the quiet second
    args = ["commit", "--from-dir", str(_folder(memu_home, 150))]
    assert run_app(lambda: build(args), args) == 0
    err = capsys.readouterr().err.splitlines()
    # Said once: the warm-server route names the fallback, the progress front does not repeat it.
    loading = [line for line in err if ("loading the" in line and "embedder" in line) or "embedding model" in line]
    assert len(loading) == 1 and "in this process" in loading[0], err
    counts = [line for line in err if line.startswith("memu progress task=commit ")]
    assert counts, err
    total = re.search(r" total=(\d+) ", counts[-1])
    assert total and int(total.group(1)) >= 450  # 150 files x 3 lines, plus their headers
    assert f"done={total.group(1)} " in counts[-1]


def _read_pty(fd: int, proc: subprocess.Popen[bytes], limit: float) -> str:
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode("utf-8", "replace")


def test_reindex_on_a_terminal_draws_a_bar_with_a_total_and_an_eta(
    memu_home: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("memu_embed_litellm")
    from memu_core._cli.memory_cmds import run_commit

    run_commit(None, _folder(memu_home, 60), as_json=True)  # lexical-only: every row waits for a vector
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(
        MEMU_EMBED_PROVIDER="openai-compatible",
        MEMU_BASE_URL=server.base_url,
        MEMU_EMBED_MODEL="hash-model",
        MEMU_EMBED_BATCH_SIZE="4",
        MEMU_EMBED_CONCURRENCY="1",
        TERM="xterm-256color",
        COLUMNS="120",
    )
    main, child = pty.openpty()
    code = "import sys; from memu_core._cli.main import main; sys.argv[0] = 'memu'; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "reindex"], stdin=child, stdout=child, stderr=child, env=env, close_fds=True
    )
    os.close(child)
    try:
        shown = _read_pty(main, proc, 300)
        assert proc.wait(timeout=60) == 0, shown
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    plain = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", shown)
    rows = 60 * 4  # 3 lines and a header per file
    assert f"{rows}/{rows} rows" in plain, plain[-2000:]
    assert re.search(r"reindex .*\d+/240 rows .*eta", plain), plain[-2000:]
    assert "━" in plain  # rich's bar
    assert f"reindexed {rows} rows" in plain
