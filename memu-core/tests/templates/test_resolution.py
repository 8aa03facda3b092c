"""Template resolution against a real template server on 127.0.0.1: server, then the last-good
cache, then the installed text; the newest valid version wins; faults fall through with one note."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from memu_core._bridge import template_text as tt
from memu_core._bridge import templates
from memu_core._bridge.template_sources import cache_path
from memu_core._config import resolve as config

from .conftest import Publisher, job


def test_server_then_cache_then_embedded(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    publisher.put("memory-job.txt", job("memory-job", "2"))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)

    served = templates.choose("memory-job")
    assert (served.source, served.version) == ("server", (2,))
    assert served.body.startswith("SERVED memory-job: {input_path}")
    assert cache_path("memory-job") == memu_home / ".memu" / "cache" / "instructions" / "memory-job.txt"
    assert cache_path("memory-job").read_text() == job("memory-job", "2")

    publisher.stop()
    cached = templates.choose("memory-job")
    assert (cached.source, cached.version, cached.body) == ("cache", (2,), served.body)

    cache_path("memory-job").unlink()
    assert templates.choose("memory-job").source == "embedded"


def test_without_a_server_nothing_is_asked_and_the_cache_is_unused(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = cache_path("memory-job")
    cache.parent.mkdir(parents=True)
    cache.write_text(job("memory-job", "9"))
    chosen = templates.choose("memory-job")
    assert (chosen.source, chosen.version) == ("embedded", (1,))


def test_config_env_base_url_is_honoured(memu_home: Path, publisher: Publisher) -> None:
    publisher.put("skill-job.txt", job("skill-job", "3", marker="FROM-CONFIG"))
    (memu_home / ".memu").mkdir()
    (memu_home / ".memu" / "config.env").write_text(f"MEMU_TEMPLATE_BASE_URL={publisher.url}\n")
    config.reload()
    chosen = templates.choose("skill-job")
    assert chosen.source == "server" and chosen.body.startswith("FROM-CONFIG")


def test_a_newer_embedded_text_beats_an_older_cache(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    publisher.fail_with(503)
    cache = cache_path("resource-job")
    cache.parent.mkdir(parents=True)
    cache.write_text(job("resource-job", "0.9", marker="STALE"))
    assert templates.choose("resource-job").source == "embedded"  # v1 > v0.9
    cache.write_text(job("resource-job", None, marker="STALE"))
    assert templates.choose("resource-job").source == "embedded"  # unversioned is version 0
    cache.write_text(job("resource-job", "1.1", marker="NEWER"))
    assert templates.choose("resource-job").body.startswith("NEWER")


def test_an_older_server_text_loses_to_the_installed_one_but_is_cached(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    publisher.put("memory-job.txt", job("memory-job", None))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    assert templates.choose("memory-job").source == "embedded"
    assert [c.source for c in templates.candidates("memory-job")] == ["server", "cache", "embedded"]


def test_a_rolled_back_server_does_not_pull_the_cache_back(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    publisher.put("memory-job.txt", job("memory-job", "3", marker="V3"))
    templates.choose("memory-job")
    publisher.put("memory-job.txt", job("memory-job", "2", marker="V2"))
    chosen = templates.choose("memory-job")
    assert (chosen.source, chosen.body[:2]) == ("cache", "V3")


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("500", "the server answered 500"),
        ("unreachable", "unreachable"),
        ("tls", "unreachable"),
        ("missing placeholder", "lacks the placeholder(s) {track_dir}"),
        ("stray brace", "has a brace memu cannot fill"),
        ("bad header", "unreadable header line"),
        ("other name", "its header names 'skill-job'"),
        ("not utf-8", "not UTF-8 text"),
        ("too large", "larger than 65536 bytes"),
    ],
)
def test_a_fault_falls_through_with_one_note(
    memu_home: Path,
    publisher: Publisher,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fault: str,
    said: str,
) -> None:
    url = publisher.url
    bodies: dict[str, str | bytes] = {
        "missing placeholder": "<!-- memu-template memory-job v5 -->\nread {input_path} only\n",
        "stray brace": "<!-- memu-template memory-job v5 -->\n{input_path} {track_dir} {0}\n",
        "bad header": "<!-- memu-template memory-job version five -->\n{input_path} {track_dir}\n",
        "other name": job("skill-job", "5").replace("{resource_log}", ""),
        "not utf-8": b"\xff\xfe {input_path} {track_dir}",
        "too large": job("memory-job", "5") + "x" * 70_000,
    }
    if fault in bodies:
        publisher.put("memory-job.txt", bodies[fault])
    elif fault == "500":
        publisher.fail_with(500)
    elif fault == "unreachable":
        url = _closed_port()
    elif fault == "tls":
        url = url.replace("http://", "https://")  # a TLS handshake against a plain HTTP server
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", url)

    assert templates.choose("memory-job").source == "embedded"
    assert templates.choose("memory-job").source == "embedded"
    err = capsys.readouterr().err
    assert err.count("note: template memory-job:") == 1 and said in err, err


def test_a_dead_server_is_asked_once_per_process(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", _closed_port())
    for name in ("memory-job", "skill-job", "resource-job"):
        assert templates.choose(name).source == "embedded"
    err = capsys.readouterr().err
    assert err.count("note: ") == 1 and "memory-job.txt: unreachable (" in err, err


def test_an_unknown_name_is_a_usage_error(memu_home: Path) -> None:
    from memu_core.errors import UsageError

    with pytest.raises(UsageError, match="'retrieval-body' is not a template; use one of memory-job"):
        templates.choose("retrieval-body")


HEADER_SPEC = re.compile(r"<!-- memu-template (?P<name>\S+) v(?P<version>\d+(?:\.\d+)*) -->")
"""The header's grammar, as a pattern: the reader checks it with string methods instead (every
prepare reads the job templates' headers, and compiling this cost 0.4 ms)."""


@pytest.mark.parametrize(
    "line",
    [
        "<!-- memu-template memory-job v3 -->",
        "<!-- memu-template memory-job v2025.8.1 -->",
        "<!-- memu-template memory-job v\u0663 -->",  # a decimal digit, as \d reads it
        "<!-- memu-template memory-job v3.-->",
        "<!-- memu-template memory-job  v3 -->",
        "<!-- memu-template memory-job\tv3 -->",
        "<!-- memu-template memory\u00a0job v3 -->",
        "<!-- memu-template memory-job v3 --> -->",
        "<!-- memu-template memory-job v3.. -->",
        "<!-- memu-template memory-job 3 -->",
        "<!-- memu-template  v3 -->",
        "<!-- memu-template -->",
        "<!-- memu-template v1 v2 -->",
    ],
)
def test_a_header_is_read_as_its_pattern_reads_it(line: str) -> None:
    m = HEADER_SPEC.fullmatch(line)
    assert tt._header_fields(line) == ((m.group("name"), m.group("version")) if m else None)
    digits = line.split(" v")[-1].removesuffix(" -->")
    assert tt._is_version(digits) == (re.fullmatch(r"\d+(?:\.\d+)*", digits) is not None)
