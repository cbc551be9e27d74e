"""Edit with a fuzzy (BlockAnchor) match in a 20 000-line file, and read of the last lines of a 500 MB file.

(a) The edit tool, called through its normal wrap, on a generated 20 000-line Python file whose
    ``oldString`` differs from the file in two middle lines of one function, so the exact and the
    line-trimmed replacers fail and BlockAnchor finds it. Prints the median over several runs, a breakdown
    (replace alone, the diff) and, for comparison, the not-found case where all nine replacers run.
    Aim: median <= 300 ms.
(b) The read tool with ``offset`` near the end of a 500 MB file (and of a 50 MB one, to show that memory
    does not grow with the size), in a fresh process: wall time, the tracemalloc peak of the call, and
    the process's peak RSS (and how much the read added to it). Aim: memory independent of the file
    size, < 64 MB.

Files are generated in a temporary directory that is removed afterwards. ``benchmarks/file_tools.py``
runs these too (``--only edit,read``); this script runs them alone.

    python benchmarks/edit_read.py [--runs N] [--big-mb MB] [--skip-read]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from opencode_cli import files
from opencode_cli.context import ToolContext
from opencode_cli.contract import Tool, define
from opencode_cli.errors import ToolError
from opencode_cli.tools import _replace
from opencode_cli.truncate import Truncator

FUNCTIONS = 2000  # 10 lines each -> 20 000 lines
TARGET = 1234


def function_text(n: int) -> str:
    return (
        f"def handler_{n:05d}(request, options=None):\n"
        f"    payload = request.json()\n"
        f"    user = lookup_user(payload['user_id'], retries={n % 7})\n"
        f"    if user is None:\n"
        f"        raise NotFound('user missing for handler {n}')\n"
        f"    record = build_record(user, payload, flavour='v{n % 13}')\n"
        f"    store.save(record, timeout={n % 11 + 1})\n"
        f"    audit('handler_{n:05d}', user.id)\n"
        f"    return respond(record, status=200)\n"
        f"\n"
    )


def source() -> str:
    return "".join(function_text(n) for n in range(FUNCTIONS))


def fuzzy_old_string() -> str:
    """The target function as a model might misremember it: two middle lines slightly off."""
    lines = function_text(TARGET).split("\n")[:9]
    lines[2] = lines[2].replace("retries=", "retry_count=")
    lines[5] = lines[5].replace("flavour=", "flavor=")
    return "\n".join(lines)


def tool(tool_id: str) -> Tool:
    return define(tool_id, f"opencode_cli.tools.{tool_id}:init").load()


def context(root: Path) -> ToolContext:
    return ToolContext(directory=root, worktree=root, truncator=Truncator(root / ".tool-output"))


def bench_edit(root: Path, runs: int) -> None:
    path = root / "handlers.py"
    text = source()
    old = fuzzy_old_string()
    new = f"def handler_{TARGET:05d}(request, options=None):\n    return respond(None, status=204)"
    assert text.count("\n") == FUNCTIONS * 10
    assert old not in text
    assert list(_replace.line_trimmed(text, old)) == []
    assert len(list(_replace.block_anchor(text, old))) == 1
    edit = tool("edit")

    times = []
    for _ in range(runs):
        path.write_text(text)
        start = time.perf_counter()
        result = asyncio.run(
            edit.run({"filePath": str(path), "oldString": old, "newString": new}, context(root))
        )
        times.append(time.perf_counter() - start)
    assert result.output == "Edit applied successfully."
    assert "respond(None, status=204)" in path.read_text()

    replace_times, diff_times, miss_times = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        edited = _replace.replace(text, old, new)
        replace_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        files.diff_for(str(path), text, edited)
        files.count_changes(text, edited)
        diff_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        with contextlib.suppress(ToolError):
            _replace.replace(text, old.replace("def handler", "def missing"), new)
        miss_times.append(time.perf_counter() - start)

    ms = 1000
    size = f"{FUNCTIONS * 10} lines ({len(text) / 1e6:.1f} MB)"
    print(f"(a) edit, fuzzy BlockAnchor match, {size}, {runs} runs")
    print(f"    edit tool (whole call): median {statistics.median(times) * ms:7.1f} ms   (aim <= 300 ms)")
    print(f"      replace() alone:      median {statistics.median(replace_times) * ms:7.1f} ms")
    print(f"      diff + line counts:   median {statistics.median(diff_times) * ms:7.1f} ms")
    print(f"    not found (all 9 replacers run): median {statistics.median(miss_times) * ms:7.1f} ms")


def make_big(path: Path, megabytes: int) -> int:
    line = "x" * 89 + "\n"  # with the 10-digit prefix: 100 bytes a line
    block_lines = 10_000
    lines = megabytes * 1_000_000 // 100
    with open(path, "w") as handle:
        for start in range(1, lines + 1, block_lines):
            stop = min(start + block_lines, lines + 1)
            handle.write("".join(f"{n:09d} {line}" for n in range(start, stop)))
    return lines


READ_CHILD = """
import asyncio, gc, json, resource, sys, time, tracemalloc
from pathlib import Path
from opencode_cli.context import ToolContext
from opencode_cli.contract import define
from opencode_cli.truncate import Truncator

path, lines = Path(sys.argv[1]), int(sys.argv[2])
read = define("read", "opencode_cli.tools.read:init").load()

def run(args):
    ctx = ToolContext(directory=path.parent, worktree=path.parent, truncator=Truncator(path.parent / ".out"))
    return asyncio.run(read.run(args, ctx))

run({"filePath": str(path), "limit": 1})  # import everything the read needs first
gc.collect()
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
result = run({"filePath": str(path), "offset": lines - 9, "limit": 10})
seconds = time.perf_counter() - start
rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
run({"filePath": str(path), "offset": lines - 9, "limit": 10})
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
assert f"{lines}: {lines:09d} " in result.output, result.output[-500:]
assert "(End of file - total" in result.output
growth = rss_after - rss_before
print(json.dumps({"seconds": seconds, "peak": peak, "rss_kb": rss_after, "rss_growth_kb": growth}))
"""


def bench_read_one(root: Path, megabytes: int) -> dict[str, Any]:
    """Generate the file here; read it in a fresh process so its peak RSS says what the read cost."""
    path = root / f"big-{megabytes}mb.log"
    lines = make_big(path, megabytes)
    done = subprocess.run(
        [sys.executable, "-c", READ_CHILD, str(path), str(lines)], capture_output=True, text=True, check=True
    )
    figures = json.loads(done.stdout)
    figures.update(size=path.stat().st_size, lines=lines)
    path.unlink()
    return figures


def bench_read(root: Path, big_mb: int) -> None:
    print("(b) read, last 10 lines through the read tool (offset near the end)")
    for megabytes in (big_mb // 10, big_mb):
        figures = bench_read_one(root, megabytes)
        print(
            f"    {figures['size'] / 1e6:6.0f} MB, {figures['lines']:>9,} lines: "
            f"{figures['seconds'] * 1000:7.0f} ms, tracemalloc peak {figures['peak'] / 1e6:5.2f} MB, "
            f"process peak RSS {figures['rss_kb'] / 1024:5.1f} MB "
            f"(+{figures['rss_growth_kb'] / 1024:.1f} MB during the read)   (aim < 64 MB, flat)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--big-mb", type=int, default=500)
    parser.add_argument("--skip-read", action="store_true")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="opencode-bench-"))
    try:
        bench_edit(root, options.runs)
        if not options.skip_read:
            bench_read(root, options.big_mb)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
