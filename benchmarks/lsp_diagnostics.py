"""What diagnostics after an edit cost: the edit tool with a language server, next to the same edit without.

In one run, on a small generated Python project in a temporary directory, each case makes its own
project and session and times edits (alternating between two texts, so each one changes the file):

* ``no server``: ``lsp = false``, the baseline;
* ``no server for the file type``: ty configured, the edit is of a ``.txt`` file (nothing is awaited);
* ``ty``: pull diagnostics (``textDocument/diagnostic``), the server started by the first edit (shown
  apart) and warm afterwards;
* ``jedi-language-server``: push diagnostics (``publishDiagnostics``), awaited after each change.

Prints the median of each case and its ratio to the baseline; nothing is asserted. ty and
jedi-language-server come with the test extras (``pip install -e '.[test]'``); a missing one is skipped.

    python benchmarks/lsp_diagnostics.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import tomli_w

from opencode_cli.project import Project

PYTHON_BUILTINS = ("basedpyright", "pyright", "ty", "pylsp", "jedi-language-server")


def find(name: str) -> str | None:
    return shutil.which(name, path=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))


def make_project(root: Path, lsp: Any) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    body = "".join(f"def helper_{n}(value: int) -> int:\n    return value + {n}\n\n\n" for n in range(200))
    (root / "module.py").write_text(body + "RESULT = helper_1(1)\n")
    (root / "notes.txt").write_text("RESULT = helper_1(1)\n")
    (root / "opencode.toml").write_text(tomli_w.dumps({"lsp": lsp}))
    return root


def only(name: str, command: list[str]) -> dict[str, Any]:
    table: dict[str, Any] = {other: {"disabled": True} for other in PYTHON_BUILTINS if other != name}
    table[name] = {"command": command}
    return table


async def edits(project: Project, file: str, runs: int) -> tuple[float, list[float]]:
    """Time of the first edit and of the ``runs`` next ones (each toggles between two texts)."""
    texts = ["RESULT = helper_1(1)", "RESULT = helper_2(2)"]
    times = []
    async with project, project.session() as session:
        for n in range(runs + 1):
            old, new = texts[n % 2], texts[(n + 1) % 2]
            start = time.perf_counter()
            result = await session.execute("edit", {"filePath": file, "oldString": old, "newString": new})
            times.append(time.perf_counter() - start)
            assert result.output == "Edit applied successfully.", result.output
    return times[0], times[1:]


def case(root: Path, lsp: Any, file: str, runs: int) -> tuple[float, float]:
    project_dir = make_project(root, lsp)
    env = {**os.environ, "HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "config")}
    project = Project(project_dir, trusted=True, env=env, autoload_plugins=False, warn=lambda message: None)
    try:
        first, rest = asyncio.run(edits(project, str(project_dir / file), runs))
    finally:
        project.close()
    return first, statistics.median(rest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    ty, jedi = find("ty"), find("jedi-language-server")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        rows: list[tuple[str, float, float]] = []
        rows.append(("no server (lsp = false)", *case(base / "a", False, "module.py", args.runs)))
        if ty:
            lsp = only("ty", [ty, "server"])
            rows.append(("ty configured, a .txt file", *case(base / "b", lsp, "notes.txt", args.runs)))
            rows.append(("ty (pull diagnostics)", *case(base / "c", lsp, "module.py", args.runs)))
        if jedi:
            lsp = only("jedi-language-server", [jedi])
            rows.append(("jedi-language-server (push)", *case(base / "d", lsp, "module.py", args.runs)))
    baseline = rows[0][2]
    ms = 1000
    print(f"edit of a 800-line Python file, median of {args.runs} edits after the first")
    for name, first, median in rows:
        print(
            f"  {name:<30} median {median * ms:8.1f} ms  ({median / baseline:6.1f}x the baseline)"
            f"   first edit {first * ms:8.1f} ms"
        )
    if not ty or not jedi:
        print("  (ty or jedi-language-server not installed: pip install -e '.[test]')")


if __name__ == "__main__":
    main()
