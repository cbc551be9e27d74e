"""``opencode trust [DIR]``, ``opencode trust --list`` and ``opencode untrust [DIR]``.

Exit codes: 0 the project is trusted (recorded now, or already, or it supplies nothing) / the record was
removed / the list was printed; 1 nothing was recorded (the answer was no, or there is no terminal to ask on
and ``--yes`` was not given) / ``untrust`` found no record; 2 bad usage (``DIR`` is not a directory, a
broken config file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from .common import EXIT_TOOL_ERROR, err, fail, friendly_errors, print_json, terminal_attached


def _view(directory: Path | None) -> Any:
    """The trusted view of ``directory`` (default: the current one) as the record alone decides it."""
    from ..config import find_worktree
    from ..trust import view

    folder = Path(os.path.abspath(directory or os.getcwd()))
    if not folder.is_dir():
        fail(f"error: {folder} is not a directory")
    env = {key: value for key, value in os.environ.items() if key != "OPENCODE_TRUST"}
    with friendly_errors():
        return view(folder, find_worktree(folder), env)


def trust(directory: Path | None, yes: bool, as_json: bool) -> None:
    """Show what the project supplies, ask (on a terminal) and record the trust."""
    from ..trust import Records

    found = _view(directory)
    lines = found.listing()
    if as_json:
        print_json(
            {
                "root": str(found.root),
                "trusted": found.trusted,
                "why": found.decision.why,
                "changed": list(found.decision.changed),
                "items": [
                    {"kind": item.kind, "key": item.key, "path": str(item.path), "detail": item.detail}
                    for item in found.items
                ],
            }
        )
    if not found.items:
        if not as_json:
            print(f"{found.root} supplies no code, secret destinations or rules: there is nothing to trust")
        return
    if found.trusted and found.decision.why == "opencode trust":
        if not as_json:
            print(f"{found.root} is trusted already")
        return
    if not as_json:
        print(f"Trusting {found.root} lets its own files take effect:")
        for line in lines:
            print(line)
        if found.decision.changed:
            print(f"Changed since it was trusted: {'; '.join(found.decision.changed)}")
    entry = found.record()  # hashed now: a file changed while the question waits is not trusted
    if not yes:
        if not terminal_attached():
            err(f"not trusted: no terminal to ask on; to trust it: opencode trust --yes {found.root}")
            raise typer.Exit(EXIT_TOOL_ERROR)
        sys.stderr.write("Trust this project? [y/N] ")  # on the terminal, not in stdout's listing
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            err("not trusted: nothing was recorded")
            raise typer.Exit(EXIT_TOOL_ERROR)
    Records(os.environ).grant(found.root, entry)
    err(f"trusted {found.root}; a change to any file listed ends the trust")


def list_trusted(as_json: bool) -> None:
    """Print every trusted project root and the files its trust covers."""
    from ..trust import Records

    projects = Records(os.environ).load()
    if as_json:
        print_json(
            {
                "projects": [
                    {"root": root, "files": sorted(entry.get("files", {}))}
                    for root, entry in projects.items()
                ]
            }
        )
        return
    if not projects:
        err("no project is trusted (trust one with: opencode trust DIR)")
        return
    for root, entry in sorted(projects.items()):
        print(root)
        for name in sorted(entry.get("files", {})):
            print(f"    {name}")


def untrust(directory: Path | None) -> None:
    """Forget the trust of the project at ``directory``."""
    from ..trust import Records

    found = _view(directory)
    if not Records(os.environ).revoke(found.root):
        err(f"{found.root} was not trusted")
        raise typer.Exit(EXIT_TOOL_ERROR)
    print(f"{found.root} is no longer trusted", file=sys.stdout)
