"""Fixtures for the language-server tests: a small Python project in ``tmp_path`` served by ty or by
jedi-language-server (the helpers are in ``_lsp_servers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _lsp_servers import LIB, MAIN, configure, find_program


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


#: How long an edit may wait for a server's diagnostics (its start included) in these tests: the default
#: 5 s is the product's bound, and a loaded machine can take longer than that to start a server. The wait
#: ends as soon as the diagnostics come; a test about the bound itself sets its own.
DIAGNOSTICS_BOUND_MS = "60000"


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """The isolated environment of tests/conftest.py, with :data:`DIAGNOSTICS_BOUND_MS`."""
    return {**env, "OPENCODE_LSP_DIAGNOSTICS_TIMEOUT_MS": DIAGNOSTICS_BOUND_MS}


@pytest.fixture
def cli_env(cli_env: dict[str, str]) -> dict[str, str]:
    """The CLI's environment of tests/conftest.py, with :data:`DIAGNOSTICS_BOUND_MS`."""
    return {**cli_env, "OPENCODE_LSP_DIAGNOSTICS_TIMEOUT_MS": DIAGNOSTICS_BOUND_MS}
