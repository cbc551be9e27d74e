"""Smoke tests of the MCP test servers and their fixtures, driven by the SDK's own client."""

from __future__ import annotations

import asyncio
import base64
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest
from _mcp_servers import alive, wait_gone
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ToolListChangedNotification

T = TypeVar("T")

DEMO_TOOLS = {
    "echo",
    "nested",
    "image",
    "embedded",
    "fail",
    "fail_silently",
    "structured",
    "slow",
    "die",
    "leave",
    "many_lines",
    "add_tool",
}

Handler = Callable[[Any], Awaitable[None]]


def run(coroutine: Awaitable[T], timeout: float = 30) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


@asynccontextmanager
async def stdio_session(command: list[str], handler: Handler | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, handler: Handler | None = None) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        await session.initialize()
        yield session


def has_key(schema: Any, key: str) -> bool:
    if isinstance(schema, dict):
        return key in schema or any(has_key(value, key) for value in schema.values())
    if isinstance(schema, list):
        return any(has_key(value, key) for value in schema)
    return False


async def check_demo_basics(session: ClientSession) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == DEMO_TOOLS
    schema = tools["nested"].input_schema
    assert has_key(schema, "$defs") or has_key(schema, "$ref")
    assert has_key(schema, "enum")

    result = await session.call_tool("echo", {"text": "hello"})
    assert not result.is_error
    assert [block.text for block in result.content] == ["hello"]

    readme = (await session.read_resource("demo://readme")).contents
    assert [(item.mime_type, item.text) for item in readme] == [("text/markdown", "# Demo")]

    templates = (await session.list_resource_templates()).resource_templates
    assert [template.uri_template for template in templates] == ["demo://notes/{name}"]


def test_demo_server_over_stdio(demo_server_command: list[str]) -> None:
    async def main() -> None:
        async with stdio_session(demo_server_command) as session:
            await check_demo_basics(session)

    run(main())


def test_demo_server_results(demo_server_command: list[str]) -> None:
    """The results the MCP tool source is tested against are the ones promised."""

    async def main() -> None:
        async with stdio_session(demo_server_command) as session:
            order = {"customer": "ann", "size": "large", "items": [{"name": "pen", "quantity": 2}]}
            assert (await session.call_tool("nested", {"order": order})).content[
                0
            ].text == "ann: large: 2 pen"

            image = await session.call_tool("image", {})
            assert [block.type for block in image.content] == ["image", "text"]
            assert base64.b64decode(image.content[0].data).startswith(b"\x89PNG")

            embedded = (await session.call_tool("embedded", {})).content
            kinds = [(block.resource.uri, block.resource.mime_type) for block in embedded]
            assert kinds == [
                ("demo://note", "text/plain"),
                ("demo://pixel.png", "image/png"),
                ("demo://data.bin", "application/octet-stream"),
            ]

            fail = await session.call_tool("fail", {})
            assert fail.is_error and fail.content[0].text == "it broke"
            silent = await session.call_tool("fail_silently", {})
            assert silent.is_error and silent.content == []

            structured = await session.call_tool("structured", {})
            assert structured.content == [] and structured.structured_content == {"answer": 42}

            lines = (await session.call_tool("many_lines", {"count": 5})).content[0].text
            assert lines.splitlines() == [f"line {n}" for n in range(1, 6)]
            assert (await session.call_tool("slow", {"seconds": 0.05})).content[0].text == "done"

            huge = (await session.read_resource("demo://huge.bin")).contents[0]
            assert huge.mime_type == "application/pdf"
            assert len(base64.b64decode(huge.blob)) == 10 * 1024 * 1024 + 10
            logo = (await session.read_resource("demo://logo.png")).contents[0]
            assert logo.mime_type == "image/png"
            note = (await session.read_resource("demo://notes/todo")).contents[0]
            assert note.text == "note todo"

            with pytest.raises(MCPError):
                await session.call_tool("die", {})

    run(main(), timeout=60)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_add_tool_notifies_the_client(transport: str, request: pytest.FixtureRequest) -> None:
    async def main() -> None:
        changed = asyncio.Event()

        async def handler(message: Any) -> None:
            if isinstance(message, ToolListChangedNotification):
                changed.set()

        if transport == "stdio":
            connect = stdio_session(request.getfixturevalue("demo_server_command"), handler)
        else:
            connect = http_session(request.getfixturevalue("demo_http_server"), handler)
        async with connect as session:
            assert session.server_capabilities.tools.list_changed
            assert (await session.call_tool("add_tool", {"name": "extra"})).content[0].text == "added extra"
            await asyncio.wait_for(changed.wait(), 10)
            assert "extra" in {tool.name for tool in (await session.list_tools()).tools}
            assert (await session.call_tool("extra", {})).content[0].text == "extra called"

    run(main())


def test_demo_server_over_http(demo_http_server: str) -> None:
    assert demo_http_server.startswith("http://127.0.0.1:") and demo_http_server.endswith("/mcp")

    async def main() -> None:
        async with http_session(demo_http_server) as session:
            await check_demo_basics(session)

    run(main())


def test_demo_http_server_is_gone_after_die(demo_http_server: Any) -> None:
    async def main() -> None:
        async with http_session(demo_http_server) as session:
            with pytest.raises(MCPError):
                await session.call_tool("die", {})

    run(main())
    assert wait_gone(demo_http_server.process.pid)
    assert demo_http_server.process.wait(60) == 3


def test_everything_server_over_stdio(everything_command: list[str]) -> None:
    async def main() -> None:
        async with stdio_session(everything_command) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "echo" in names
            result = await session.call_tool("echo", {"message": "hi"})
            assert not result.is_error and "hi" in result.content[0].text

    run(main())


def test_everything_server_over_http(everything_http_server: str) -> None:
    async def main() -> None:
        async with http_session(everything_http_server) as session:
            assert "echo" in {tool.name for tool in (await session.list_tools()).tools}

    run(main())


def test_exit_server_fails_at_once(exit_server_command: list[str]) -> None:
    done = subprocess.run(exit_server_command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "cannot start" in done.stderr and done.stdout == ""


def test_garbage_server_prints_no_json(garbage_server_command: list[str]) -> None:
    process = subprocess.Popen(garbage_server_command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        assert all(line.startswith(b"garbage line") for line in lines)
        assert alive(process.pid)
    finally:
        process.kill()
        process.wait(5)
        process.stdout.close()
    assert wait_gone(process.pid)
