"""``opencode lsp list | diagnostics``: the language servers of ``[lsp.NAME]`` and the built-ins."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .common import err, fail, friendly_errors, make_project, print_json, run_in_project, write_out

if TYPE_CHECKING:
    from ..lsp.diagnostics import Report


def list_servers(as_json: bool) -> None:
    """Every configured and built-in server: its command, extensions, found or not, used or not, and
    failed (with why) when it was found but did not start the last time it was used."""
    from ..lsp.servers import statuses

    with friendly_errors():
        project = make_project()
        rows = statuses(project)
    if as_json:
        print_json({"servers": rows})
        return
    if not rows:
        err("no language servers (lsp = false in the config)")
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        if row["disabled"]:
            state = "disabled"
        elif row["found"] is None:
            state = "not found"
        elif row["running"]:
            state = "running"
        elif row["failed"]:
            state = f"failed: {row['failed']}"
        else:
            state = "found" if row["used"] else "found, not used (another server of its language is)"
        kind = "built-in" if row["builtin"] else "config"
        print(f"{row['name'].ljust(width)}  {kind:<8}  {state}")
        print(f"{' ' * width}  {' '.join(row['command'])}  ({' '.join(row['extensions'])})")


def diagnostics(file: Path, as_json: bool) -> None:
    """Start the file's servers, let them check it and print its errors block (nothing when it has none)."""
    from ..errors import ToolError

    with friendly_errors():
        project = make_project()
    path = os.path.normpath(os.path.join(project.directory, file))
    if not os.path.isfile(path):
        fail(f"error: {path} is not a file")
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(project.root)):
        fail(f"error: {path} is outside the project ({project.root})")

    async def check() -> Report:
        from ..lsp.diagnostics import of_file

        return await of_file(project, path)

    with friendly_errors():
        try:
            report = run_in_project(project, check)
        except ToolError as error:
            fail(f"error: {error}", 1)
    files = report.files
    if as_json:
        print_json({"file": path, "diagnostics": files.get(path, [])})
        return
    block = report.block(path)
    if block:
        write_out(block)
    else:
        err(f"no errors in {path}")
