"""``[lsp.NAME]`` in ``opencode.toml`` and the built-in servers, in OpenCode's key shape.

::

    lsp = false                      # no language server at all

    [lsp.pyright]
    disabled = true                  # never use this built-in

    [lsp.mylang]
    command = ["mylang-ls", "--stdio"]
    extensions = [".my"]
    env = { MYLANG_LOG = "0" }
    initialization = { strict = true }

A table named like a built-in changes that built-in (any key may be given); another name is a custom
server and needs ``command`` and ``extensions``. Built-ins are used only when their command is found on
``PATH`` or beside the running interpreter (a tool installed in the same virtual environment); nothing is
ever downloaded. Built-ins of one ``group`` are alternatives: only the first one found serves the files.
Nothing here imports pygls.
"""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError

KEYS = frozenset({"command", "extensions", "env", "initialization", "disabled"})

_PYTHON_ROOTS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "Pipfile",
    "pyrightconfig.json",
)
_JS_ROOTS = ("package-lock.json", "bun.lockb", "bun.lock", "pnpm-lock.yaml", "yarn.lock", "package.json")
_PY = (".py", ".pyi")
_JS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


@dataclass(frozen=True)
class ServerSpec:
    """One language server: how to start it, which files it serves, where its root is."""

    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    initialization: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    disabled: bool = False
    roots: tuple[str, ...] = ()
    """Marker files: the server's root is the nearest directory holding one (else the project)."""
    group: str | None = None
    """Built-ins of one group are alternatives: the first one found is used."""
    builtin: bool = False
    explicit: bool = False
    """The config gave its command: when not found, starting it fails with a clear error (a built-in that
    is not installed is only left out)."""

    def handles(self, path: str | Path) -> bool:
        """Whether the server serves files like ``path`` (by extension, or exact file name)."""
        name = os.path.basename(str(path))
        suffix = os.path.splitext(name)[1]
        return suffix in self.extensions or name in self.extensions

    def executable(self, env: Mapping[str, str]) -> str | None:
        """The command's program as found on ``PATH`` (or beside the interpreter); ``None``: not found."""
        program = self.command[0] if self.command else ""
        if not program:
            return None
        if os.sep in program:
            return program if os.access(program, os.X_OK) and os.path.isfile(program) else None
        search = os.pathsep.join(
            part for part in (env.get("PATH", os.defpath), os.path.dirname(sys.executable)) if part
        )
        return shutil.which(program, path=search)

    def argv(self, env: Mapping[str, str]) -> list[str] | None:
        """The command to start, its program resolved; ``None`` when the program is not found."""
        found = self.executable(env)
        return None if found is None else [found, *self.command[1:]]

    def describe(self) -> str:
        """``command args…`` for ``opencode lsp list``."""
        return " ".join(self.command)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one server in ``opencode lsp list --json`` (without its state)."""
        return {
            "name": self.name,
            "command": list(self.command),
            "extensions": list(self.extensions),
            "builtin": self.builtin,
            "disabled": self.disabled,
        }


#: The built-in servers, in the order they are tried (the first found of a group wins).
BUILTINS: tuple[ServerSpec, ...] = (
    ServerSpec(
        "basedpyright", ("basedpyright-langserver", "--stdio"), _PY, roots=_PYTHON_ROOTS, group="python"
    ),
    ServerSpec("pyright", ("pyright-langserver", "--stdio"), _PY, roots=_PYTHON_ROOTS, group="python"),
    ServerSpec("ty", ("ty", "server"), _PY, roots=_PYTHON_ROOTS, group="python"),
    ServerSpec("pylsp", ("pylsp",), _PY, roots=_PYTHON_ROOTS, group="python"),
    ServerSpec("jedi-language-server", ("jedi-language-server",), _PY, roots=_PYTHON_ROOTS, group="python"),
    ServerSpec("typescript", ("typescript-language-server", "--stdio"), _JS, roots=_JS_ROOTS, group="js"),
    ServerSpec("gopls", ("gopls",), (".go",), roots=("go.work", "go.mod", "go.sum"), group="go"),
    ServerSpec("rust-analyzer", ("rust-analyzer",), (".rs",), roots=("Cargo.toml",), group="rust"),
)
BUILTINS = tuple(replace(spec, builtin=True) for spec in BUILTINS)


def servers(config: Mapping[str, Any]) -> tuple[list[ServerSpec], list[str]]:
    """Every server of a merged config (built-ins first, then custom ones) and warnings for unknown keys.

    ``lsp = false`` gives no server at all. A wrong type is a :class:`ConfigError` naming the key.
    """
    table = config.get("lsp")
    if table is False:
        return [], []
    if table is None or table is True:
        table = {}
    if not isinstance(table, Mapping):
        raise ConfigError("lsp must be false or a table of servers ([lsp.NAME])")
    warnings: list[str] = []
    found = {spec.name: spec for spec in BUILTINS}
    for name, value in table.items():
        where = f"lsp.{name}"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a table")
        for key in value:
            if key not in KEYS:
                close = difflib.get_close_matches(key, sorted(KEYS), n=1, cutoff=0.6)
                hint = f" (did you mean '{where}.{close[0]}'?)" if close else ""
                warnings.append(f"unknown config key '{where}.{key}'{hint}; it is ignored")
        found[str(name)] = _server(str(name), value, found.get(str(name)), where)
    return list(found.values()), warnings


def _server(name: str, value: Mapping[str, Any], builtin: ServerSpec | None, where: str) -> ServerSpec:
    disabled = value.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(f"{where}.disabled must be true or false, not {disabled!r}")
    changes: dict[str, Any] = {"disabled": disabled}
    command = value.get("command")
    if command is not None:
        if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
            raise ConfigError(f"{where}.command must be a non-empty list of strings, not {command!r}")
        changes["command"] = tuple(command)
        changes["explicit"] = True
    extensions = value.get("extensions")
    if extensions is not None:
        if not isinstance(extensions, list) or not all(isinstance(e, str) and e for e in extensions):
            raise ConfigError(f'{where}.extensions must be a list of strings like ".py", not {extensions!r}')
        changes["extensions"] = tuple(extensions)
    env = value.get("env")
    if env is not None:
        if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f"{where}.env must be a table of strings")
        changes["env"] = tuple((str(k), v) for k, v in env.items())
    initialization = value.get("initialization")
    if initialization is not None:
        if not isinstance(initialization, Mapping):
            raise ConfigError(f"{where}.initialization must be a table")
        changes["initialization"] = dict(initialization)
    if builtin is not None:
        if "command" in changes:  # a command of one's own: no longer one of the group's alternatives
            changes["group"] = None
        return replace(builtin, **changes)
    if disabled and "command" not in changes:
        changes["command"] = ()
    elif "command" not in changes:
        raise ConfigError(f"{where}.command is required for a server that is not built in")
    if "extensions" not in changes and not disabled:
        raise ConfigError(f"{where}.extensions is required for a server that is not built in")
    changes.setdefault("extensions", ())
    return ServerSpec(name=name, **changes)


def root_for(spec: ServerSpec, file: Path, top: Path) -> Path:
    """The nearest directory from ``file``'s up to ``top`` holding one of the server's marker files;
    ``top`` when none does (or the file is not under ``top``)."""
    try:
        file.parent.relative_to(top)
    except ValueError:
        return top
    directory = file.parent
    while True:
        if any((directory / marker).exists() for marker in spec.roots):
            return directory
        if directory == top or directory.parent == directory:
            return top
        directory = directory.parent
