"""``opencode mcp serve`` over streamable HTTP against the ``mcp`` SDK's own server doing the bare minimum.

Both servers run as processes of their own on 127.0.0.1, serving the same project folder:

* ``opencode``: ``opencode mcp serve --transport http``: every call through the session's dispatch
  (repair, doom-loop check, hooks, the permission check, the project-boundary check, validation,
  truncation, the transcript);
* ``bare``: the SDK's :class:`mcp.server.mcpserver.MCPServer` with one ``read`` tool that opens the file
  and returns its text, on the same transport.

Ten clients (the SDK's ``ClientSession``, each its own MCP session) connect and list the tools, then each
calls ``read`` 25 times, all clients at once; the time of those 250 calls gives calls per second. The
servers take turns for ``--rounds`` rounds and the best round of each is compared.

Aim (issue 25): opencode ≥ 0.9× the bare server's calls per second.

    python benchmarks/serve_throughput.py [--clients N] [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

AIM = 0.9

BARE = '''
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def read(filePath: str) -> str:
    """Read a file."""
    with open(filePath, encoding="utf-8") as handle:
        return handle.read()


server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(argv: list[str], directory: Path, port: int) -> Iterator[str]:
    """Run a server until the block ends; yields its URL once it accepts connections."""
    process = subprocess.Popen(
        argv, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"{argv[:4]} exited with {process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{argv[:4]} did not listen within 60 s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


async def round_of(url: str, path: str, clients: int, calls: int) -> float:
    """Calls per second of ``clients`` clients each calling ``read`` ``calls`` times at once."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    ready = asyncio.Event()
    started = 0
    arguments = {"filePath": path}

    async def client() -> None:
        nonlocal started
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            started += 1
            if started == clients:
                ready.set()
            await ready.wait()
            for _ in range(calls):
                result = await session.call_tool("read", arguments)
                if result.is_error:
                    raise SystemExit(f"a call failed: {result.content}")
            timing.append(time.perf_counter())

    timing: list[float] = []
    tasks = [asyncio.ensure_future(client()) for _ in range(clients)]
    await ready.wait()
    begin = time.perf_counter()
    await asyncio.gather(*tasks)
    return clients * calls / (max(timing) - begin)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--calls", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder).resolve()
        (directory / "notes.txt").write_text("".join(f"line {n} of the notes\n" for n in range(40)))
        (directory / "bare.py").write_text(BARE)
        env_argv = {
            "opencode": [
                sys.executable,
                "-m",
                "opencode_cli",
                "mcp",
                "serve",
                "--transport",
                "http",
                "--port",
            ],
            "bare": [sys.executable, str(directory / "bare.py")],
        }
        best: dict[str, float] = {}
        for _ in range(options.rounds):
            for name, argv in env_argv.items():
                port = free_port()
                with serving([*argv, str(port)], directory, port) as url:
                    path = "notes.txt" if name == "opencode" else str(directory / "notes.txt")
                    rate = asyncio.run(round_of(url, path, options.clients, options.calls))
                best[name] = max(best.get(name, 0.0), rate)
        ratio = best["opencode"] / best["bare"]
        total = options.clients * options.calls
        rounds = options.rounds
        print(f"{options.clients} clients x {options.calls} read calls ({total} a round), best of {rounds}:")
        print(f"  bare MCPServer   {best['bare']:7.1f} calls/s")
        print(f"  opencode serve   {best['opencode']:7.1f} calls/s")
        verdict = "ok" if ratio >= AIM else f"under the {AIM}x aim"
        print(f"  ratio            {ratio:7.2f}x  {verdict}")


if __name__ == "__main__":
    main()
