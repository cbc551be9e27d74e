"""Permission asks reach every client that declares elicitation, whatever its protocol revision and
transport: an ``elicitation/create`` request within the call on the handshake revisions, an
input-required result answered by the client's next call on the newest (the SDK's ``Client`` drives
both)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _serve import SERVE, HttpServer, run, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult

MODES = ["legacy", "auto"]  # auto: the newest revision, which this server speaks


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "opencode.toml").write_text('[permission]\nbash = "ask"\n')
    return project_dir


class Person:
    """The user behind the client: answers each form in turn, and keeps what they were shown."""

    def __init__(self, *answers: ElicitResult) -> None:
        self.answers = list(answers)
        self.shown: list[str] = []

    async def callback(self, context: Any, params: Any) -> ElicitResult:
        self.shown.append(params.message)
        return self.answers.pop(0)


async def _calls(client: Client) -> list[Any]:
    return [
        await client.call_tool("bash", {"command": "printf first", "description": "Print"}),
        await client.call_tool("bash", {"command": "printf second", "description": "Print"}),
        await client.call_tool("bash", {"command": "printf third", "description": "Print"}),
    ]


def _check(results: list[Any], person: Person) -> None:
    first, second, third = results
    assert not first.is_error and text_of(first).startswith("first")
    assert second.is_error and "rejected" in text_of(second).lower()  # declined
    assert "does not support elicitation" not in text_of(second)
    assert not third.is_error and text_of(third).startswith("third")
    assert len(person.shown) == 3 and "bash on printf first" in person.shown[0]


def _person() -> Person:
    return Person(
        ElicitResult(action="accept", content={"decision": "once"}),
        ElicitResult(action="decline"),
        ElicitResult(action="accept", content={"decision": "once"}),
    )


@pytest.mark.parametrize("mode", MODES)
def test_asks_over_http_on_each_revision(project: Path, env: dict[str, str], mode: str) -> None:
    served = HttpServer(project, env)
    person = _person()

    async def main() -> tuple[str, list[Any]]:
        async with Client(served.url, mode=mode, elicitation_callback=person.callback) as client:
            return client.protocol_version, await _calls(client)

    try:
        version, results = run(main())
    finally:
        served.stop()
    assert (version == "2026-07-28") == (mode == "auto")
    _check(results, person)


@pytest.mark.parametrize("mode", MODES)
def test_asks_over_stdio_on_each_revision(project: Path, env: dict[str, str], mode: str) -> None:
    person = _person()
    params = StdioServerParameters(command=sys.executable, args=SERVE[1:], env=env, cwd=project)

    async def main() -> tuple[str, list[Any]]:
        async with Client(params, mode=mode, elicitation_callback=person.callback) as client:
            return client.protocol_version, await _calls(client)

    version, results = run(main())
    assert (version == "2026-07-28") == (mode == "auto")
    _check(results, person)
