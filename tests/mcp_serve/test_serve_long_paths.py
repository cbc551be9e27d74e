"""A path longer than the system allows, sent to each file tool of ``opencode mcp serve``: refused at once
with the tool's invalid-arguments text, while another client's ``read`` is answered as usual.

Resolving a path (``os.path.realpath``) costs time that grows with the square of its components: before
the bound, a ``read`` of ``"sub/" * 262144`` (1 MiB) held the server's loop for 74 s, and every other
client waited with it. The refusal's text says the length was judged, not the path walked; that the
second client is served while the first one's calls are in flight is an ordering of the exchange. Only
the test's overall timeout (:data:`_serve.TEST_TIMEOUT`, 90 s) stands for "promptly": a stalled loop
would need minutes for the eight calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _serve import HttpServer, run, text_of

from opencode_cli.context import NAME_MAX, PATH_MAX

#: 1 MiB of path, each component an existing directory's name.
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


@pytest.fixture
def server(project_dir: Path, env: dict[str, str]) -> Iterator[HttpServer]:
    (project_dir / "sub").mkdir()
    (project_dir / "sub" / "notes.txt").write_text("a note\n")
    (project_dir / "notes.txt").write_text("the second client's file\n")
    served = HttpServer(project_dir, env | {"OPENCODE_EXPERIMENTAL_LSP_TOOL": "true"}, "--yes")
    yield served
    served.stop()


def test_a_path_longer_than_the_system_allows_is_refused_while_another_client_is_served(
    server: HttpServer,
) -> None:
    async def main() -> tuple[dict[str, Any], Any]:
        async with server.session() as first, server.session() as second:
            offered = {tool.name for tool in (await first.list_tools()).tools}
            assert set(CALLS) <= offered, set(CALLS) - offered
            # the first client's calls go out first; the second client's read is sent while they are
            # unanswered, and answered as usual
            refused = [asyncio.ensure_future(first.call_tool(n, a)) for n, a in CALLS.items()]
            served = await second.call_tool("read", {"filePath": "notes.txt"})
            return dict(zip(CALLS, await asyncio.gather(*refused), strict=True)), served

    refused, served = run(main())
    assert "1: the second client's file" in text_of(served) and not served.is_error
    for name, result in refused.items():
        text = text_of(result)
        assert result.is_error, name
        assert text.startswith(f"The {name} tool was called with invalid arguments: the path is "), text
        assert f"the system takes at most {PATH_MAX - 1}.\n" in text, text
        assert text.endswith("Please rewrite the input so it satisfies the expected schema."), text


def test_a_name_longer_than_the_system_allows_is_refused(server: HttpServer) -> None:
    async def main() -> Any:
        async with server.session() as session:
            return await session.call_tool("read", {"filePath": "n" * (NAME_MAX + 1)})

    result = run(main())
    assert result.is_error
    assert text_of(result).startswith(
        f"The read tool was called with invalid arguments: a name in the path is {NAME_MAX + 1} bytes "
        f"long; the system takes at most {NAME_MAX}.\n"
    )
