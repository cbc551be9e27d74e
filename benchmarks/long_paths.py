"""How fast ``opencode mcp serve`` refuses a path longer than the system allows, and what it costs the others.

One server (``opencode mcp serve --transport http``) serves a project with a ``sub`` folder; two clients
(the SDK's default ``Client(url)``) talk to it. Measured, each as a median of ``--calls`` calls:

* ``read`` of a small file: the baseline;
* ``read`` of ``"sub/" * 262144`` (1 MiB of path, each component a real folder's name): refused with the
  invalid-arguments text before anything walks it (issue 42: it once held the loop for 74 s);
* the second client's ``read`` of the small file, sent while eight of the first client's long-path calls
  are in flight.

Aim (issue 42): the refusal within 100 ms, and the second client's read as fast as when alone (a ratio near
1x; the long calls' 8 MiB of requests are read by the same server meanwhile).

    python benchmarks/long_paths.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from serve_throughput import free_port, serving

AIM_MS = 100.0
LONG = "sub/" * 262144

#: The refused call: ``read`` of :data:`LONG` (``tests/mcp_serve/test_serve_long_paths.py`` sends it to every
#: file tool; the refusal is the same check, made before any of them touches the filesystem).
LONG_READ = {"filePath": LONG + "notes.txt"}
#: How many refused calls are in flight while the other client reads.
IN_FLIGHT = 8


async def timed(call: Any) -> tuple[float, Any]:
    """Milliseconds ``call`` took, and its result."""
    start = time.perf_counter()
    result = await call
    return (time.perf_counter() - start) * 1000, result


async def measure(url: str, calls: int) -> dict[str, list[float]]:
    from mcp import Client

    figures: dict[str, list[float]] = {"read": [], "long": [], "beside": []}
    async with Client(url) as first, Client(url) as second:
        await first.list_tools()
        await second.list_tools()
        for _ in range(5):  # warm: the first calls of a session make its offer
            await first.call_tool("read", {"filePath": "notes.txt"})
            await second.call_tool("read", {"filePath": "notes.txt"})
        for _ in range(calls):
            took, result = await timed(second.call_tool("read", {"filePath": "notes.txt"}))
            assert not result.is_error, result
            figures["read"].append(took)
            took, result = await timed(first.call_tool("read", LONG_READ))
            assert result.is_error and "invalid arguments" in result.content[0].text, result
            figures["long"].append(took)
            refused = [asyncio.ensure_future(first.call_tool("read", LONG_READ)) for _ in range(IN_FLIGHT)]
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
        f"  the other client's read, {IN_FLIGHT} long calls in flight  {medians['beside']:8.2f}"
        f"   ({ratio:.2f}x the read alone)"
    )


if __name__ == "__main__":
    main()
