"""Helpers for the language-server tests: the sample project's files, finding the real servers the test
extras install (``ty`` and ``jedi-language-server``, in the interpreter's bin dir or on ``PATH``), writing
``[lsp.*]``, and the pygls fixture server for the failure cases."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

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


def fixture_server(project: Path, **env: str) -> None:
    """Only the pygls fixture server, for ``.fx`` files (with ``env`` for it)."""
    configure(
        project,
        fixture={"command": [sys.executable, str(FIXTURE_SERVER)], "extensions": [".fx"], "env": env},
    )
