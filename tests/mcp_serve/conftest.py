"""Fixtures for ``opencode mcp serve``: the server as a real subprocess, driven by the ``mcp`` SDK's client
over stdio or streamable HTTP (helpers in ``_serve.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

# the MCP client tests' process helpers (free_port, start, stop, wait_listening) are reused
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))
