"""Fixtures of the code-mode tests (helpers are in ``_codemode.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _codemode import write_config
from _mcp_servers import ServerURL, demo_over_http


@pytest.fixture
def demo(project_dir: Path) -> Path:
    """The project directory, configured with the demo MCP server."""
    write_config(project_dir)
    return project_dir


@pytest.fixture
def demo_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerURL]:
    """The demo server over streamable HTTP, already listening (its start is over before a test's
    timeouts begin): ``http://127.0.0.1:PORT/mcp``."""
    yield from demo_over_http(tmp_path_factory, "http", "/mcp")
