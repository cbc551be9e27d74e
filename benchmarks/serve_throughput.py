"""``opencode mcp serve`` over streamable HTTP against the ``mcp`` SDK's own server doing the bare minimum.

Both servers run as processes of their own on 127.0.0.1, serving the same project folder:

* ``opencode``: ``opencode mcp serve --transport http``: every call through the session's dispatch
  (repair, doom-loop check, hooks, the permission check, the project-boundary check, validation,
  truncation, the transcript);
* ``bare``: the SDK's :class:`mcp.server.mcpserver.MCPServer` with one ``read`` tool that opens the file
  and returns its text, on the same transport.

Two kinds of client, each at 10, 50 and 200 clients at once (``--clients``):

* ``legacy``: the SDK's ``ClientSession`` with the ``initialize`` handshake, each client its own MCP
  session;
* ``auto``: the SDK's default ``Client(url)``, which discovers the server and speaks the newest revision
  (each request its own exchange, no MCP session).

The clients connect and list the tools, then each calls ``read`` (250 calls a round in all, unless
``--calls`` says how many per client), all at once; the time of those calls gives calls per second. The
servers take turns for ``--rounds`` rounds and the best round of each is compared, in the same run.

Aim (issues 25 and 34): opencode ≥ 0.9× the bare server's calls per second, in each row.

    python benchmarks/serve_throughput.py [--clients N …] [--calls N] [--rounds N] [--modes legacy auto]
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
from typing import Any

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


async def legacy_client(url: str, path: str, calls: int, ready: Any) -> float:
    """One client of the handshake revisions (``initialize``, an MCP session): its ``calls`` reads."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await ready()
        for _ in range(calls):
            result = await session.call_tool("read", {"filePath": path})
            if result.is_error:
                raise SystemExit(f"a call failed: {result.content}")
        return time.perf_counter()


async def auto_client(url: str, path: str, calls: int, ready: Any) -> float:
    """One client as the SDK makes it by default (``Client(url)``: ``server/discover``, then the newest
    revision's requests, each carrying its own envelope): its ``calls`` reads."""
    from mcp import Client

    async with Client(url) as client:
        await client.list_tools()
        await ready()
        for _ in range(calls):
            result = await client.call_tool("read", {"filePath": path})
            if result.is_error:
                raise SystemExit(f"a call failed: {result.content}")
        return time.perf_counter()


CLIENTS = {"legacy": legacy_client, "auto": auto_client}


async def round_of(url: str, path: str, mode: str, clients: int, calls: int) -> float:
    """Calls per second of ``clients`` clients of ``mode`` each calling ``read`` ``calls`` times at once."""
    everyone = asyncio.Event()
    started = 0

    async def ready() -> None:
        nonlocal started
        started += 1
        if started == clients:
            everyone.set()
        await everyone.wait()

    tasks = [asyncio.ensure_future(CLIENTS[mode](url, path, calls, ready)) for _ in range(clients)]
    await everyone.wait()
    begin = time.perf_counter()
    ends = await asyncio.gather(*tasks)
    return clients * calls / (max(ends) - begin)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument(
        "--calls", type=int, default=0, help="calls per client (default: 250 a round, at least 5 each)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", nargs="+", choices=sorted(CLIENTS), default=["legacy", "auto"])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder).resolve()
        (directory / "notes.txt").write_text("".join(f"line {n} of the notes\n" for n in range(40)))
        (directory / "bare.py").write_text(BARE)
        argvs = {
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
        rows = []
        for mode in options.modes:
            for clients in options.clients:
                calls = options.calls or max(5, 250 // clients)
                best: dict[str, float] = {}
                for _ in range(options.rounds):
                    for name, argv in argvs.items():
                        port = free_port()
                        with serving([*argv, str(port)], directory, port) as url:
                            path = "notes.txt" if name == "opencode" else str(directory / "notes.txt")
                            rate = asyncio.run(round_of(url, path, mode, clients, calls))
                        best[name] = max(best.get(name, 0.0), rate)
                rows.append((mode, clients, calls, best["bare"], best["opencode"]))
        print(f"read calls over streamable HTTP, best of {options.rounds} rounds (calls/s):")
        print(f"  {'handshake':<9} {'clients':>7} {'calls':>5}  {'bare':>8}  {'opencode':>8}  ratio")
        for mode, clients, calls, bare, ours in rows:
            ratio = ours / bare
            verdict = "ok" if ratio >= AIM else f"under the {AIM}x aim"
            print(f"  {mode:<9} {clients:>7} {calls:>5}  {bare:8.1f}  {ours:8.1f}  {ratio:5.2f}x  {verdict}")


if __name__ == "__main__":
    main()
