"""How a long-lived session's memory grows with the calls it runs.

Two measurements, each after a warm-up, each in a process of its own (the resident set size from
/proc, after the warm-up and after the calls):

* ``library``: one :class:`~opencode_cli.session.Session` dispatching ``read`` of a small file 10 000
  times, one model step per call (``session.step()``, as a host's loop does per response);
* ``served``: ``opencode mcp serve`` over stdio, one client (the ``mcp`` SDK's) calling ``read`` of a
  45 KB file 2 000 times.

Aim (issue 25): each grows by less than 20 MB. What keeps it flat: the transcript holds a window of the
latest messages (``Session.window``; the served sessions' is small, each call being a step), older ones
stay in the store when the session is remembered.

    python benchmarks/session_memory.py [--library-calls N] [--served-calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

AIM_MB = 20.0
WARM_UP = 300


def rss_mb(pid: int | str = "self") -> float:
    """The resident set size of process ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc")


async def library(calls: int, directory: Path) -> tuple[float, float]:
    from opencode_cli import Project, ToolCall

    (directory / "small.txt").write_text("a small file\n" * 3)
    async with Project(directory, autoload_plugins=False) as project:
        with project.session("build") as session:
            arguments = json.dumps({"filePath": "small.txt"})

            async def run(count: int) -> None:
                for _ in range(count):
                    session.step()
                    part = await session.dispatch(ToolCall("read", arguments))
                    assert part.status == "completed", part.text

            await run(WARM_UP)
            gc.collect()
            before = rss_mb()
            await run(calls)
            gc.collect()
            return before, rss_mb()


async def served(calls: int, directory: Path) -> tuple[float, float]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    (directory / "big.txt").write_text(("x" * 89 + "\n") * 500)  # 45 KB, under the truncation limit
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "opencode_cli", "mcp", "serve"],
        cwd=directory,
        env=dict(os.environ),
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            await client.list_tools()
            server = _server_pid(os.getpid())

            async def run(count: int) -> None:
                for _ in range(count):
                    result = await client.call_tool("read", {"filePath": "big.txt"})
                    assert not result.is_error

            await run(WARM_UP)
            before = rss_mb(server)
            await run(calls)
            return before, rss_mb(server)


def _server_pid(parent: int) -> int:
    """The ``opencode mcp serve`` child of this process."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"serve" in cmdline:
                return int(entry.name)
    raise RuntimeError("the server process was not found")


def measure(kind: str, calls: int) -> tuple[float, float]:
    """Run one measurement in a fresh process; ``(before, after)`` in MB."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", kind, "--calls", str(calls)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library-calls", type=int, default=10_000)
    parser.add_argument("--served-calls", type=int, default=2_000)
    parser.add_argument("--one", choices=["library", "served"], help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        with tempfile.TemporaryDirectory() as folder:
            work = library if options.one == "library" else served
            print(json.dumps(asyncio.run(work(options.calls, Path(folder).resolve()))))
        return
    failed = False
    for kind, calls in (("library", options.library_calls), ("served", options.served_calls)):
        before, after = measure(kind, calls)
        growth = after - before
        verdict = "ok" if growth < AIM_MB else f"over the {AIM_MB:.0f} MB aim"
        failed |= growth >= AIM_MB
        print(f"{kind:8} {calls:6} calls: RSS {before:6.1f} -> {after:6.1f} MB (+{growth:.1f} MB) {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
