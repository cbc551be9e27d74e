"""The file tools on a generated tree of 100 000 small files, next to the bare command they wrap.

For glob and grep, each query is timed through the tool (its ``run``: validation, permission ask,
ripgrep, formatting, all in this process on one event loop) and as the bare ``rg`` command with the same
flags, in the same run, interleaved; the median of N runs of each and their ratio are printed.
Aim: ratio <= 1.15 where ripgrep has to walk the whole tree. A query that matches everywhere shows the
early stop: the tool kills ripgrep after the 101st result while the bare command lists everything.

It also runs the edit and read benchmarks of ``edit_read.py``: edit with a fuzzy (BlockAnchor) match in
a 20 000-line file (aim <= 300 ms) and read of the last lines of a 500 MB file (aim: memory flat, < 64 MB).

    python benchmarks/file_tools.py [--only glob,grep,edit,read] [--runs N] [--files N] [--tree DIR]

Each benchmark is a function taking a :class:`Bench` and printing its figures; add one by writing the
function and naming it in ``BENCHMARKS``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import edit_read

from opencode_cli.context import ToolContext
from opencode_cli.project import Project
from opencode_cli.tools import _ripgrep

MARKER = ".benchmark-tree"
LAYOUT = "v2"  # bump when generate() changes, so a kept --tree is rebuilt
RARE = "rare_token_7f3a"  # in one file of 2000
COMMON = "common"  # in every file


# -- the tree ------------------------------------------------------------------------------------------


def generate(root: Path, count: int) -> None:
    """``count`` small files in 100 directories of 10 subdirectories; one file in 2000 is ``.rs``."""
    stamp = f"{LAYOUT} {count}"
    if (root / MARKER).exists() and (root / MARKER).read_text() == stamp:
        return
    if root.exists():
        shutil.rmtree(root)
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("ignored/\n")
    start = time.perf_counter()
    per_dir = max(1, count // 1000)
    made = 0
    for top in range(100):
        for sub in range(10):
            folder = root / f"pkg{top:02d}" / f"mod{sub}"
            folder.mkdir(parents=True)
            for index in range(per_dir):
                if made >= count:
                    break
                suffix = ".rs" if made % 2000 == 0 else ".txt"
                body = f"# file {made}\n{COMMON} line one\nvalue = {made * 7}\n"
                if made % 2000 == 1000:
                    body += f"here is the {RARE}\n"
                (folder / f"file{index:04d}{suffix}").write_text(body)
                made += 1
    (root / MARKER).write_text(stamp)
    print(f"generated {made} files in {time.perf_counter() - start:.1f} s under {root}")


# -- measuring -----------------------------------------------------------------------------------------


@dataclass
class Bench:
    """What every benchmark gets: the tree, a project on it, the number of runs."""

    root: Path
    runs: int
    project: Project
    loop: asyncio.AbstractEventLoop
    scratch: Path = field(default_factory=lambda: Path(tempfile.gettempdir()))
    results: list[tuple[str, float, float]] = field(default_factory=list)

    def context(self, tool: str) -> ToolContext:
        return ToolContext(
            directory=self.project.directory,
            worktree=self.project.worktree,
            truncator=self.project.generation.truncator,
            env=self.project.env,
            tool=tool,
        )

    def tool_call(self, tool_id: str, args: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        tool = self.project.registry.get(tool_id).tool.load()
        return lambda: tool.run(dict(args), self.context(tool_id))

    def compare(
        self, label: str, call: Callable[[], Awaitable[Any]], command: list[str], cwd: Path
    ) -> tuple[float, float]:
        """Median milliseconds of the tool call and of the bare command, interleaved; prints a row."""

        def bare() -> float:
            start = time.perf_counter()
            subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
            return time.perf_counter() - start

        async def ours() -> tuple[float, Any]:
            start = time.perf_counter()
            result = await call()
            return time.perf_counter() - start, result

        bare()  # warm the page cache and the directory entries
        _, result = self.loop.run_until_complete(ours())
        tool_times, bare_times = [], []
        for _ in range(self.runs):
            elapsed, result = self.loop.run_until_complete(ours())
            tool_times.append(elapsed)
            bare_times.append(bare())
        tool_ms = statistics.median(tool_times) * 1000
        bare_ms = statistics.median(bare_times) * 1000
        best = min(tool_times) / min(bare_times)
        summary = ", ".join(f"{k}={v}" for k, v in result.metadata.items())
        print(
            f"  {label:<34} tool {tool_ms:7.1f} ms  rg {bare_ms:7.1f} ms  "
            f"ratio {tool_ms / bare_ms:4.2f} (best {best:4.2f})  [{summary}]"
        )
        self.results.append((label, tool_ms, bare_ms))
        return tool_ms, bare_ms


def rg(*args: str) -> list[str]:
    return [_ripgrep.binary(), "--no-config", *args]


# -- benchmarks ----------------------------------------------------------------------------------------


def bench_glob(bench: Bench) -> None:
    print("glob (rg --files --glob=PATTERN --glob=!**/.git/** .)")
    queries = [("**/*.rs (1 in 2000: full walk)", "**/*.rs"), ("*.txt (all: early stop)", "*.txt")]
    for label, pattern in queries:
        bench.compare(
            label,
            bench.tool_call("glob", {"pattern": pattern}),
            rg("--files", f"--glob={pattern}", "--glob=!**/.git/**", "."),
            bench.root,
        )


def bench_grep(bench: Bench) -> None:
    print("grep (rg --json --hidden --no-messages [--glob=INCLUDE] --glob=!**/.git/** -- PATTERN .)")
    queries = [
        ("rare token (1 in 2000: full walk)", RARE, None),
        ("rare token, include *.txt", RARE, "*.txt"),
        (r"^value = 7\d*123$, include *.txt", r"^value = 7\d*123$", "*.txt"),
        ("common (every file: early stop)", COMMON, None),
    ]
    for label, pattern, include in queries:
        args = {"pattern": pattern, **({"include": include} if include else {})}
        flags = ["--json", "--hidden", "--no-messages"]
        if include:
            flags.append(f"--glob={include}")
        flags += ["--glob=!**/.git/**", "--", pattern, "."]
        bench.compare(label, bench.tool_call("grep", args), rg(*flags), bench.root)


def bench_edit(bench: Bench) -> None:
    edit_read.bench_edit(bench.scratch, bench.runs)


def bench_read(bench: Bench) -> None:
    edit_read.bench_read(bench.scratch, 500)


BENCHMARKS: dict[str, Callable[[Bench], None]] = {
    "glob": bench_glob,
    "grep": bench_grep,
    "edit": bench_edit,
    "read": bench_read,
}
NEEDS_TREE = {"glob", "grep"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    names = ",".join(BENCHMARKS)
    parser.add_argument("--only", default=names, help=f"comma-separated, from: {names}")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--tree", type=Path, help="keep the generated tree here and reuse it on later runs")
    options = parser.parse_args(argv)
    chosen = [name.strip() for name in options.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")

    with tempfile.TemporaryDirectory(prefix="opencode-bench-") as scratch:
        root = (options.tree or Path(scratch) / "tree").resolve()
        if NEEDS_TREE & set(chosen):
            generate(root, options.files)
        else:
            root.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "HOME": scratch,
            "XDG_CONFIG_HOME": f"{scratch}/config",
            "XDG_DATA_HOME": f"{scratch}/data",
        }
        project = Project(root, trusted=True, env=env, autoload_plugins=False)
        print(f"python {sys.version.split()[0]}, {_ripgrep.binary()}, {os.cpu_count()} CPUs")
        print(f"{options.files} files; median and best of {options.runs} interleaved runs; ratio = tool / rg")
        loop = asyncio.new_event_loop()
        try:
            bench = Bench(root=root, runs=options.runs, project=project, loop=loop, scratch=Path(scratch))
            for name in chosen:
                BENCHMARKS[name](bench)
        finally:
            loop.close()


if __name__ == "__main__":
    main()
