"""Print the figures a reliability run wrote (``MEMU_RELIABILITY_REPORT``): one row per test.

``python tests/reliability/figures.py <folder>``; used by ``nox -s soak``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(folder: str) -> int:
    rows = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(folder).glob("*.json"))]
    print(f"reliability figures ({os.cpu_count()} cores)")
    heads = ("attempts", "killed", "refused", "failed", "records", "lost", "doubled", "s")
    print(f"{'test':28} " + " ".join(f"{h:>8}" for h in heads))
    for r in rows:
        print(
            f"{r['name']:28} {r['attempts']:>8} {r['killed']:>8} {r['refused']:>8} {r['failure_count']:>8} "
            f"{r['records_generated']:>8} {r['records_lost']:>8} {r['records_doubled']:>8} {r['seconds']:>8}"
        )
        for failure in r["failures"][:5]:
            print(f"    {failure}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".soak"))
