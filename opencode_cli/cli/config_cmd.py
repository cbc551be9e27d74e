"""``opencode config get | set | path``: the merged config of every file read, and our TOML written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import paths
from ..config import FILE_NAME, config_files, file_format, parse_value, set_key, unknown_keys
from .common import err, fail, friendly_errors, make_project, print_json


def get(key: str, as_json: bool = False) -> None:
    """Print the effective value of ``key`` (a default when no config sets it); where it came from goes
    to stderr (or into the JSON); exit 2 when it is neither set nor has a default."""
    with friendly_errors():
        project = make_project(quiet=False)
        config = project.config
        missing = object()
        value = config.effective(key, missing)
        origins = config.origins(key.split("."))
    if value is missing:
        from ..config_check import nested

        # a misspelt key is named as `config set` names it (with the close key), one not set as such
        unknown = next(unknown_keys(nested(key.split("."), None)), None)
        fail(f"error: {unknown}" if unknown else f"error: config key '{key}' is not set")
    if as_json:
        print_json(
            {
                "key": key,
                "value": value,
                "default": not origins,
                "sources": [
                    {"source": o.label, "path": str(o.path) if o.path else None, "format": o.format}
                    for o in origins
                ],
            }
        )
        return
    if isinstance(value, dict):
        import tomli_w

        print(tomli_w.dumps(value).rstrip())
    else:
        print(value if isinstance(value, str) else json.dumps(value))
    if not origins:
        err("from: the default (no config file sets it)")
    else:
        merged = " < ".join(f"{o.describe()} ({o.format})" for o in origins)
        err(f"from: {merged}" + ("  (merged; later wins)" if len(origins) > 1 else ""))


def write_target(project: Any, global_: bool) -> Path:
    """Where ``config set`` (and ``mcp add``) write: the global opencode.toml, or the nearest existing
    project opencode.toml, else the one at the project root (OpenCode's JSON files are never rewritten)."""
    if global_:
        return paths.config_dir(project.env) / FILE_NAME
    for label, path in reversed(config_files(project.directory, project.worktree, project.env)):
        if label == "project" and path.name == FILE_NAME and path.is_file():
            return path
    return project.root / FILE_NAME


def set_(key: str, raw: str, global_: bool) -> None:
    """Set ``key`` to ``raw`` (a TOML literal, else a string) in the project or global opencode.toml."""
    from ..config_check import check_setting

    with friendly_errors():
        project = make_project(quiet=False)
        target = write_target(project, global_)
        value = parse_value(raw)
        problem = check_setting(project, key, value)
        if problem is not None:
            fail(f"error: {problem}; {target} is left as it was")
        set_key(target, key, value)
    print(f"{key} = {json.dumps(value, default=str)}  ({target})")


def path(as_json: bool) -> None:
    """Print config files (read or not, with their format), config directories and the file ``config
    set`` writes."""
    with friendly_errors():
        project = make_project(quiet=False)
        files = config_files(project.directory, project.worktree, project.env)
        inline = [s for s in project.config.sources if s.path is None]
        directories = project.generation.config_dirs
        target = write_target(project, False)
    if as_json:
        print_json(
            {
                "files": [
                    {"source": label, "path": str(p), "format": file_format(p), "exists": p.is_file()}
                    for label, p in files
                ],
                "inline": [{"source": s.label, "format": s.format} for s in inline],
                "directories": [str(d) for d in directories],
                "write": str(target),
                "global": str(paths.config_dir(project.env) / FILE_NAME),
            }
        )
        return
    print("config files, in load order (later wins):")
    for label, p in files:
        print(f"  {'*' if p.is_file() else ' '} {p}  ({label}, {file_format(p)})")
    for source in inline:
        print(f"  * ${source.label}  ({source.format})")
    print("config directories (tool/ and tools/ are searched here):")
    for directory in directories:
        print(f"    {directory}")
    print(f"config set writes: {target}")
    print("(* = read)")
