"""Fixtures for the models tests: a scripted OpenAI-compatible server (``_scripted.py``) run as a child
process on 127.0.0.1, and a project whose ``[provider.local]`` points at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _processes import alive
from _scripted import ScriptedModel, configure, local_config

from opencode_cli.project import Project


@pytest.fixture
def scripted_model(tmp_path: Path) -> Iterator[ScriptedModel]:
    """A scripted server of its own for each test (``.url``, ``.script(responses)``, ``.requests()``);
    stopped at teardown, and checked gone."""
    server = ScriptedModel(tmp_path / "scripted")
    try:
        yield server
    finally:
        server.stop()
        assert not alive(server.process.pid)


@pytest.fixture
def local_project(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> Callable[..., Project]:
    """A project factory: ``local_project(**options)`` writes the ``[provider.local]`` config (with these
    ``options``) and returns a new project; ``extra_env`` goes to ``make_project``."""

    def factory(extra_env: dict[str, str] | None = None, **options: Any) -> Project:
        configure(project_dir, local_config(scripted_model.url, **options))
        return make_project(extra_env=extra_env)

    return factory
