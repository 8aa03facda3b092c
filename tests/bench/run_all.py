"""Run every ``tests/bench/bench_*.py`` within a time budget and collect their Markdown.

    python tests/bench/run_all.py [--only core,locomo [--keep]] [--budget 1140] [--scale 1] [--out docs/benchmarks.md]

``nox -s bench`` calls this. Each script prints its own Markdown section; this runner times each
one, stops one that outruns its share, skips the rest once the total budget is spent, and writes
the combined result between the ``<!-- bench:results -->`` markers of ``docs/benchmarks.md``
(``--out -`` prints it instead). A failing script is reported in place, never fatal for the others
(the run's exit status says it failed). A retrieval benchmark fails when it times an empty or
wrong answer, so its figures never reach the page.

``--scale 2`` doubles every time budget, for a machine shared with other work (the page says so).

Each section is preceded by a ``<!-- bench:section NAME -->`` marker. With ``--only`` and
``--keep``, the sections of the scripts not run are carried over from the page as it was, each
marked with the date of the run that measured it, so a partial run never passes old figures off as
new ones.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import _harness as h

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"
SECTION = "<!-- bench:section {} -->"
_SECTION = re.compile(r"^<!-- bench:section (\S+) -->\n", re.MULTILINE)
CARRIED = "_Carried over from the run of {}: not re-measured in the run above._"
_CARRIED = re.compile(r"^_Carried over from the run of (.+?): not re-measured", re.MULTILINE)
TOTAL_BUDGET = 19 * 60
"""The whole run must finish in 20 minutes on a 2-core machine; one minute is kept in reserve."""
ORDER = ("core", "lexical", "locomo", "store", "embed", "serve", "prepare", "postgres", "hosts_sqlite")
"""Known scripts in this order (the issue's headline figures first), then any other by name."""
BUDGETS = {
    "core": 360,
    "lexical": 180,
    "locomo": 360,
    "store": 90,
    "embed": 180,
    "serve": 180,
    "prepare": 180,
    "postgres": 180,
    "warm_scale": 180,
    "server_load": 240,
}
"""Seconds each script may run before it is stopped (its partial output is kept)."""
DEFAULT_BUDGET = 120
ARGS: dict[str, list[str]] = {
    # litellm's import dominates a cold commit; two runs and a 1,000-file store show it.
    "embed": ["--runs", "2", "--existing", "1000"],
    "serve": ["--runs", "7", "--duration", "10"],
    # Two warm servers (10,000 and 100,000 files) start in about 30 s; the 20-line store of
    # bench_serve.py is its own script's row.
    "warm_scale": ["--runs", "7", "--skip-serve-store"],
    # memu-server under load: one short run of the search rows (the script's defaults take ~10 min).
    "server_load": ["--runs", "1", "--duration", "5", "--only", "floor,search,search-writer,search-new"],
    # Postgres inserts each new vector into its HNSW graph, ~3 s per 1,000 segments here: a
    # 100-file change set keeps the comparison and the 20-minute run (the script's own default
    # times 1,000 files).
    "postgres": ["--runs", "7", "--files", "2000", "--apply-runs", "2", "--apply-files", "100"],
    # memU 0.10 runs beside memu on the same 1,000 sessions (its venv is made once per machine).
    "prepare": ["--runs", "3", "--sessions", "1000"],
}
"""Arguments per script, sized so the whole run fits :data:`TOTAL_BUDGET` on 2 cores (a script
run by hand uses its own, larger defaults)."""


def discover(only: set[str] | None) -> list[Path]:
    """The benchmark scripts to run, in :data:`ORDER`."""
    found = {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}
    names = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    return [found[n] for n in names if only is None or n in only]


def previous_sections(doc: Path) -> dict[str, str]:
    """The sections of the results already in ``doc``, by script name, each ending in a line
    that says which run measured it (the one it came from, or the one it was carried over from)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if BEGIN not in text or END not in text:
        return {}
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    parts = _SECTION.split(block)
    head, pairs = parts[0], parts[1:]
    stamp = re.search(r"^Machine: .*?, (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", head, re.MULTILINE)
    measured = stamp.group(1) if stamp else "an earlier run"
    out = {}
    for name, body in zip(pairs[::2], pairs[1::2], strict=True):
        body = body.strip()
        if not _CARRIED.search(body):
            body += "\n\n" + CARRIED.format(measured)
        out[name] = body
    return out


def splice(doc: Path, body: str) -> None:
    """Replace the results section of ``doc`` (appending the markers when they are missing)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    block = f"{BEGIN}\n{body.rstrip()}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    tmp = doc.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, doc)


def main(argv: list[str] | None = None) -> int:
    """Run the scripts, then write or print the combined Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (core, locomo, store…)")
    parser.add_argument(
        "--keep", action="store_true", help="with --only: carry the other scripts' sections over from the page"
    )
    parser.add_argument("--budget", type=float, default=float(os.environ.get("MEMU_BENCH_BUDGET", TOTAL_BUDGET)))
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply every time budget (a machine shared with other work)"
    )
    parser.add_argument("--out", default=str(h.REPO_ROOT / "docs" / "benchmarks.md"), help="'-' prints")
    args = parser.parse_args(argv)
    only = {n.strip() for n in args.only.split(",") if n.strip()} or None
    scale = max(args.scale, 0.1)
    budget = args.budget * scale

    started = time.monotonic()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    sections: list[str] = []
    summary: list[list[str]] = []
    kept = previous_sections(Path(args.out)) if args.keep and only and args.out != "-" else {}
    for script in discover(None if kept else only):
        name = script.stem.removeprefix("bench_")
        if only is not None and name not in only:
            if name in kept:
                sections.append(SECTION.format(name) + "\n" + kept[name])
                when = _CARRIED.search(kept[name])
                summary.append([name, "carried over", "—", f"measured {when.group(1) if when else 'earlier'}"])
            continue
        left = budget - (time.monotonic() - started)
        share = min(BUDGETS.get(name, DEFAULT_BUDGET) * scale, left)
        if share < 20:
            summary.append([name, "skipped", "—", "the run's time budget was spent"])
            continue
        print(f"run_all: {name} (up to {share:.0f} s)", file=sys.stderr, flush=True)
        run = h.run_process([sys.executable, str(script), *ARGS.get(name, [])], env=env, timeout=share)
        out = run.stdout.strip()
        if out and not out.startswith("## "):
            out = f"## {name} (`tests/bench/{script.name}`)\n\n{out}"
        out = SECTION.format(name) + "\n" + out if out else out
        if run.returncode == 0:
            sections.append(out)
            summary.append([name, "ok", f"{run.seconds:.0f} s", f"{run.peak_rss_mb:.0f} MiB"])
        else:
            why = "timed out" if run.returncode == -9 else f"exit {run.returncode}"
            tail = (run.stderr.strip().splitlines() or [""])[-1][:200]
            summary.append([name, why, f"{run.seconds:.0f} s", tail.replace("|", "/")])
            if out:
                sections.append(out + f"\n\n_(incomplete: {why})_")
    total = time.monotonic() - started
    how = "`nox -s bench` (tests/bench/run_all.py)"
    if only is not None:
        how = f"`tests/bench/run_all.py --only {','.join(sorted(only))}{' --keep' if kept else ''}`"
        if kept:
            how += ", the other sections carried over from an earlier run (each says which),"
    if scale != 1:
        how += f" with every time budget scaled by {scale:g} (a machine shared with other work)"
    body = "\n\n".join(
        [
            f"_Generated by {how} in {total / 60:.1f} min._",
            h.machine_line(),
            h.table(["benchmark", "status", "wall time", "peak RSS / note"], summary),
            *sections,
        ]
    )
    if args.out == "-":
        print(body)
    else:
        splice(Path(args.out), body)
        print(f"run_all: wrote {args.out} in {total:.0f} s", file=sys.stderr)
    return 0 if all(row[1] in ("ok", "skipped", "carried over") for row in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
