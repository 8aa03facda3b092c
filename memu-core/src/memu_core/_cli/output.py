"""Where results go: stdout, as JSON when a program reads it. Logs go to stderr (:mod:`memu_core._log`)."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(value: Any) -> None:
    """Print ``value`` as indented UTF-8 JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
