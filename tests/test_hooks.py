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


def test_hook_tool_execute(make_opencode_project) -> None:
    seen: list[tuple[str, str]] = []

    class Times:
        @hookimpl(wrapper=True)
        def tool_execute(self, tool: Any, args: dict, ctx: Any) -> Any:
            running = yield

            async def timed() -> ToolResult:
                try:
                    result = await running
                except ToolError as error:
                    seen.append((tool.id, f"failed: {error}"))
                    raise
                seen.append((tool.id, result.output))
                result.metadata["wrapped"] = True
                return result

            return timed()

    class Replaces:
        @hookimpl
        def tool_execute(self, tool: Any, args: dict, ctx: Any) -> Any:
            if tool.id != "shout":
                return None  # not mine: the built-in runs it

            async def canned() -> ToolResult:
                assert ctx.session is not None and ctx.project is not None
                return ToolResult(output=f"canned for {ctx.session.id[:4]}")

            return canned()

    project = make_opencode_project(("regs", Registers()), Times(), Replaces())
    runner = ToolRunner(project)
    result = runner("shout", text="hi")
    assert result.output == "canned for ses_" and result.metadata == {"wrapped": True}
    assert seen == [("shout", "canned for ses_")]  # the wrapper saw the replacement's result
    with pytest.raises(ToolError, match="it exploded"):
        runner("explode")
    assert seen[-1] == ("explode", "failed: it exploded")
    plugin_record = project.plugins.record_for("Times")
    assert plugin_record is not None and plugin_record.hooks == ["tool_execute"]


def test_old_style_hookwrappers_run_and_see_the_outcome(make_opencode_project) -> None:
    # pluggy's hookwrapper=True (the older wrapper style) is run too: hooks go through pluggy's call path
    outcomes: list[Any] = []

    class Old:
        @hookimpl(hookwrapper=True)
        def tool_execute_before(self, tool: str) -> Any:
            outcome = yield
            outcomes.append((tool, outcome.exception))

    runner = ToolRunner(make_opencode_project(("regs", Registers()), Old()))
    runner("shout", text="x")
    assert outcomes == [("shout", None)]


def test_tryfirst_and_trylast_order_the_implementations(make_opencode_project) -> None:
    order: list[str] = []

    def plugin(name: str, **options: bool) -> Any:
        class Plugin:
            @hookimpl(**options)
            def tool_execute_before(self) -> None:
                order.append(name)

        return (name, Plugin())

    project = make_opencode_project(
        ("regs", Registers()), plugin("last", trylast=True), plugin("plain"), plugin("first", tryfirst=True)
    )
    ToolRunner(project)("shout", text="x")
    assert order == ["first", "plain", "last"]


def test_async_hooks_run_on_the_callers_loop(make_opencode_project) -> None:
    loops: list[Any] = []

    class Async:
        @hookimpl
        async def tool_execute_before(self, args: dict) -> None:
            loops.append(asyncio.get_running_loop())
            await asyncio.sleep(0)
            args["text"] = args["text"] + " (async)"

    project = make_opencode_project(("regs", Registers()), Async())

    async def main() -> tuple[Any, str]:
        async with project.session() as session:
            result = await session.execute("shout", {"text": "hi"})
        return asyncio.get_running_loop(), result.output

    caller_loop, output = asyncio.run(main())
    assert output == "HI (ASYNC)"
    assert loops == [caller_loop]


def test_cancelling_a_call_cancels_its_async_hook(make_opencode_project) -> None:
    states: list[str] = []

    class Slow:
        @hookimpl
        async def tool_execute_before(self) -> None:
            states.append("started")
            try:
                await asyncio.sleep(60)
            finally:
                states.append("finished")

    project = make_opencode_project(("regs", Registers()), Slow())

    async def main() -> None:
        async with project.session() as session:
            task = asyncio.create_task(session.execute("shout", {"text": "hi"}))
            while not states:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        for _ in range(200):  # the hook's coroutine is cancelled on this loop
            if "finished" in states:
                break
            await asyncio.sleep(0.01)

    asyncio.run(asyncio.wait_for(main(), 30))
    assert states == ["started", "finished"]


