"""Finding ``*.jsonl`` session files under a folder, one ``stat`` each, with a folder filter.

The default :meth:`TranscriptSource.discover` takes every ``*.jsonl`` below the root. Hosts that
keep other JSONL next to their sessions (sidecars, archives, other tools' logs) prune folders
and files here instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from memu_core.hosting.source import SessionFile


def jsonl_files(
    root: Path,
    *,
    keep_dir: Callable[[str], bool] | None = None,
    keep_file: Callable[[str], bool] | None = None,
) -> Iterator[SessionFile]:
    """``*.jsonl`` files under ``root``; ``keep_dir``/``keep_file`` get a name and may refuse it.

    A file or folder that vanishes while it is listed is skipped, never an error.
    """
    stack = [str(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if keep_dir is None or keep_dir(entry.name):
                                stack.append(entry.path)
                            continue
                        if not entry.name.endswith(".jsonl") or (keep_file and not keep_file(entry.name)):
                            continue
                        if entry.is_file():
                            st = entry.stat()
                            yield SessionFile(Path(entry.path), st.st_mtime_ns, st.st_size)
                    except OSError:
                        continue
        except OSError:
            continue


def newest_first(files: Iterable[SessionFile]) -> list[SessionFile]:
    """Sorted by modification time, newest first (the order discovery promises)."""
    return sorted(files, key=lambda s: s.mtime_ns, reverse=True)
