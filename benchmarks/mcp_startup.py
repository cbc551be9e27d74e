"""What MCP servers cost through the tool layer, next to the raw ``mcp`` SDK client, in one run.

A trivial stdio server (the SDK's ``MCPServer`` with one ``echo`` tool) is written to a temporary
directory, and three figures are taken, each as a ratio to a baseline measured in the same run:

* ``tools list, 1 server`` and ``tools list, 5 servers``: ``opencode tools list`` as a process, in a
  project configuring that many copies of the server, against a Python process that connects the raw
  SDK client (``stdio_client`` + ``ClientSession``) to as many servers concurrently, initializes, lists
  the tools and closes. Both include their interpreter's start; the runs alternate.
* ``200 calls``: 200 calls of ``echo`` through :meth:`Session.dispatch` (a project with the server
  open) against 200 ``ClientSession.call_tool`` on a raw connection to the same server (which listed the
  tools first, as a client does), in alternating blocks of 20. The connections are made before the clock
  starts.

Aims (issue 26): ≤ 1.2× for ``tools list``, ≤ 1.1× for the calls. Prints medians and ratios; nothing
is asserted.

    python benchmarks/mcp_startup.py [--rounds N] [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomli_w

SERVER = '''
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench")


@mcp.tool()
def echo(text: str) -> str:
    """Give the text back."""
    return text


mcp.run("stdio")
'''

RAW_CLIENT = """
import asyncio
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def one(server: str) -> int:
    params = StdioServerParameters(command=sys.executable, args=[server])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return len((await session.list_tools()).tools)


async def main(count: int, server: str) -> None:
    listed = await asyncio.gather(*(one(server) for _ in range(count)))
    assert listed == [1] * count, listed


asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
"""

#: Calls in a row before the other side's turn.
BLOCK = 20

AIMS = {"tools list, 1 server": 1.2, "tools list, 5 servers": 1.2, "calls": 1.1}


def environment(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }


def make_project(root: Path, server: Path, count: int) -> Path:
    project = root / f"project-{count}"
    (project / ".git").mkdir(parents=True)
    servers = {f"bench{n}": {"type": "local", "command": [sys.executable, str(server)]} for n in range(count)}
    (project / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))
    return project


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def tools_list(root: Path, server: Path, count: int, rounds: int) -> tuple[float, float]:
    """Medians (s) of ``opencode tools list`` and of the raw client, with ``count`` servers."""
    env = environment(root)
    project = make_project(root, server, count)
    opencode = str(Path(sys.executable).parent / "opencode")
    raw_script = root / "raw_client.py"
    raw_script.write_text(RAW_CLIENT)
    listed = subprocess.run([opencode, "tools", "list"], cwd=project, env=env, capture_output=True, text=True)
    missing = [f"bench{n}_echo" for n in range(count) if f"bench{n}_echo" not in listed.stdout]
    if missing:
        raise SystemExit(f"opencode tools list did not list {missing}:\n{listed.stdout}\n{listed.stderr}")
    ours, raw = [], []
    for _ in range(rounds):
        ours.append(timed([opencode, "tools", "list"], project, env))
        raw.append(timed([sys.executable, str(raw_script), str(count), str(server)], project, env))
    return statistics.median(ours), statistics.median(raw)


async def calls(root: Path, server: Path, count: int, rounds: int) -> tuple[float, float]:
    """Medians (s) of ``count`` calls through ``Session.dispatch`` and through the raw client."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from opencode_cli import Project, ToolCall

    project_dir = make_project(root / "calls", server, 1)
    ours, raw = [], []
    async with Project(project_dir, trusted=True, env=environment(root)) as project:
        await project.open()
        params = StdioServerParameters(command=sys.executable, args=[str(server)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # as a client does (and the SDK then checks results against schemas)
            async with project.session("build") as ours_session:
                ours_session.resolve()
                for round_ in range(rounds):
                    # blocks of BLOCK calls, alternating, so that a change in the machine's load falls on both
                    spent = {"ours": 0.0, "raw": 0.0}
                    for block in range(0, count, BLOCK):
                        texts = [f"{round_}-{n}" for n in range(block, min(block + BLOCK, count))]
                        batch = [ToolCall("bench0_echo", {"text": text}) for text in texts]
                        start = time.perf_counter()
                        for call in batch:
                            part = await ours_session.dispatch(call)
                        spent["ours"] += time.perf_counter() - start
                        assert part.status == "completed" and part.output == texts[-1], part

                        start = time.perf_counter()
                        for text in texts:
                            result = await session.call_tool("echo", {"text": text})
                        spent["raw"] += time.perf_counter() - start
                        assert not result.is_error
                    ours.append(spent["ours"])
                    raw.append(spent["raw"])
    return statistics.median(ours), statistics.median(raw)


def report(name: str, ours: float, raw: float, unit: str = "ms") -> None:
    ratio = ours / raw
    verdict = "meets" if ratio <= AIMS[name] else "misses"
    print(
        f"  {name:<24} opencode {ours * 1000:9.1f} {unit}   raw SDK {raw * 1000:9.1f} {unit}"
        f"   ratio {ratio:5.2f}×  ({verdict} the aim of {AIMS[name]:.1f}×)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        server = root / "echo_server.py"
        server.write_text(SERVER)
        print(f"medians of {args.rounds} rounds; the raw SDK client measured in the same run")
        for count in (1, 5):
            ours, raw = tools_list(root, server, count, args.rounds)
            report(f"tools list, {count} server{'s' if count > 1 else ''}", ours, raw)
        ours, raw = asyncio.run(calls(root, server, args.calls, args.rounds))
        print(f"  ({args.calls} calls of echo, the connections already made)")
        report("calls", ours, raw)


if __name__ == "__main__":
    main()