def test_an_async_hook_called_from_sync_code_runs_on_the_projects_loop(make_opencode_project) -> None:
    loops: list[Any] = []

    class Describes:
        @hookimpl
        async def tool_definition(self, tool_id: str, output: Any) -> None:
            loops.append(asyncio.get_running_loop())
            if tool_id == "shout":
                output.description += " Loudly."

    project = make_opencode_project(("regs", Registers()), Describes())
    [shout_definition] = [d for d in project.tools() if d.id == "shout"]
    assert shout_definition.description.endswith("Loudly.")
    assert set(loops) == {project.portal.loop}


def test_a_broken_isolated_hook_does_not_stop_the_others(make_opencode_project, opencode_warnings) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def tool_definition(self) -> None:
            raise RuntimeError("no description for you")

    class Works:
        @hookimpl
        def tool_definition(self, tool_id: str, output: Any) -> None:
            if tool_id == "shout":
                output.description = "Changed."

    project = make_opencode_project(("regs", Registers()), ("broken", Broken()), ("works", Works()))
    [shout_definition] = [d for d in project.tools() if d.id == "shout"]
    assert shout_definition.description == "Changed."
    record = project.plugins.record_for("broken")
    assert (
        record is not None and record.status == "failed" and "no description for you" in (record.error or "")
    )
    assert any("broken failed in tool_definition" in warning for warning in opencode_warnings)


def test_hook_permission_ask(make_opencode_project, permission_replies) -> None:
    seen: list[tuple[str, list[str]]] = []

    class Policy:
        @hookimpl
        def permission_ask(self, request: Any, output: Any) -> None:
            seen.append((request.permission, list(request.patterns)))
            if request.permission == "weather":
                output.status = "allow" if request.patterns == ["sunny"] else "deny"

    class Audit:  # async, and runs after the policy (loaded first, so called last)
        @hookimpl(trylast=True)
        async def permission_ask(self, request: Any, output: Any) -> None:
            await asyncio.sleep(0)
            seen.append(("audit", [output.status]))

    @tool
    async def forecast(place: str, ctx: Any) -> str:
        """Tell the weather."""
        await ctx.ask("weather", [place])
        return f"forecast for {place}"

    class Forecasts:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(forecast)

    project = make_opencode_project(("forecasts", Forecasts()), ("audit", Audit()), ("policy", Policy()))
    runner = ToolRunner(project, permission_replies).rule("weather")  # every place is "ask"
    assert runner("forecast", place="sunny").output == "forecast for sunny"  # allowed by the plugin
    with pytest.raises(ToolError, match="The user rejected permission to use this specific tool call"):
        runner("forecast", place="stormy")
    assert permission_replies.permissions == []  # the user was never asked
    assert ("audit", ["allow"]) in seen and ("audit", ["deny"]) in seen
    assert runner.permission_ask("weather", ["sunny"]) == "allow"
    assert runner.permission_ask("edit", ["x.txt"]) == "ask"  # left to the user
    permission_replies.append("once")
    project_two = make_opencode_project(("forecasts", Forecasts()))  # without the policy: the user decides
    assert ToolRunner(project_two, permission_replies).rule("weather")("forecast", place="x").output
    assert permission_replies.permissions == ["weather"]


def test_hook_shell_env(make_opencode_project) -> None:
    seen: list[tuple[str, str, str | None]] = []

    class Env:
        @hookimpl
        def shell_env(self, cwd: str, session_id: str, call_id: str | None, output: Any) -> None:
            seen.append((cwd, session_id, call_id))
            output.env["OPENCODE_TEST_GREETING"] = "hello from a plugin"
            output.env.pop("OPENCODE_TEST_SECRET", None)

    project = make_opencode_project(("env", Env()))
    project.env = {**project.env, "OPENCODE_TEST_SECRET": "hidden"}  # type: ignore[misc]
    runner = ToolRunner(project).rule("bash", "allow")
    result = runner("bash", command='echo "$OPENCODE_TEST_GREETING/${OPENCODE_TEST_SECRET:-gone}"')
    assert result.output.strip() == "hello from a plugin/gone"
    assert seen[-1][0] == str(project.directory) and seen[-1][1] == runner.session.id
    assert seen[-1][2] is not None and seen[-1][2].startswith("call_")
    env = runner.process_env()
    assert env["OPENCODE_TEST_GREETING"] == "hello from a plugin" and "OPENCODE_TEST_SECRET" not in env
