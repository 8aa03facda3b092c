"""Build memu's wheels and check them as the index would serve them. Used by ``nox -s build``
(every sdist and wheel, with ``twine check``) and ``tests/test_wheels.py`` (the wheels a test
installs).

    python tests/dists.py wheels OUT [MEMBER...]   build wheels with hatchling, no isolation
    python tests/dists.py check DIST               check every member's artefacts in DIST
"""

from __future__ import annotations

import email.parser
import os
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMBERS = (
    "memu-core",
    "memu-telemetry",
    "memu-backends/memu-embed-local",
    "memu-backends/memu-embed-litellm",
    "memu-backends/memu-backend-postgres",
    "memu-backends/memu-backend-cloud",
    "memu-backends/memu-server",
    "memu-hosts/memu-host-claude-code",
    "memu-hosts/memu-host-codex",
    "memu-hosts/memu-host-cursor",
    "memu-hosts/memu-host-openclaw",
    "memu-hosts/memu-host-hermes",
    "memu-hosts/memu-host-workbuddy",
    "memu-hosts/memu-host-cola",
    "memu-hosts/memu-host-generic",
    ".",
)
"""Every distribution's folder; ``.`` is memu-all, the meta-distribution."""
LICENSE = "Apache-2.0"


def project(member: str) -> dict[str, object]:
    return tomllib.loads((REPO / member / "pyproject.toml").read_text(encoding="utf-8"))


def family_version() -> str:
    return str(project(".")["project"]["version"])  # type: ignore[index]


def build_wheels(out: Path, members: list[str]) -> list[Path]:
    """Build each member's wheel into ``out`` with the installed hatchling (offline)."""
    from hatchling.build import build_wheel

    out.mkdir(parents=True, exist_ok=True)
    built = []
    here = os.getcwd()
    for member in members:
        os.chdir(REPO / member)
        try:
            built.append(out / build_wheel(str(out)))
        finally:
            os.chdir(here)
    return built


def _wheel_name(distribution: str) -> str:
    return distribution.replace("-", "_")


def check_wheel(member: str, wheel: Path) -> list[str]:
    """What is wrong with ``wheel`` against ``member``'s pyproject.toml (empty when nothing is)."""
    config = project(member)
    meta_cfg: dict[str, object] = config["project"]  # type: ignore[assignment]
    name = str(meta_cfg["name"])
    problems: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        info = f"{_wheel_name(name)}-{meta_cfg['version']}.dist-info"
        metadata = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        entry_text = archive.read(f"{info}/entry_points.txt").decode() if f"{info}/entry_points.txt" in files else ""
    if metadata["Name"] != name:
        problems.append(f"Name {metadata['Name']!r}, not {name!r}")
    if metadata["Version"] != family_version():
        problems.append(f"Version {metadata['Version']}, not the family's {family_version()}")
    if LICENSE not in (metadata["License-Expression"] or metadata["License"] or ""):
        problems.append(f"no {LICENSE} licence in the metadata")
    if metadata["Description-Content-Type"] != "text/markdown" or len(metadata.get_payload() or "") < 100:
        problems.append("no Markdown README as the long description")
    if not metadata["Requires-Python"]:
        problems.append("no Requires-Python")
    wanted = dict(meta_cfg.get("scripts", {}))  # type: ignore[call-overload]
    for group in dict(meta_cfg.get("entry-points", {})).values():  # type: ignore[call-overload]
        wanted.update(group)
    for key, target in wanted.items():
        if f"{key} = {target}" not in entry_text:
            problems.append(f"entry point {key} = {target} missing")
    packages = config.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})  # type: ignore[attr-defined]
    for package in packages.get("packages", []):
        typed = f"{Path(package).name}/py.typed"
        if typed not in files:
            problems.append(f"{typed} missing")
    return problems


def check_sdist(member: str, sdist: Path) -> list[str]:
    """The sdist holds the pyproject.toml and README.md the wheel is built from."""
    with tarfile.open(sdist) as archive:
        names = {Path(n).name for n in archive.getnames() if n.count("/") == 1}
    return [f"sdist lacks {need}" for need in ("pyproject.toml", "README.md", "PKG-INFO") if need not in names]


def check(dist: Path, *, sdists: bool = True) -> list[str]:
    """One line per artefact checked; lines starting with ``FAIL`` name problems."""
    report = []
    version = family_version()
    for member in MEMBERS:
        name = str(project(member)["project"]["name"])  # type: ignore[index]
        stem = f"{_wheel_name(name)}-{version}"
        wheels = sorted(dist.glob(f"{stem}-*.whl"))
        found = [("wheel", wheels[0], check_wheel(member, wheels[0]))] if wheels else []
        if sdists:
            tars = sorted(dist.glob(f"{stem}.tar.gz"))
            found += [("sdist", tars[0], check_sdist(member, tars[0]))] if tars else []
        kinds = {kind for kind, _, _ in found}
        for missing in {"wheel", *(["sdist"] if sdists else [])} - kinds:
            report.append(f"FAIL {name}: no {missing} {stem} in {dist}")
        for kind, path, problems in found:
            status = "FAIL" if problems else "ok"
            report.append(f"{status} {name} {kind} {path.name}" + "".join(f"\n     {p}" for p in problems))
    return report


def main(argv: list[str]) -> int:
    if argv[:1] == ["wheels"]:
        for path in build_wheels(Path(argv[1]), argv[2:] or list(MEMBERS)):
            print(path)
        return 0
    if argv[:1] == ["check"]:
        report = check(Path(argv[1]))
        print("\n".join(report))
        return 1 if any(line.startswith("FAIL") for line in report) else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
