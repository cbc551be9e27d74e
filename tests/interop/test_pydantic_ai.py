"""A real pydantic-ai agent, driven by pydantic-ai's own FunctionModel, using OpenCode's tools."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _images import PNG
from pydantic_ai import Agent, BinaryContent, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from opencode_cli.adapters.pydantic_ai import OpencodeToolset
from opencode_cli.context import PermissionRequest
from opencode_cli.project import Project
from opencode_cli.session import Decision


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


class Host:
    """The host's permission callback: records each request and answers ``once``."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append((request.permission, list(request.patterns)))
        return Decision("once")


class Scripted:
    """A FunctionModel function: the next response of ``steps`` for each request, then a final text;
    keeps every request and the tools the model was offered."""

    def __init__(self, steps: list[list[ToolCallPart]]) -> None:
        self.steps = steps
        self.requests: list[ModelRequest] = []
        self.offered: list[Any] = []

    def __call__(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        self.requests.append(messages[-1])
        self.offered.append(info.function_tools)
        step = len(self.requests) - 1
        if step < len(self.steps):
            return ModelResponse(parts=self.steps[step])
        return ModelResponse(parts=[TextPart("fixed")])


def returned(request: ModelRequest) -> ToolReturnPart:
    [part] = [p for p in request.parts if isinstance(p, ToolReturnPart)]
    return part


def error_seen(part: ToolReturnPart) -> str:
    """The error text the model is sent for a failed or retried call (pydantic-ai wraps it in JSON)."""
    return json.loads(part.model_response_str())["error"]


def test_an_agent_reads_edits_retries_and_is_denied(agent_project: Path, env: dict[str, str]) -> None:
    readme = str(agent_project / "README.md")
    model = Scripted(
        [
            [ToolCallPart("read", {"filePath": readme}, tool_call_id="c1")],
            [ToolCallPart("edit", {"filePath": readme, "oldString": "wrld"}, tool_call_id="c2")],  # invalid
            [
                ToolCallPart(
                    "edit", {"filePath": readme, "oldString": "wrld", "newString": "world"}, tool_call_id="c3"
                )
            ],
            [ToolCallPart("bash", {"command": "rm -rf build", "description": "Clean"}, tool_call_id="c4")],
            [ToolCallPart("read", {"filePath": "dot.png"}, tool_call_id="c5")],
        ]
    )
    host = Host()

    async def main() -> Any:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session("build", model="anthropic/claude-sonnet-4-5", prompt=host) as session:
                agent = Agent(FunctionModel(model), toolsets=[OpencodeToolset(session)])
                result = await agent.run("Fix the typo in README.md")
                return result.output, session.resolve()

    output, wire = run(main())
    assert output == "fixed"
    assert (agent_project / "README.md").read_text() == "hello world\n"

    # the model saw the tools as the session offers them to this model
    offered = {tool.name: tool for tool in model.offered[0]}
    assert sorted(offered) == sorted(tool.name for tool in wire)
    for tool in wire:
        assert offered[tool.name].parameters_json_schema == tool.parameters
        assert offered[tool.name].description == tool.description
        assert offered[tool.name].strict is tool.strict

    read, invalid, edit, denied, image = (returned(request) for request in model.requests[1:6])
    assert "1: hello wrld" in read.model_response_str()
    assert read.metadata["title"] == "README.md"
    # the invalid call came back as a retry with OpenCode's invalid-arguments text
    assert invalid.outcome == "retried"
    assert error_seen(invalid) == (
        'The edit tool was called with invalid arguments: ["newString"]: Field required (expected string).\n'
        "Please rewrite the input so it satisfies the expected schema."
    )
    assert edit.model_response_str() == "Edit applied successfully."
    # the edit was asked and the host answered; rm was denied without asking
    assert host.asked == [("edit", ["README.md"])]
    assert denied.outcome == "failed"
    assert error_seen(denied).startswith(
        "The user has specified a rule which prevents you from using this specific tool call."
    )
    assert '"pattern":"rm *","action":"deny"' in error_seen(denied)
    # an image read comes back as pydantic-ai binary content
    images = [item for item in image.content if isinstance(item, BinaryContent)]
    assert [(item.media_type, item.data) for item in images] == [("image/png", PNG)]


def test_a_rejected_ask_is_a_failed_result_and_nothing_changes(
    agent_project: Path, env: dict[str, str]
) -> None:
    readme = str(agent_project / "README.md")
    model = Scripted(
        [
            [ToolCallPart("read", {"filePath": readme}, tool_call_id="c1")],
            [
                ToolCallPart(
                    "edit", {"filePath": readme, "oldString": "wrld", "newString": "x"}, tool_call_id="c2"
                )
            ],
        ]
    )

    async def reject(request: PermissionRequest) -> Decision:
        return Decision("reject", "Leave the README alone.")

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session(prompt=reject) as session:
                await Agent(FunctionModel(model), toolsets=[OpencodeToolset(session)]).run("go")

    run(main())
    assert (agent_project / "README.md").read_text() == "hello wrld\n"
    rejected = error_seen(returned(model.requests[2]))
    assert rejected.endswith("with the following feedback: Leave the README alone.")


def test_invalid_calls_beyond_max_retries_end_the_run(agent_project: Path, env: dict[str, str]) -> None:
    bad = [ToolCallPart("read", {"offset": 3}, tool_call_id=f"c{n}") for n in range(4)]
    model = Scripted([[call] for call in bad])

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session() as session:
                await Agent(FunctionModel(model), toolsets=[OpencodeToolset(session, max_retries=1)]).run(
                    "go"
                )

    with pytest.raises(UnexpectedModelBehavior, match="read"):
        run(main())


def test_denied_tools_are_not_offered(agent_project: Path, env: dict[str, str]) -> None:
    (agent_project / "opencode.toml").write_text('[permission]\nbash = "deny"\nwebfetch = "deny"\n')
    model = Scripted([])

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session("plan") as session:
                await Agent(FunctionModel(model), toolsets=[OpencodeToolset(session)]).run("go")

    run(main())
    names = {tool.name for tool in model.offered[0]}
    assert "read" in names and not names & {"bash", "webfetch", "invalid"}


def test_mcp_tools_of_an_opencode_json_are_offered_and_called(
    agent_project: Path, env: dict[str, str]
) -> None:
    demo = Path(__file__).parents[1] / "mcp" / "servers" / "demo_server.py"
    config = {"mcp": {"demo": {"type": "local", "command": [sys.executable, str(demo), "stdio"]}}}
    (agent_project / "opencode.json").write_text(json.dumps(config))
    model = Scripted([[ToolCallPart("demo_echo", {"text": "over MCP"}, tool_call_id="m1")]])

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session(prompt=Host()) as session:
                await Agent(FunctionModel(model), toolsets=[OpencodeToolset(session)]).run("echo")

    run(main())
    assert "demo_echo" in {tool.name for tool in model.offered[0]}
    assert returned(model.requests[1]).content == "over MCP"


def test_without_the_extra_the_message_names_it(tmp_path: Path) -> None:
    code = "import sys; sys.modules['pydantic_ai'] = None; import opencode_cli.adapters.pydantic_ai"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "opencode_cli.adapters._common.MissingExtraError: opencode_cli.adapters.pydantic_ai needs the "
        "pydantic-ai extra (pydantic_ai is not installed): pip install 'opencode-tools[pydantic-ai]'"
    )


