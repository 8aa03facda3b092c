"""The documentation site builds with ``mkdocs build --strict``: a broken link or anchor, or a
page left out of the nav, fails. The generated reference pages are kept in step here too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="pip install -r requirements-dev.txt")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    problems = [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert done.returncode == 0, "\n".join(problems) or done.stderr
    assert (tmp_path / "site" / "python-api" / "index.html").is_file()


def test_every_binary_has_its_reference_page(monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core._cli import reference

    monkeypatch.setenv("COLUMNS", "100")
    pages = {path.stem for path in (DOCS / "reference" / "cli").glob("*.md")}
    binaries = reference.binaries()
    assert pages == set(binaries), "python -m memu_core._cli.reference --all docs (with COLUMNS=100)"
    for prog in binaries:
        assert (DOCS / "reference" / "cli" / f"{prog}.md").read_text() == reference.render_binary(prog), (
            f"docs/reference/cli/{prog}.md is stale: COLUMNS=100 python -m memu_core._cli.reference --all docs"
        )


def test_the_settings_reference_matches_the_settings() -> None:
    from memu_core._cli import settings_reference

    assert (DOCS / "reference" / "settings.md").read_text() == settings_reference.render(), (
        "docs/reference/settings.md is stale: python -m memu_core._cli.settings_reference > docs/reference/settings.md"
    )


def test_the_v4_api_reference_matches_the_openapi_schema() -> None:
    reference = pytest.importorskip("memu_server.reference")
    assert (DOCS / "reference" / "v4-api.md").read_text() == reference.render(), (
        "docs/reference/v4-api.md is stale: python -m memu_server.reference > docs/reference/v4-api.md"
    )
