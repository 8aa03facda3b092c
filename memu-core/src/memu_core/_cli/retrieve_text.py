"""``memu retrieve --format text``: the answer as a ranked list a person reads at a glance.

JSON stays the default (agents parse it); this prints, best first, each matching line with its
score and the file it comes from, then the files and the workspace resources.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any


def _clip(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(width - 1, 1)] + "…"


def print_text(result: Mapping[str, Any]) -> None:
    """Print ``result`` (a ``progressive_retrieve`` answer) as numbered lines, files and resources."""
    width = max(shutil.get_terminal_size((100, 20)).columns, 60)
    files = {f["id"]: f for f in result.get("files") or []}
    segments = result.get("segments") or []
    mode = result.get("mode") or "?"
    if not segments and not result.get("resources"):
        print(f"nothing found ({mode} search)")
        return
    print(f"{len(segments)} line(s) from {len(files)} file(s), {mode} search, best first:")
    for rank, seg in enumerate(segments, 1):
        owner = files.get(seg.get("recall_file_id"))
        where = f"{owner['track']}/{owner['name']}" if owner else seg.get("track", "?")
        head = f"{rank:>2}. {seg['score']:.4f}  {where}  "
        print(head + _clip(str(seg.get("text", "")), width - len(head)))
    if files:
        print("files:")
        for item in files.values():
            head = f"    {item['score']:.4f}  {item['track']}/{item['name']}"
            print(head + (f" - {_clip(item['description'], width - len(head) - 3)}" if item.get("description") else ""))
    resources = result.get("resources") or []
    if resources:
        print("resources:")
        for res in resources:
            head = f"    {res['score']:.4f}  {res.get('local_path') or res.get('url')}"
            caption = res.get("caption")
            print(head + (f" - {_clip(caption, width - len(head) - 3)}" if caption else ""))
