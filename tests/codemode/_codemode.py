"""Helpers of the code-mode tests: the demo MCP server (``tests/mcp/servers``) as ``[mcp.demo]``, the
environment that turns code mode on, and a bounded runner for coroutines."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))

from _mcp_servers import DEMO_SERVER

CODE_MODE = {"OPENCODE_EXPERIMENTAL_CODE_MODE": "1"}


def write_config(project_dir: Path, demo: dict[str, Any] | None = None, **extra: Any) -> None:
    """The demo server over stdio as ``[mcp.demo]`` (with the keys of ``demo``; with ``type = "remote"``,
    those keys alone), plus ``extra`` top-level tables."""
    local = {"type": "local", "command": [sys.executable, str(DEMO_SERVER), "stdio"]}
    server = dict(demo or {}) if (demo or {}).get("type") == "remote" else {**local, **(demo or {})}
    config = {"mcp": {"demo": server}}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({**config, **extra}))


def run(coroutine: Any, timeout: float = 90) -> Any:
    """Run ``coroutine`` on a fresh loop, bounded."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))
