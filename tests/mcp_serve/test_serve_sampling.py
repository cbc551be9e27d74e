"""A configured MCP server's ``sampling/createMessage`` in the middle of one of its tools' calls, served
onwards by ``opencode mcp serve``: with a model (``--model``) the ``mcp_sampling`` ask goes to the serving
client as an elicitation, and once allowed the model answers the configured server; a refusal, or a
server run without a model, answers the configured server with an error saying so.

The configured server is the SDK server of ``tests/mcp/servers/asking_server.py`` (stdio): its ``haiku``
tool asks for sampling and returns the answer as ``haiku (MODEL): TEXT``. The model is the scripted
OpenAI-compatible server of ``tests/models`` on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import SERVERS
from _serve import SERVE, run, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))

from _scripted import ScriptedModel

ASKING = [sys.executable, str(SERVERS / "asking_server.py")]
TOOL = "asking_haiku"
MODEL = "local/scripted-model"
MODES = ["legacy", "auto"]  # auto: the newest revision, where the ask is an input-required result

pytestmark = pytest.mark.slow


@pytest.fixture
def model(tmp_path: Path) -> Iterator[ScriptedModel]:
    server = ScriptedModel(tmp_path / "scripted")
    try:
        yield server
    finally:
        server.stop()


def _configure(project: Path, model_url: str | None) -> None:
    """``[mcp.asking]``, and with ``model_url`` a ``[provider.local]`` there (no ``model`` key: the model is
    given with ``--model``)."""
    config: dict[str, Any] = {"mcp": {"asking": {"type": "local", "command": ASKING}}}
    if model_url is not None:
        config["provider"] = {"local": {"name": "Scripted", "options": {"baseURL": model_url}}}
    (project / "opencode.toml").write_text(tomli_w.dumps(config))


def _params(project: Path, env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[*SERVE[1:], *args], env=env, cwd=project)


async def _haiku(client: Client) -> Any:
    """Call the proxied ``haiku`` once it is listed (the configured server may still be connecting)."""
    for _ in range(300):
        if TOOL in {tool.name for tool in (await client.list_tools()).tools}:
            return await client.call_tool(TOOL, {"topic": "frogs"})
        await asyncio.sleep(0.1)
    raise AssertionError(f"{TOOL} never listed")


@pytest.mark.parametrize("mode", MODES)
def test_the_sampling_ask_goes_to_the_client_and_the_model_answers_the_configured_server(
    project_dir: Path, env: dict[str, str], model: ScriptedModel, mode: str
) -> None:
    _configure(project_dir, model.url)
    model.script([{"text": "Old pond, a frog jumps"}])
    shown: list[Any] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        shown.append(params)
        return ElicitResult(action="accept", content={"decision": "once"})

    async def main() -> Any:
        params = _params(project_dir, env, "--model", MODEL)
        async with Client(params, mode=mode, elicitation_callback=person) as client:
            return client.protocol_version, await _haiku(client)

    version, result = run(main())

    assert (version == "2026-07-28") == (mode == "auto")
    assert not result.is_error, text_of(result)
    assert text_of(result) == f"haiku ({MODEL}): Old pond, a frog jumps"
    [ask] = shown
    assert ask.message.startswith("OpenCode asks for permission: mcp_sampling on asking"), ask.message
    assert ask.requested_schema["properties"]["decision"]["enum"] == ["once", "always", "reject"]
    [request] = model.requests()
    body = request["body"]
    assert body["model"] == "scripted-model"
    said = [(message["role"], message["content"]) for message in body["messages"]]
    assert said == [("system", "You are a poet."), ("user", "Write a haiku about frogs.")]
    assert 50 in (body.get("max_tokens"), body.get("max_completion_tokens"))


def test_a_rejected_sampling_ask_is_an_error_for_the_configured_server(
    project_dir: Path, env: dict[str, str], model: ScriptedModel
) -> None:
    _configure(project_dir, model.url)
    shown: list[Any] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        shown.append(params)
        return ElicitResult(action="accept", content={"decision": "reject"})

    async def main() -> Any:
        params = _params(project_dir, env, "--model", MODEL)
        async with Client(params, mode="legacy", elicitation_callback=person) as client:
            return await _haiku(client)

    result = run(main())

    assert result.is_error
    assert "Sampling refused: the user did not allow it" in text_of(result), text_of(result)
    assert len(shown) == 1  # the client was asked, and said no
    assert model.requests() == []


def test_without_a_model_the_configured_server_is_told_so(project_dir: Path, env: dict[str, str]) -> None:
    _configure(project_dir, None)
    shown: list[Any] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        shown.append(params)
        return ElicitResult(action="accept", content={"decision": "once"})

    async def main() -> Any:
        async with Client(_params(project_dir, env), mode="legacy", elicitation_callback=person) as client:
            return await _haiku(client)

    result = run(main())

    assert result.is_error
    text = text_of(result)
    assert 'Sampling refused: the session calling "asking" has no model to answer with' in text, text
    assert shown == []  # nothing to allow: nobody is asked
