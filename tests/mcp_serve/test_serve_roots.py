"""MCP roots: ``opencode mcp serve`` started without ``--directory`` serves the client's first ``file://``
root and follows ``notifications/roots/list_changed``; each HTTP session its own; an explicit directory
wins over the roots."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _serve import HttpServer, Notes, run, stdio_session, text_of
from mcp.types import ListRootsResult, Root

# roots are the handshake revisions' (the newest one drops them): the SDK says so on each use
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


class Roots:
    """A client's roots, changed by the test (the SDK client's ``list_roots_callback``)."""

    def __init__(self, *directories: Path) -> None:
        self.directories = list(directories)

    async def callback(self, context: Any) -> ListRootsResult:
        return ListRootsResult(
            roots=[Root(uri=directory.as_uri(), name=directory.name) for directory in self.directories]
        )


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    made = {}
    for name in ("started", "first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "where.txt").write_text(f"this is {name}\n")
        made[name] = folder
    (made["second"] / ".opencode" / "tool").mkdir(parents=True)
    (made["second"] / ".opencode" / "tool" / "only_here.py").write_text(
        "from opencode_cli import tool\n\n\n@tool\ndef default() -> str:\n"
        '    """Only in the second root."""\n    return "second\'s own tool"\n'
    )
    return made


def test_the_clients_root_is_served_and_followed(places: dict[str, Path], env: dict[str, str]) -> None:
    roots = Roots(Path("/nonexistent-root"), places["first"])  # the first that is a directory
    notes = Notes()

    async def main() -> tuple[str, str, set[str], str, str]:
        async with stdio_session(
            places["started"], env, list_roots_callback=roots.callback, message_handler=notes.handler
        ) as session:
            first = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            names_before = {tool.name for tool in (await session.list_tools()).tools}
            assert "only_here" not in names_before
            roots.directories = [places["second"]]
            await session.send_roots_list_changed()
            await asyncio.wait_for(notes.changed.wait(), 30)  # told to list again
            names = {tool.name for tool in (await session.list_tools()).tools}
            second = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            own = text_of(await session.call_tool("only_here", {}))
            roots.directories = []  # no root: the directory it was started in
            await session.send_roots_list_changed()
            started = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            return first, second, names, own, started

    first, second, names, own, started = run(main())
    assert "this is first" in first
    assert "this is second" in second and "only_here" in names and own == "second's own tool"
    assert "this is started" in started


def test_an_explicit_directory_wins_over_roots(places: dict[str, Path], env: dict[str, str]) -> None:
    roots = Roots(places["first"])

    async def main() -> str:
        async with stdio_session(
            places["second"], env, "-C", str(places["started"]), list_roots_callback=roots.callback
        ) as session:
            return text_of(await session.call_tool("read", {"filePath": "where.txt"}))

    assert "this is started" in run(main())


def test_each_http_session_has_its_own_root(places: dict[str, Path], env: dict[str, str]) -> None:
    served = HttpServer(places["started"], env)
    one, two = Roots(places["first"]), Roots(places["second"])

    async def main() -> list[str]:
        async with (
            served.session(list_roots_callback=one.callback) as first,
            served.session(list_roots_callback=two.callback) as second,
            served.session() as rootless,
        ):
            return [
                text_of(await session.call_tool("read", {"filePath": "where.txt"}))
                for session in (first, second, rootless)
            ]

    try:
        first, second, rootless = run(main())
    finally:
        served.stop()
    assert "this is first" in first and "this is second" in second and "this is started" in rootless


def test_help_says_which_wins() -> None:
    from typer.testing import CliRunner

    from opencode_cli.cli.app import app

    result = CliRunner().invoke(app, ["mcp", "serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--directory" in text and "It wins over the client's MCP roots" in text
