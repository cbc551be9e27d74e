"""A configured MCP server's ``elicitation/create`` in the middle of one of its tools' calls, served onwards
by ``opencode mcp serve``: the form goes to the serving client (an ``elicitation/create`` within the call
on the handshake revisions, an input-required result on the newest), and the client's answer goes back
to the configured server. A client that takes no elicitation has the configured server declined.

The configured server is the SDK server of ``tests/mcp/servers/asking_server.py`` (stdio): its ``book``
tool elicits a form and returns what it got back."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _mcp_servers import SERVERS
from _serve import SERVE, run, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult

ASKING = SERVERS / "asking_server.py"
TOOL = "asking_book"
MODES = ["legacy", "auto"]  # auto: the newest revision, which this server speaks

pytestmark = pytest.mark.slow


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "opencode.toml").write_text(
        f'[mcp.asking]\ntype = "local"\ncommand = ["{sys.executable}", "{ASKING}"]\n'
    )
    return project_dir


def _params(project: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=SERVE[1:], env=env, cwd=project)


async def _call(client: Client, tool: str) -> Any:
    """Call the proxied ``tool`` once it is listed (the configured server may still be connecting)."""
    for _ in range(300):
        if tool in {listed.name for listed in (await client.list_tools()).tools}:
            return await client.call_tool(tool, {})
        await asyncio.sleep(0.1)
    raise AssertionError(f"{tool} never listed")


async def _book(client: Client) -> Any:
    return await _call(client, TOOL)


@pytest.mark.parametrize("mode", MODES)
def test_the_configured_servers_form_reaches_the_client_and_its_answer_goes_back(
    project: Path, env: dict[str, str], mode: str
) -> None:
    shown: list[Any] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        shown.append(params)
        return ElicitResult(action="accept", content={"name": "Ann", "guests": 4, "meal": "fish"})

    async def main() -> tuple[str, Any]:
        async with Client(_params(project, env), mode=mode, elicitation_callback=person) as client:
            return client.protocol_version, await _book(client)

    version, result = run(main())

    assert (version == "2026-07-28") == (mode == "auto")
    [params] = shown
    assert params.message == "Book a table for tonight?"
    schema = params.requested_schema
    assert schema["required"] == ["name"]
    assert schema["properties"]["guests"]["default"] == 2
    assert schema["properties"]["meal"]["enum"] == ["fish", "pasta"]
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert text.startswith("booking: accept "), text
    assert json.loads(text.removeprefix("booking: accept ")) == {
        "name": "Ann",
        "guests": 4,
        "meal": "fish",
        "terrace": False,  # the schema's default, filled in by the configured server
        "note": None,
    }


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_the_clients_refusal_goes_back(project: Path, env: dict[str, str], action: str) -> None:
    async def person(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action=action)  # type: ignore[arg-type]

    async def main() -> Any:
        async with Client(_params(project, env), mode="legacy", elicitation_callback=person) as client:
            return await _book(client)

    result = run(main())
    assert not result.is_error and text_of(result) == f"booking: {action}"


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_elicitation_has_the_configured_server_declined(
    project: Path, env: dict[str, str], mode: str
) -> None:
    async def main() -> Any:
        async with Client(_params(project, env), mode=mode) as client:
            return await _book(client)

    result = run(main())
    assert not result.is_error and text_of(result) == "booking: decline"


@pytest.mark.parametrize("mode", MODES)
def test_the_configured_servers_url_asks_reach_the_client(
    project: Path, env: dict[str, str], mode: str
) -> None:
    """A URL-mode ``elicitation/create`` and a ``-32042`` error's URLs both go to the serving client as
    URL-mode elicitations (not answered ``cancel`` on its behalf)."""
    shown: list[Any] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        shown.append(params)
        return ElicitResult(action="accept")

    async def main() -> tuple[Any, Any]:
        async with Client(_params(project, env), mode=mode, elicitation_callback=person) as client:
            return await _call(client, "asking_visit"), await _call(client, "asking_authorize")

    visit, authorize = run(main())

    asked = [(params.mode, params.message, params.url, params.elicitation_id) for params in shown]
    legacy = mode == "legacy"  # the newest revision's URL asks carry no elicitationId
    assert asked == [
        (
            "url",
            "Confirm on the shop's page",
            "https://shop.example/confirm?id=7",
            "el-7" if legacy else None,
        ),
        (
            "url",
            "Authorize access to your calendar",
            "https://auth.example/authorize?s=9",
            "au-9" if legacy else None,
        ),
    ]
    assert not visit.is_error and text_of(visit) == "visit: accept"
    assert authorize.is_error
    assert text_of(authorize) == (
        "MCP error -32042: This request requires browser-based authorization.\n"
        "The server sends the user to https://auth.example/authorize?s=9 (Authorize access to your "
        "calendar): the user agreed to open it; call the tool again once they have finished there."
    )
