"""``opencode config get | set | path``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import paths
from ..config import FILE_NAME, config_files, parse_value, set_key
from .common import err, fail, friendly_errors, make_project, print_json


def get(key: str) -> None:
    """Print the merged value of ``key``; exit 2 when it is not set."""
    with friendly_errors():
        project = make_project()
        missing = object()
        value = project.config.get(key, missing)
    if value is missing:
        fail(f"error: config key '{key}' is not set")
    if isinstance(value, dict):
        import tomli_w

        print(tomli_w.dumps(value).rstrip())
    else:
        print(value if isinstance(value, str) else json.dumps(value))


def write_target(project: Any, global_: bool) -> Path:
    """Where ``config set`` (and ``mcp add``) write: the global opencode.toml, or the nearest existing
    project opencode.toml, else the one at the project root."""
    if global_:
        return paths.config_dir(project.env) / FILE_NAME
    for label, path in reversed(config_files(project.directory, project.worktree, project.env)):
        if label == "project" and path.is_file():
            return path
    return project.root / FILE_NAME


def set_(key: str, raw: str, global_: bool) -> None:
    """Set ``key`` to ``raw`` (a TOML literal, else a string) in the project or global opencode.toml."""
    with friendly_errors():
        project = make_project()
        target = write_target(project, global_)
        value = parse_value(raw)
        backup = set_key(target, key, value)
    if backup is not None:
        err(f"note: {target} had comments, which TOML rewriting drops; the old file is kept as {backup}")
    print(f"{key} = {json.dumps(value, default=str)}  ({target})")


def path(as_json: bool) -> None:
    """Print config files (read or not), config directories and the file ``config set`` writes."""
    with friendly_errors():
        project = make_project()
        files = config_files(project.directory, project.worktree, project.env)
        directories = project.config_dirs
        target = write_target(project, False)
    if as_json:
        print_json(
            {
                "files": [{"source": label, "path": str(p), "exists": p.is_file()} for label, p in files],
                "directories": [str(d) for d in directories],
                "write": str(target),
                "global": str(paths.config_dir(project.env) / FILE_NAME),
            }
        )
        return
    print("config files, in load order (later wins):")
    for label, p in files:
        print(f"  {'*' if p.is_file() else ' '} {p}  ({label})")
    print("config directories (tool/ and tools/ are searched here):")
    for directory in directories:
        print(f"    {directory}")
    print(f"config set writes: {target}")
    print("(* = exists)")
