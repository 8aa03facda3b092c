"""A third-party resolver installed as a real distribution (an entry point in group ``memu``)
wins by priority; host guides resolve from a docs server and are cached per host."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._bridge import templates
from memu_core._plugins.manager import get_plugins
from memu_core.host import run_host

from .conftest import Publisher, job

PLUGIN = '''
"""acme's templates: the company's own memory job, at memu's current version."""
from typing import ClassVar

from memu_core import hookimpl
from memu_core.interfaces import TemplateResolver


class AcmeTemplates(TemplateResolver):
    name: ClassVar[str] = "acme"
    priority: ClassVar[int] = 10

    def resolve(self, name):
        if name == "memory-job":
            return "<!-- memu-template memory-job v{version} -->\\nACME memory job {input_path} {track_dir}\\n"
        return None


@hookimpl
def memu_register_template_resolvers():
    return [AcmeTemplates]
'''


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Install ``acme-templates`` on ``sys.path`` the way pip lays out a wheel; returns its folder."""
    site = tmp_path / "site"
    (site / "acme_templates-1.0.dist-info").mkdir(parents=True)
    (site / "acme_templates-1.0.dist-info" / "METADATA").write_text("Name: acme-templates\nVersion: 1.0\n")
    (site / "acme_templates-1.0.dist-info" / "entry_points.txt").write_text("[memu]\nacme = acme_templates\n")
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("acme_templates", None)


def _plugin(site: Path, version: str) -> None:
    (site / "acme_templates.py").write_text(textwrap.dedent(PLUGIN).replace("{version}", version))


def test_a_third_party_resolver_wins_by_priority(
    memu_home: Path, acme: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin(acme, "1")  # the same version as memu's embedded text: priority decides
    publisher.put("memory-job.txt", job("memory-job", "1"))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    chosen = templates.choose("memory-job")
    assert (chosen.source, chosen.body) == ("acme", "ACME memory job {input_path} {track_dir}\n")
    assert [c.source for c in templates.candidates("memory-job")] == ["acme", "server", "cache", "embedded"]
    record = next(r for r in get_plugins().report if r.name == "acme")
    assert record.distribution == "acme-templates" and record.hooks == ["memu_register_template_resolvers"]
    assert templates.choose("skill-job").source == "embedded"  # acme does not answer it


def test_a_newer_served_version_beats_the_plugin(
    memu_home: Path, acme: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin(acme, "1")
    publisher.put("memory-job.txt", job("memory-job", "2"))
    monkeypatch.setenv("MEMU_TEMPLATE_BASE_URL", publisher.url)
    assert templates.choose("memory-job").source == "server"


GUIDE = """<!-- memu-template docs/codex/INSTALL.md v5 -->
# Team install for {{display}}

Schedule `{{task_name}}` (formerly {{former_task_names}}; all: {{all_task_names}}) with `{{binary}}`.
"""


def test_docs_install_is_served_from_a_guides_server_and_cached(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    publisher.put("codex/INSTALL.md", GUIDE)
    monkeypatch.setenv("MEMU_DOCS_BASE_URL", publisher.url + "/")
    assert run_host("codex", ["docs", "install"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Team install for Codex\n") and "`memu-bridging-codex`" in out and "memu-codex" in out
    cached = memu_home / ".memu" / "cache" / "docs" / "codex" / "INSTALL.md"
    assert cached.read_text() == GUIDE

    publisher.stop()
    assert run_host("codex", ["docs", "install"]) == 0
    assert capsys.readouterr().out == out  # the last good copy, offline

    monkeypatch.delenv("MEMU_DOCS_BASE_URL")
    assert run_host("codex", ["docs", "install"]) == 0
    assert capsys.readouterr().out.startswith("# Install memu for Codex")  # the shipped guide


def test_a_guide_with_hard_coded_task_names_is_refused(
    memu_home: Path, publisher: Publisher, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    publisher.put("codex/UNINSTALL.md", "<!-- memu-template docs/codex/UNINSTALL.md v9 -->\nRemove memu-bridging.\n")
    monkeypatch.setenv("MEMU_DOCS_BASE_URL", publisher.url)
    assert run_host("codex", ["docs", "uninstall"]) == 0
    captured = capsys.readouterr()
    assert "Remove memu-bridging." not in captured.out
    assert "lacks the token(s) {{task_name}}" in captured.err
