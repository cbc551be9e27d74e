"""How fast ``opencode mcp serve`` refuses a path longer than the system allows, and what it costs the others.

One server (``opencode mcp serve --transport http``) serves a project with a ``sub`` folder; two clients
(the SDK's default ``Client(url)``) talk to it. Measured, each as a median of ``--calls`` calls:

* ``read`` of a small file: the baseline;
* ``read`` of ``"sub/" * 262144`` (1 MiB of path, each component a real folder's name): refused with the
  invalid-arguments text before anything walks it (issue 42: it once held the loop for 74 s);
* the second client's ``read`` of the small file, sent while the first client's eight long-path calls (one
  to each file tool) are in flight.

Aim (issue 42): the refusal within 100 ms, and the second client's read as fast as when alone (a ratio near
1x; the long calls' 8 MiB of requests are read by the same server meanwhile).

    python benchmarks/long_paths.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from serve_throughput import free_port, serving

AIM_MS = 100.0
LONG = "sub/" * 262144

#: Each tool that takes a path, with arguments naming :data:`LONG` (apply_patch: in its patch).
CALLS: dict[str, dict[str, Any]] = {
    "read": {"filePath": LONG + "notes.txt"},
    "write": {"filePath": LONG + "new.txt", "content": "x"},
    "edit": {"filePath": LONG + "notes.txt", "oldString": "a", "newString": "b"},
    "glob": {"pattern": "*.txt", "path": LONG},
    "grep": {"pattern": "notes", "path": LONG},
    "bash": {"command": "pwd", "description": "Where", "workdir": LONG},
    "apply_patch": {"patchText": f"*** Begin Patch\n*** Add File: {LONG}new.txt\n+x\n*** End Patch"},
    "lsp": {"operation": "hover", "filePath": LONG + "notes.txt", "line": 1, "character": 1},
}


async def timed(call: Any) -> tuple[float, Any]:
    """Milliseconds ``call`` took, and its result."""
    start = time.perf_counter()
    result = await call
    return (time.perf_counter() - start) * 1000, result


async def measure(url: str, calls: int) -> dict[str, list[float]]:
    from mcp import Client

    figures: dict[str, list[float]] = {"read": [], "long": [], "beside": []}
    async with Client(url) as first, Client(url) as second:
        offered = {tool.name for tool in (await first.list_tools()).tools}
        await second.list_tools()
        for _ in range(5):  # warm: the first calls of a session make its offer
            await first.call_tool("read", {"filePath": "notes.txt"})
            await second.call_tool("read", {"filePath": "notes.txt"})
        for _ in range(calls):
            took, result = await timed(second.call_tool("read", {"filePath": "notes.txt"}))
            assert not result.is_error, result
            figures["read"].append(took)
            took, result = await timed(first.call_tool("read", CALLS["read"]))
            assert result.is_error and "invalid arguments" in result.content[0].text, result
            figures["long"].append(took)
            refused = [
                asyncio.ensure_future(first.call_tool(name, arguments))
                for name, arguments in CALLS.items()
                if name in offered
            ]
            await asyncio.sleep(0)  # the long calls go out first
            took, result = await timed(second.call_tool("read", {"filePath": "notes.txt"}))
            assert not result.is_error, result
            figures["beside"].append(took)
            for each in await asyncio.gather(*refused):
                assert each.is_error, each
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder).resolve()
        (directory / "sub").mkdir()
        (directory / "sub" / "notes.txt").write_text("a note\n")
        (directory / "notes.txt").write_text("the second client's file\n")
        port = free_port()
        os.environ["OPENCODE_EXPERIMENTAL_LSP_TOOL"] = "true"  # the lsp tool is offered (and refuses) too
        serve = ["mcp", "serve", "--transport", "http", "--port", str(port), "--yes"]  # asks approved
        with serving([sys.executable, "-m", "opencode_cli", *serve], directory, port) as url:
            figures = asyncio.run(measure(url, options.calls))
    medians = {key: statistics.median(values) for key, values in figures.items()}
    print(f"opencode mcp serve over streamable HTTP, medians of {options.calls} calls (ms):")
    print(f"  read of a small file, alone                      {medians['read']:8.2f}")
    verdict = "meets" if medians["long"] <= AIM_MS else "misses"
    print(
        f"  read of a 1 MiB path, refused                    {medians['long']:8.2f}"
        f"   ({verdict} the aim of {AIM_MS:.0f} ms)"
    )
    ratio = medians["beside"] / medians["read"]
    print(
        f"  the other client's read, 8 long calls in flight  {medians['beside']:8.2f}"
        f"   ({ratio:.2f}x the read alone)"
    )


if __name__ == "__main__":
    main()
