"""The family of distributions. Every install line a user or an agent may copy names a
distribution that exists: one of ours (memu_core._plugins.catalogue, or the memu-all
meta-distribution) or a third-party package the docs name on purpose. The index holds an
unrelated project under the bare name ``memu``; a guide that told pip to install that name would
fetch it.
Every distribution carries the one version of the family."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from memu_core._plugins.catalogue import CATALOGUE

REPO = Path(__file__).resolve().parents[1]
META = "memu-all"
OURS = {entry.distribution for entry in CATALOGUE} | {META}
THIRD_PARTY = {
    # The CPU build of torch for the one-time ONNX export: only from PyTorch's CPU index (the
    # default index serves a multi-GB CUDA build).
    "torch": "--index-url https://download.pytorch.org/whl/cpu",
    # The generator of the host-plugin template, for plugin authors (docs/hosts.md).
    "copier": "",
}
COMMAND = re.compile(r"\b(?:uv pip install|uv tool install|pipx install|pip install)\b(?P<args>[^`\n;&|()#,]*)")
TAKES_VALUE = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f"}
TAKES_VALUE |= {"--find-links"}
PLACEHOLDER = re.compile(r"^memu-host-<[a-z-]+>$")


def shipped_texts() -> list[Path]:
    """The guides the host binaries print, the agent's SKILL.md, the READMEs and docs/."""
    return sorted(
        {
            *REPO.glob("memu-hosts/*/src/*/guides/*.md"),
            REPO / "SKILL.md",
            REPO / "README.md",
            *REPO.glob("memu-*/README.md"),
            *REPO.glob("memu-*/*/README.md"),
            *REPO.glob("docs/**/*.md"),
        }
    )


def named_distributions(args: str) -> list[str]:
    """The distribution names in the arguments of one install command (paths, options and
    placeholders left out)."""
    names: list[str] = []
    words = [w.strip("'\"") for w in args.split()]
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in TAKES_VALUE:
            skip = True
            continue
        if not word or word.startswith("-") or word in {"…", "..."} or word.startswith((".", "/", "~")) or "/" in word:
            continue
        name = re.split(r"[\[<>=!~;@ ]", word, maxsplit=1)[0] if not PLACEHOLDER.match(word) else word
        if name:
            names.append(name.lower().replace("_", "-"))
    return names


def install_lines() -> list[tuple[str, str, list[str]]]:
    """(file, command, distributions) for every install command in the shipped texts."""
    found = []
    for path in shipped_texts():
        for line in path.read_text(encoding="utf-8").splitlines():
            for match in COMMAND.finditer(line):
                found.append((str(path.relative_to(REPO)), match[0].strip(), named_distributions(match["args"])))
    return found


def test_the_scan_sees_the_install_lines() -> None:
    lines = install_lines()
    files = {where for where, _, _ in lines}
    # Every host guide has an install line, and so do the README of every host distribution.
    assert len([f for f in files if "/guides/" in f]) >= 8, files
    assert {"SKILL.md", "docs/embeddings.md"} <= files
    assert named_distributions("--upgrade memu-core 'memu-embed-local[minilm]' memu-host-<id> -e .") == [
        "memu-core",
        "memu-embed-local",
        "memu-host-<id>",
    ]


def test_every_install_line_names_a_real_distribution() -> None:
    wrong = []
    for where, line, names in install_lines():
        for name in names:
            if name in OURS:
                continue
            if PLACEHOLDER.match(name):
                continue  # SKILL.md: memu-host-<id>, each id is a host of the catalogue
            needs = THIRD_PARTY.get(name)
            if needs is not None and needs in line:
                continue
            wrong.append(f"{where}: {name!r} in {line!r}")
        if line.startswith("uv tool install") and len(names) != 1:
            wrong.append(f"{where}: uv tool install takes one package (its binaries), not {names} in {line!r}")
    assert wrong == [], "install lines naming no memu distribution:\n" + "\n".join(wrong)


def test_the_catalogue_lists_every_member_and_nothing_else() -> None:
    root = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert root["name"] == META
    members = {
        tomllib.loads(p.read_text())["project"]["name"]
        for p in REPO.glob("memu-*/**/pyproject.toml")
        if ".venv" not in p.parts
    }
    assert members == OURS - {META}
    hosts = {entry.host for entry in CATALOGUE if entry.host}
    assert PLACEHOLDER.match("memu-host-<id>") and all(f"memu-host-{h}" in OURS or h == "agent" for h in hosts)


# The bare name belongs to an unrelated project on the index; the lines are built from it so that
# no text in the repository reads as an install line for it.
UNRELATED = "memu"


@pytest.mark.parametrize(
    "bad", [f"pip install {UNRELATED}", "uv tool install memu-cursor", f"pipx install '{UNRELATED}[all]'"]
)
def test_a_wrong_name_is_caught(bad: str) -> None:
    (match,) = COMMAND.finditer(bad)
    assert [n for n in named_distributions(match["args"]) if n not in OURS]


def test_every_distribution_has_the_same_version_and_memu_all_pins_it() -> None:
    # One version for the family, written in each pyproject.toml (static metadata: every sdist
    # builds on its own); memu-all pins every member to it, so this test is where they agree.
    root = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    versions = {
        p.parent.name: tomllib.loads(p.read_text())["project"]["version"]
        for p in REPO.glob("memu-*/**/pyproject.toml")
        if ".venv" not in p.parts
    }
    assert set(versions.values()) == {root["version"]}, versions
    pins = {re.sub(r"\[.*\]", "", d.split("==")[0]): d.partition("==")[2] for d in root["dependencies"]}
    assert pins == {name: root["version"] for name in OURS - {META}}
