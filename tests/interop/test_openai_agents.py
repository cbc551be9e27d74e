"""A real OpenAI Agents SDK agent, its model the scripted chat-completions server on 127.0.0.1, using
OpenCode's tools."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _scripted import ScriptedModel
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

from opencode_cli.adapters.openai_agents import function_tools
from opencode_cli.context import PermissionRequest
from opencode_cli.project import Project
from opencode_cli.session import Decision


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    """The tool messages of a request, by call id."""
    return {m["tool_call_id"]: m["content"] for m in request["body"]["messages"] if m["role"] == "tool"}


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


async def run_agent(
    project_dir: Path, env: dict[str, str], server: ScriptedModel, prompt: Any, **session: Any
) -> Any:
    """One agent run: the session's tools as function tools, the model on the scripted server."""
    client = AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=0)
    try:
        async with Project(project_dir, env=env, autoload_plugins=False) as project:
            with project.session(prompt=prompt, **session) as opened:
                agent = Agent(
                    name="coder",
                    instructions="Fix typos.",
                    tools=function_tools(opened),
                    model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client),
                )
                result = await Runner.run(
                    agent, "Fix the typo in README.md", run_config=RunConfig(tracing_disabled=True)
                )
                return result.final_output, opened.resolve()
    finally:
        await client.close()


def test_an_agent_reads_edits_is_corrected_and_denied(
    agent_project: Path, env: dict[str, str], scripted_model: ScriptedModel
) -> None:
    readme = str(agent_project / "README.md")
    scripted_model.script(
        [
            {"tool_calls": [call("c1", "read", filePath=readme)]},
            {"tool_calls": [call("c2", "edit", filePath=readme, oldString="wrld")]},
            {"tool_calls": [call("c3", "edit", filePath=readme, oldString="wrld", newString="world")]},
            {"tool_calls": [call("c4", "bash", command="rm -rf build", description="Clean")]},
            {"text": "Fixed."},
        ]
    )
    asked: list[tuple[str, list[str]]] = []

    async def host(request: PermissionRequest) -> Decision:
        asked.append((request.permission, list(request.patterns)))
        return Decision("once")

    output, wire = run(
        run_agent(agent_project, env, scripted_model, host, model="anthropic/claude-sonnet-4-5")
    )
    assert output == "Fixed."
    assert (agent_project / "README.md").read_text() == "hello world\n"
    assert asked == [("edit", ["README.md"])]

    requests = [r for r in scripted_model.requests() if r["path"].endswith("/chat/completions")]
    assert len(requests) == 5
    # the model was offered the session's tools, schemas as the session shapes them
    offered = {tool["function"]["name"]: tool["function"] for tool in requests[0]["body"]["tools"]}
    assert sorted(offered) == sorted(tool.name for tool in wire)
    for tool in wire:
        assert offered[tool.name]["parameters"] == tool.parameters
        assert offered[tool.name]["description"] == tool.description
    results = tool_results(requests[4])
    assert "1: hello wrld" in results["c1"]
    assert results["c2"] == (
        'The edit tool was called with invalid arguments: ["newString"]: Field required (expected string).\n'
        "Please rewrite the input so it satisfies the expected schema."
    )
    assert results["c3"] == "Edit applied successfully."
    assert results["c4"].startswith(
        "The user has specified a rule which prevents you from using this specific tool call."
    )
    assert '"pattern":"rm *","action":"deny"' in results["c4"]


def test_a_rejected_ask_leaves_the_file_alone(
    agent_project: Path, env: dict[str, str], scripted_model: ScriptedModel
) -> None:
    readme = str(agent_project / "README.md")
    scripted_model.script(
        [
            {"tool_calls": [call("c1", "read", filePath=readme)]},
            {"tool_calls": [call("c2", "edit", filePath=readme, oldString="wrld", newString="x")]},
            {"text": "Left it."},
        ]
    )

    async def reject(request: PermissionRequest) -> Decision:
        return Decision("reject")

    output, _ = run(run_agent(agent_project, env, scripted_model, reject))
    assert output == "Left it."
    assert (agent_project / "README.md").read_text() == "hello wrld\n"
    last = scripted_model.requests()[-1]
    assert tool_results(last)["c2"] == "The user rejected permission to use this specific tool call."


def test_arguments_that_are_not_json_get_opencodes_text(
    agent_project: Path, env: dict[str, str], scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        [
            {"tool_calls": [{"id": "c1", "name": "read", "arguments": '{"filePath": "README.md"'}]},
            {"text": "Sorry."},
        ]
    )
    output, _ = run(run_agent(agent_project, env, scripted_model, None))
    assert output == "Sorry."
    text = tool_results(scripted_model.requests()[-1])["c1"]
    assert text.startswith(
        "The arguments provided to the tool are invalid: Invalid input for tool read: JSON parsing failed"
    )


def test_strict_profile_gives_strict_function_tools(agent_project: Path, env: dict[str, str]) -> None:
    async def main() -> list[Any]:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session(model="openai/gpt-5", profile="openai-strict") as session:
                return [
                    (tool, wire)
                    for tool, wire in zip(function_tools(session), session.resolve(), strict=True)
                ]

    pairs = run(main())
    assert pairs and all(tool.strict_json_schema is bool(wire.strict) for tool, wire in pairs)
    assert any(tool.strict_json_schema for tool, _ in pairs)


def test_without_the_extra_the_message_names_it(tmp_path: Path) -> None:
    code = "import sys; sys.modules['agents'] = None; import opencode_cli.adapters.openai_agents"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "opencode_cli.adapters._common.MissingExtraError: opencode_cli.adapters.openai_agents needs the "
        "openai-agents extra (agents is not installed): pip install 'opencode-tools[openai-agents]'"
    )


def test_the_doom_loop_window_is_one_model_response(
    agent_project: Path, env: dict[str, str], scripted_model: ScriptedModel
) -> None:
    readme = str(agent_project / "README.md")
    scripted_model.script(
        [
            {"tool_calls": [call("a1", "read", filePath=readme), call("a2", "read", filePath=readme)]},
            {"tool_calls": [call("b1", "read", filePath=readme)]},  # a third read, but in the next response
            {"tool_calls": [call(f"c{n}", "read", filePath=readme) for n in range(3)]},  # three in one
            {"text": "Read."},
        ]
    )
    asked: list[str] = []

    async def host(request: PermissionRequest) -> Decision:
        asked.append(request.permission)
        return Decision("once")

    output, _ = run(run_agent(agent_project, env, scripted_model, host))
    assert output == "Read."
    assert asked == ["doom_loop"]  # only the response with three identical calls
