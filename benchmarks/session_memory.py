"""How a long-lived session's memory grows with the calls it runs.

Four measurements, each in a process of its own (the resident set size from /proc, after a warm-up and
after the calls):

* ``library``: one :class:`~opencode_cli.session.Session` dispatching ``read`` of a small file 10 000
  times, one model step per call (``session.step()``, as a host's loop does per response);
* ``served``: ``opencode mcp serve`` over stdio, one client (the ``mcp`` SDK's) calling ``read`` of a
  45 KB file 2 000 times;
* ``library-big``: a session that never calls ``step()`` (every call a part of one message) reading a
  27 KB file 2 000 times;
* ``served-big``: ``opencode mcp serve`` answering 60 calls of ``read`` whose argument is 9 MiB long.

Aims: issue 25, the first two grow by less than 20 MB; issue 33, the two big ones stay within 100 MB of
the start. What keeps them flat: the transcript holds a window of the latest messages
(``Session.window``) and at most ``transcript.max_bytes`` characters of parts (8 MiB by default; older
parts stay in the store when the session is remembered), with or without steps.

    python benchmarks/session_memory.py [--library-calls N] [--served-calls N] [--only KIND]
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
BIG_AIM_MB = 100.0
WARM_UP = 300
BIG_ARGUMENT = 9 * 1024 * 1024


def rss_mb(pid: int | str = "self") -> float:
    """The resident set size of process ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc")


async def library(calls: int, directory: Path) -> tuple[float, float]:
    from opencode_cli import Project, ToolCall

    (directory / "small.txt").write_text("a small file\n" * 3)
    async with Project(directory, trusted=True, autoload_plugins=False) as project:
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


async def library_big(calls: int, directory: Path) -> tuple[float, float]:
    """``read`` of a 27 KB file, never a ``step()``: measured from before the first call."""
    from opencode_cli import Project, ToolCall

    (directory / "big.txt").write_text(("y" * 89 + "\n") * 300)
    async with Project(directory, trusted=True, autoload_plugins=False) as project:
        with project.session("build") as session:
            gc.collect()
            before = rss_mb()
            for index in range(calls):  # two offsets in turn: never three identical calls in a row
                arguments = json.dumps({"filePath": "big.txt", "offset": 1 + index % 2})
                part = await session.dispatch(ToolCall("read", arguments))
                assert part.status == "completed", part.text
            gc.collect()
            return before, rss_mb()


async def served_big(calls: int, directory: Path) -> tuple[float, float]:
    """``read`` with a 9 MiB ``filePath`` over stdio serve (each call fails: the name is too long);
    measured from after the handshake."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

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
            before = rss_mb(server)
            for index in range(calls):
                name = chr(ord("a") + index % 26) * BIG_ARGUMENT
                result = await client.call_tool("read", {"filePath": name})
                assert result.is_error
            return before, rss_mb(server)


KINDS = {"library": library, "served": served, "library-big": library_big, "served-big": served_big}


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
    parser.add_argument("--big-library-calls", type=int, default=2_000)
    parser.add_argument("--big-served-calls", type=int, default=60)
    parser.add_argument("--only", choices=list(KINDS), help="run one measurement")
    parser.add_argument("--one", choices=list(KINDS), help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        with tempfile.TemporaryDirectory() as folder:
            work = KINDS[options.one]
            print(json.dumps(asyncio.run(work(options.calls, Path(folder).resolve()))))
        return
    failed = False
    runs = (
        ("library", options.library_calls, AIM_MB),
        ("served", options.served_calls, AIM_MB),
        ("library-big", options.big_library_calls, BIG_AIM_MB),
        ("served-big", options.big_served_calls, BIG_AIM_MB),
    )
    for kind, calls, aim in runs:
        if options.only and kind != options.only:
            continue
        before, after = measure(kind, calls)
        growth = after - before
        verdict = "ok" if growth < aim else f"over the {aim:.0f} MB aim"
        failed |= growth >= aim
        print(f"{kind:11} {calls:6} calls: RSS {before:6.1f} -> {after:6.1f} MB (+{growth:.1f} MB) {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
