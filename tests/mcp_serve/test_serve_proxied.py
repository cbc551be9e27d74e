"""A configured MCP server's tools served onwards by ``opencode mcp serve`` keep what their server said:
the title, output schema and annotations in ``tools/list``; every content item and the structured
content in the result; the progress it reports, forwarded to the client's token; and a call that keeps
reporting progress outlives the request timeout (up to ``maxTotalTimeout``)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from _serve import HttpServer, run, stdio_session, text_of
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = Path(__file__).resolve().parent / "servers" / "faithful_server.py"
#: The request timeout configured for the server (ms): ``slow`` takes longer, ``silent`` too.
TIMEOUT_MS = 4000

pytestmark = pytest.mark.slow


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "opencode.toml").write_text(
        f'[mcp.faithful]\ntype = "local"\ncommand = ["{sys.executable}", "{SERVER}"]\n'
        f"timeout = {TIMEOUT_MS}\nmaxTotalTimeout = 60000\n"
    )
    return project_dir


async def _direct(env: dict[str, str], work: Any) -> Any:
    """``work(session)`` with the SDK's client talking to the server itself."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


async def _listed(session: ClientSession, name: str) -> dict[str, Any]:
    """The tools a session lists, once ``name`` is among them (the server may still be connecting)."""
    for _ in range(300):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        if name in tools:
            return tools
        await asyncio.sleep(0.1)
    raise AssertionError(f"{name} never listed")


def _dump(item: Any) -> Any:
    return item.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_tools_results_and_progress_pass_through_unchanged(project: Path, env: dict[str, str]) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def asked(session: ClientSession) -> tuple[dict[str, Any], Any, Any]:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        return tools, await session.call_tool("add", {"a": 2, "b": 3}), await session.call_tool("kinds", {})

    async def served() -> tuple[dict[str, Any], Any, Any, Any, Any]:
        async with stdio_session(project, env) as session:
            tools = await _listed(session, "faithful_add")
            add = await session.call_tool("faithful_add", {"a": 2, "b": 3})
            kinds = await session.call_tool("faithful_kinds", {})
            slow = await session.call_tool(
                "faithful_slow", {"steps": 4, "pause": 1.5}, progress_callback=on_progress
            )
            silent = await session.call_tool("faithful_silent", {"pause": 30})
            return tools, add, kinds, slow, silent

    direct_tools, direct_add, direct_kinds = run(_direct(env, asked))
    tools, add, kinds, slow, silent = run(served(), 180)

    for name in ("add", "kinds", "slow"):
        ours, theirs = tools[f"faithful_{name}"], direct_tools[name]
        assert ours.title == theirs.title and ours.output_schema == theirs.output_schema
        assert ours.annotations == theirs.annotations
    assert tools["faithful_add"].title == "Add numbers" and tools["faithful_add"].annotations.read_only_hint
    assert tools["faithful_add"].output_schema["properties"]["total"]["type"] == "integer"

    assert add.structured_content == direct_add.structured_content == {"total": 5, "parts": [2, 3]}
    assert [_dump(item) for item in add.content] == [_dump(item) for item in direct_add.content]
    assert [item.type for item in kinds.content] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource",
    ]
    assert [_dump(item) for item in kinds.content] == [_dump(item) for item in direct_kinds.content]

    assert not slow.is_error and text_of(slow) == "done after 4 steps"  # 6 s in all, 4 s timeout
    assert progress == [(step, 4, f"step {step} of 4") for step in range(1, 5)]
    assert silent.is_error and "did not answer tools/call within 4 s" in text_of(silent)


def test_a_declared_header_is_checked_against_the_argument(project: Path, env: dict[str, str]) -> None:
    """A configured server's tool that declares an argument as an ``Mcp-Param-*`` header keeps the
    declaration when served onwards, and the newest revision's check holds it to the argument: a client
    whose header agrees is answered, one whose header says otherwise is refused (``HEADER_MISMATCH``).
    The server's own tools declare no header, and a stray one changes nothing."""
    import httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
    from mcp_types import HEADER_MISMATCH

    async def elsewhere(request: httpx.Request) -> None:
        request.headers["Mcp-Param-Region"] = "us"

    async def session_with(http: httpx.AsyncClient) -> Any:
        async with (
            streamable_http_client(server.url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.discover()
            tools = await _listed(session, "faithful_routed")
            schema = tools["faithful_routed"].input_schema
            agreed = await session.call_tool("faithful_routed", {"region": "eu"})
            with pytest.raises(MCPError) as refused:
                await session.call_tool("faithful_routed", {"region": "eu"}, meta={"lie": True})
            return schema, agreed, refused.value

    async def honest_and_lying() -> tuple[Any, Any, Any, Any]:
        lying = False

        async def maybe_lie(request: httpx.Request) -> None:
            if lying and b"faithful_routed" in request.content:
                await elsewhere(request)

        async def mark(request: httpx.Request) -> None:
            nonlocal lying
            lying = b'"lie"' in request.content

        async with httpx.AsyncClient(event_hooks={"request": [mark, maybe_lie]}) as http:
            schema, agreed, refused = await session_with(http)
        async with (
            httpx.AsyncClient(event_hooks={"request": [elsewhere]}) as http,
            streamable_http_client(server.url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.discover()
            own = await session.call_tool("read", {"filePath": "notes.txt"})
        return schema, agreed, refused, own

    (project / "notes.txt").write_text("a note\n")
    server = HttpServer(project, env)
    try:
        schema, agreed, refused, own = run(honest_and_lying(), 120)
    finally:
        server.stop()
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"
    assert text_of(agreed) == "routed to eu" and not agreed.is_error
    assert refused.error.code == HEADER_MISMATCH
    assert "1: a note" in text_of(own) and not own.is_error
