"""Fixtures for the interop tests: a project with a file to fix and rules that ask and deny, and the
scripted OpenAI-compatible server of the models tests (for the Agents SDK)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "models"))  # _scripted.py, shared with the models tests

from _images import PNG
from _processes import alive
from _scripted import ScriptedModel

#: The project's rules: edits are asked (the host's callback answers), ``rm`` is denied.
RULES = '[permission]\nedit = "ask"\nbash = { "*" = "allow", "rm *" = "deny" }\n'


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path`` (parents created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def agent_project(project_dir: Path) -> Path:
    """A project with a typo in README.md, a tiny PNG, and :data:`RULES`."""
    write(project_dir / "README.md", "hello wrld\n")
    write(project_dir / "opencode.toml", RULES)
    (project_dir / "dot.png").write_bytes(PNG)
    return project_dir


@pytest.fixture
def scripted_model(tmp_path: Path) -> Iterator[ScriptedModel]:
    """The scripted chat-completions server, stopped at teardown and checked gone."""
    server = ScriptedModel(tmp_path / "scripted")
    try:
        yield server
    finally:
        server.stop()
        assert not alive(server.process.pid)
