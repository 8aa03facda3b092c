"""``python -m memu_embed_local export [--force]``: export the local model for ONNX Runtime now."""

from __future__ import annotations

import sys

from memu_embed_local.export import main

sys.exit(main())