def test_the_cli_never_imports_the_frameworks() -> None:
    code = (
        "import json, sys, opencode_cli.cli.app, opencode_cli.config, opencode_cli.adapters\n"
        "print(json.dumps([m for m in ('pydantic_ai', 'agents') if m in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(result.stdout) == []


def test_the_doom_loop_window_is_one_run_step(agent_project: Path, env: dict[str, str]) -> None:
    readme = str(agent_project / "README.md")
    read = {"filePath": readme}
    host = Host()

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session("build", prompt=host) as session:
                toolset = OpencodeToolset(session)
                for run_index in range(3):  # three runs, each reading the file once
                    once = Scripted([[ToolCallPart("read", read, tool_call_id=f"r{run_index}")]])
                    await Agent(FunctionModel(once), toolsets=[toolset]).run("read it")
                assert host.asked == []
                # two steps of one run reading it twice and once: still no loop
                spread = Scripted(
                    [
                        [
                            ToolCallPart("read", read, tool_call_id="a1"),
                            ToolCallPart("read", read, tool_call_id="a2"),
                        ],
                        [ToolCallPart("read", read, tool_call_id="a3")],
                    ]
                )
                await Agent(FunctionModel(spread), toolsets=[toolset]).run("read it")
                assert host.asked == []
                # three identical calls in one model response: the loop is asked about
                same = Scripted([[ToolCallPart("read", read, tool_call_id=f"s{n}") for n in range(3)]])
                await Agent(FunctionModel(same), toolsets=[toolset]).run("read it")

    run(main())
    assert host.asked == [("doom_loop", ["read"])]
