"""Fixtures for the language-server tests: a small Python project in ``tmp_path`` and the real servers
the test extras install (``ty`` and ``jedi-language-server``, found in the interpreter's bin dir or on
``PATH``), plus a fixture server written with pygls for the failure cases."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import tomli_w

SERVERS = Path(__file__).parent / "servers"
FIXTURE_SERVER = SERVERS / "fixture_server.py"
PYTHON_BUILTINS = ("basedpyright", "pyright", "ty", "pylsp", "jedi-language-server")

LIB = '''\
def greet(name: str) -> str:
    """Say hello."""
    return "hello " + name


class Greeter:
    def run(self) -> str:
        return greet("world")
'''
MAIN = """\
from pkg.lib import Greeter, greet

print(greet("you"))
print(Greeter().run())
"""


def find_program(name: str) -> str:
    """The path of a test-extra command (beside the interpreter, or on PATH)."""
    search = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    found = shutil.which(name, path=search)
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def configure(project: Path, only: str | None = None, **servers: dict[str, Any]) -> None:
    """Write ``[lsp.*]``: the built-in Python servers disabled except ``only``, plus ``servers``."""
    table: dict[str, Any] = {name: {"disabled": True} for name in PYTHON_BUILTINS if name != only}
    table.update(servers)
    (project / "opencode.toml").write_text(tomli_w.dumps({"lsp": table}))


@pytest.fixture
def py_project(project_dir: Path) -> Path:
    """``pyproject.toml``, ``pkg/lib.py`` (greet, Greeter) and ``main.py`` using them."""
    (project_dir / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (project_dir / "pkg").mkdir()
    (project_dir / "pkg" / "__init__.py").write_text("")
    (project_dir / "pkg" / "lib.py").write_text(LIB)
    (project_dir / "main.py").write_text(MAIN)
    return project_dir


@pytest.fixture
def ty_project(py_project: Path) -> Path:
    """The project with ty as its only Python server."""
    configure(py_project, "ty", ty={"command": [find_program("ty"), "server"]})
    return py_project


@pytest.fixture
def jedi_project(py_project: Path) -> Path:
    """The project with jedi-language-server as its only Python server."""
    command = [find_program("jedi-language-server")]
    configure(py_project, "jedi-language-server", **{"jedi-language-server": {"command": command}})
    return py_project


@pytest.fixture
def lsp_env() -> dict[str, str]:
    """The lsp tool switched on."""
    return {"OPENCODE_EXPERIMENTAL_LSP_TOOL": "true"}


def fixture_server(project: Path, **env: str) -> None:
    """Only the pygls fixture server, for ``.fx`` files (with ``env`` for it)."""
    configure(
        project,
        fixture={"command": [sys.executable, str(FIXTURE_SERVER)], "extensions": [".fx"], "env": env},
    )
