"""One test per hook of the plugin contract, each through a real :class:`Project` with a registered plugin.

``tests/test_docs.py`` fails when a hook in ``hookspecs.py`` has no ``test_hook_<name>`` test here (or
anywhere under ``tests/``). The fixtures (``make_opencode_project``, ``run_tool``…) are the ones plugin
authors get from ``opencode_cli.testing``.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from opencode_cli import ToolError, ToolResult, hookimpl, tool
from opencode_cli.flags import Flags
from opencode_cli.project import Project
from opencode_cli.registry import ModelRef
from opencode_cli.testing import ToolRunner


@tool
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


@tool
def explode() -> str:
    """Always fails."""
    raise ToolError("it exploded")


class Registers:
    """A plugin contributing tools, recording what ``register_tools`` received."""

    def __init__(self) -> None:
        self.received: dict[str, Any] = {}

    @hookimpl
    def register_tools(self, register: Any, flags: Flags, project: Project | None) -> None:
        self.received = {"flags": flags, "project": project}
        register(shout)
        register(explode)


def test_hook_register_tools(make_opencode_project, opencode_warnings) -> None:
    plugin = Registers()

    class AsyncRegisters:
        @hookimpl
        async def register_tools(self, register: Any) -> None:  # a subset of the arguments, async
            await asyncio.sleep(0)
            register(tool(lambda: "pong", id="ping", description="Answer pong."))

    class Broken:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(tool(lambda: "kept", id="half", description="Registered before the failure."))
            raise RuntimeError("no more tools today")

    project = make_opencode_project(("regs", plugin), ("async-regs", AsyncRegisters()), ("broken", Broken()))
    tools = {definition.id: definition for definition in project.tools()}
    assert tools["shout"].entry.source.describe() == "plugin regs"
    assert list(tools)[-4:] == ["shout", "explode", "ping", "half"]  # plugins in load order, after built-ins
    assert plugin.received["project"] is project and plugin.received["flags"] is project.flags
    assert project.plugins.record_for("regs").tools == ["shout", "explode"]
    broken = project.plugins.record_for("broken")
    assert broken.status == "failed" and "RuntimeError: no more tools today" in broken.error
    assert broken.tools == ["half"]  # what was registered before the failure is kept
    assert any("plugin broken failed in register_tools" in warning for warning in opencode_warnings)
    assert ToolRunner(project)("ping").output == "pong"


def test_hook_tool_definition(make_opencode_project) -> None:
    seen: list[tuple[str, ModelRef | None]] = []

    class Describes:
        @hookimpl
        def tool_definition(self, tool_id: str, model: ModelRef | None, output: Any) -> None:
            seen.append((tool_id, model))
            if tool_id == "shout":
                output.description = f"{output.description} Use it sparingly."
                schema = copy.deepcopy(output.parameters)  # the tool's own schema: change a copy
                schema["properties"]["text"]["description"] = "What to shout"
                output.parameters = schema

    class Lazy:
        @hookimpl
        def tool_definition(self, output: Any) -> None:
            assert not output.parameters_changed  # nobody has asked for the schema of this one yet

    project = make_opencode_project(("regs", Registers()), Describes(), Lazy())
    [definition] = [
        d for d in project.tools(ModelRef.parse("anthropic/claude-sonnet-4-5")) if d.id == "shout"
    ]
    assert definition.description == "Repeat the text in capitals. Use it sparingly."
    assert definition.parameters["properties"]["text"]["description"] == "What to shout"
    assert ("shout", ModelRef("anthropic", "claude-sonnet-4-5")) in seen
    assert ("invalid", ModelRef("anthropic", "claude-sonnet-4-5")) not in seen  # never offered: no hook
    # the tool itself is unchanged: the hook changes only what a model is told
    assert project.registry.get("shout").tool.description == "Repeat the text in capitals."
    assert ToolRunner(project).definition("shout").description.endswith("Use it sparingly.")


def test_hook_tool_execute_before(make_opencode_project) -> None:
    calls: list[dict[str, Any]] = []

    class Guards:
        @hookimpl
        def tool_execute_before(self, tool: str, session_id: str, call_id: str | None, args: dict) -> None:
            calls.append({"tool": tool, "session": session_id, "call": call_id, "args": dict(args)})
            if tool != "shout":
                return
            text = args.get("text")
            if isinstance(text, str) and "secret" in text:
                raise PermissionError("shouting secrets is not allowed")
            if isinstance(text, str):
                args["text"] = text + "!"  # in place: the tool gets it

    class Rebinds:
        @hookimpl(tryfirst=True)
        async def tool_execute_before(self, args: dict) -> None:
            args = {"text": "ignored"}  # noqa: F841 - rebinding the name changes nothing

    project = make_opencode_project(("regs", Registers()), Guards(), Rebinds())
    runner = ToolRunner(project)
    assert runner("shout", text="hi").output == "HI!"
    assert calls[-1]["session"] == runner.session.id and calls[-1]["call"].startswith("call_")
    assert calls[-1]["args"] == {"text": "hi"}
    with pytest.raises(PermissionError, match="shouting secrets is not allowed"):
        runner("shout", text="the secret")
    part = runner.dispatch("shout", '{"text": "a secret"}')
    assert part.status == "error" and part.text == "shouting secrets is not allowed"
    # before the arguments are validated: the hook sees them raw, and may repair them
    with pytest.raises(ToolError, match="invalid arguments"):
        runner("shout")
    assert calls[-1]["args"] == {}


def test_hook_tool_execute_after(make_opencode_project) -> None:
    results: list[tuple[str, dict[str, Any], ToolResult]] = []

    class Adds:
        @hookimpl
        def tool_execute_before(self, tool: str, args: dict) -> None:
            if tool == "shout":
                args["text"] = args["text"].strip()

    class Audits:
        @hookimpl
        async def tool_execute_after(
            self, tool: str, session_id: str, call_id: str | None, args: dict, result: ToolResult
        ) -> None:
            await asyncio.sleep(0)
            results.append((tool, dict(args), result))
            result.title = f"audited {tool}"
            result.metadata["audited"] = True
            result.output += " (checked)"

    project = make_opencode_project(("regs", Registers()), Adds(), Audits())
    runner = ToolRunner(project)
    result = runner("shout", text="  hey  ")
    assert result.output == "HEY (checked)" and result.title == "audited shout"
    assert result.metadata == {"truncated": False, "audited": True}  # after truncation
    assert results[-1][:2] == ("shout", {"text": "hey"})  # the arguments as the tool received them
    with pytest.raises(ToolError, match="it exploded"):
        runner("explode")
    assert [name for name, _, _ in results] == ["shout"]  # not called when the tool raised
    part = runner.dispatch("shout", {"text": "x"})
    assert part.title == "audited shout" and part.output == "X (checked)"

    class Fails:
        @hookimpl
        def tool_execute_after(self) -> None:
            raise ValueError("the log is full")

    failing = ToolRunner(make_opencode_project(("regs", Registers()), Fails()))
    with pytest.raises(ValueError, match="the log is full"):  # raising turns the call into a tool error
        failing("shout", text="x")
