"""Fixtures shared by the tool tests (the generic ones, ``project``, ``make_project``, ``env``…, are in
tests/conftest.py).

The helper classes (``Recorder``, ``Harness``, ``Asker``) are in ``_harness.py``; each test file builds its
own ``harness`` fixture from ``Harness`` for the tool it tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _local_http import LocalServer

from opencode_cli import Project


@pytest.fixture
def root(project: Project) -> Path:
    return project.directory


@pytest.fixture
def outer(tmp_path: Path) -> Path:
    """A directory outside the project."""
    path = tmp_path / "outer"
    path.mkdir()
    return path


@pytest.fixture
def server() -> Iterator[LocalServer]:
    """A real HTTP server on 127.0.0.1 (see ``_local_http``), stopped after the test."""
    local = LocalServer().start()
    yield local
    local.stop()
