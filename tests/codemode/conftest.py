"""Fixtures of the code-mode tests (helpers are in ``_codemode.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _codemode import write_config


@pytest.fixture
def demo(project_dir: Path) -> Path:
    """The project directory, configured with the demo MCP server."""
    write_config(project_dir)
    return project_dir
