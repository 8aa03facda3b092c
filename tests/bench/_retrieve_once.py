"""One retrieval in a fresh process, in a chosen mode: the cold path for modes the CLI has no flag for.

    python tests/bench/_retrieve_once.py dense "query" [top_k]

It opens the backend from the environment exactly as ``memu retrieve`` does (``MEMU_DB``,
``MEMU_EMBED_PROVIDER``…) and prints the result's JSON.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    """Retrieve ``argv[1]`` in mode ``argv[0]`` (top_k ``argv[2]``, default 5)."""
    from memu_core._compose import open_backend

    mode, query = argv[0], argv[1]
    top_k = int(argv[2]) if len(argv) > 2 else 5
    backend = open_backend()
    try:
        result = backend.progressive_retrieve(query, top_k=top_k, mode=mode)  # type: ignore[call-arg]
    finally:
        backend.close()
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
