"""Hooks through one door (issue 33): every hook called through pluggy on the caller's loop, ``async def``
implementations awaited there in pluggy's order, and a raising isolated hook losing only its own plugin's
contribution."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pluggy

from opencode_cli import hookimpl, tool
from opencode_cli.plugins import Plugins
from opencode_cli.testing import ToolRunner


class AsyncRegisters:
    """A plugin whose ``register_tools`` is ``async def``; it records the thread it ran on."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    @hookimpl
    async def register_tools(self, register: Any) -> None:
        await asyncio.sleep(0)
        self.threads.append(threading.get_ident())
        register(tool(lambda: "pong", id="ping", description="Answer pong."))


def test_an_async_register_tools_works_through_project_run_tool(make_project) -> None:
    plugin = AsyncRegisters()
    project = make_project(plugins=[("async-regs", plugin)])

    result = project.run_tool("ping", {})

    assert result.output == "pong"
    assert project.plugins.record_for("async-regs").status == "loaded"


def test_an_async_register_tools_runs_on_the_callers_loop_in_an_async_host(make_project) -> None:
    plugin = AsyncRegisters()
    project = make_project(plugins=[("async-regs", plugin)])

    async def host() -> str:
        async with project.session() as session:
            result = await session.execute("ping", {})
        return result.output

    loop_thread: list[int] = []

    async def main() -> str:
        loop_thread.append(threading.get_ident())
        return await host()

    assert asyncio.run(main()) == "pong"
    assert plugin.threads == loop_thread  # awaited on the host's loop, not on the project's portal


class Describes:
    """A plugin that changes what ``read`` is called."""

    @hookimpl
    def tool_definition(self, tool_id: str, output: Any) -> None:
        if tool_id == "read":
            output.description = "READ: " + output.description


class BreaksHalfway:
    """A plugin that changes ``read``'s description and schema, then raises."""

    @hookimpl(tryfirst=True)
    def tool_definition(self, tool_id: str, output: Any) -> None:
        if tool_id == "read":
            output.description = "broken"
            output.parameters["properties"].clear()
            raise ValueError("hook broke")


class AsyncDescribes:
    @hookimpl
    async def tool_definition(self, tool_id: str, output: Any) -> None:
        await asyncio.sleep(0)
        if tool_id == "glob":
            output.description = "GLOB: " + output.description


def test_a_raising_tool_definition_loses_only_its_own_change(make_project, warnings) -> None:
    project = make_project(plugins=[("describes", Describes()), ("breaks", BreaksHalfway())])

    offered = {definition.id: definition for definition in project.tools()}

    assert {"read", "glob", "bash"} <= set(offered)  # no tool is hidden
    assert offered["read"].description.startswith("READ: ")  # the other plugin's change holds
    assert "broken" not in offered["read"].description
    assert "filePath" in offered["read"].parameters["properties"]  # the broken plugin's edit is undone
    assert any("plugin breaks failed in tool_definition" in warning for warning in warnings)


def test_an_async_tool_definition_through_the_plugin_kit_changes_its_tool_only(make_project) -> None:
    project = make_project(plugins=[("async-describes", AsyncDescribes())])
    runner = ToolRunner(project)

    assert runner.definition("glob").description.startswith("GLOB: ")
    assert not runner.definition("read").description.startswith("GLOB: ")
    offered = [definition.id for definition in project.tools()]
    assert "glob" in offered and "read" in offered  # every tool is still offered


def test_an_async_tool_definition_is_awaited_in_a_served_offer(make_project) -> None:
    project = make_project(plugins=[("async-describes", AsyncDescribes())])

    async def main() -> dict[str, str]:
        async with project.session() as session:
            return {wire.name: wire.description for wire in await session.aresolve()}

    described = asyncio.run(main())

    assert described["glob"].startswith("GLOB: ") and "read" in described


def _ordered_plugins(seen: list[str]) -> list[tuple[str, object]]:
    class FirstAsync:
        @hookimpl(tryfirst=True)
        async def tool_execute_before(self, tool: str) -> None:
            await asyncio.sleep(0)
            seen.append("tryfirst async")

    class PlainSync:
        @hookimpl
        def tool_execute_before(self, tool: str) -> None:
            seen.append("plain sync")

    class PlainAsync:
        @hookimpl
        async def tool_execute_before(self, tool: str) -> None:
            await asyncio.sleep(0)
            seen.append("plain async")

    class LastSync:
        @hookimpl(trylast=True)
        def tool_execute_before(self, tool: str) -> None:
            seen.append("trylast sync")

    # registered in an order unlike the call order: pluggy calls the last registered first
    return [
        ("last", LastSync()),
        ("plain-sync", PlainSync()),
        ("plain-async", PlainAsync()),
        ("first", FirstAsync()),
    ]


def test_four_mixed_implementations_run_in_pluggys_order(make_project, project_dir) -> None:
    (project_dir / "a.txt").write_text("a\n")
    seen: list[str] = []
    project = make_project(plugins=_ordered_plugins(seen))

    project.run_tool("read", {"filePath": "a.txt"})

    assert seen == ["tryfirst async", "plain async", "plain sync", "trylast sync"]


def test_the_order_is_pluggys_own(make_project) -> None:
    # the same implementations in a bare pluggy manager, all made sync: pluggy's call order is the one kept
    seen: list[str] = []
    plugins = Plugins(builtin=(), extra=_ordered_plugins(seen), autoload=False)

    assert plugins.order("tool_execute_before") == ["first", "plain-async", "plain-sync", "last"]
    assert plugins.is_async("tool_execute_before")
    for impl in plugins.manager.hook.tool_execute_before.get_hookimpls():
        assert isinstance(impl, pluggy.HookImpl)
        assert impl.function.__qualname__.endswith("tool_execute_before")  # pluggy's objects untouched


class _SlotPlugin:
    """An instance plugin with a slot, an attribute of its own shadowing ``object``'s, and a hook."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 1

    @hookimpl
    def tool_execute_before(self) -> None:
        """A hook."""

    def __repr__(self) -> str:  # overrides object's: pluggy's to judge, not skipped
        return "slot-plugin"


class _InstancePlugin:
    """An instance plugin with attributes of its own (a value, a function, a class), a property and a
    class attribute, beside a hook."""

    label = "instance"
    nothing = None

    def __init__(self) -> None:
        self.value = 3
        self.kind = _ClassPlugin
        self.helper = _module_plugin
        self.marked = hookimpl(lambda: None)

    @property
    def computed(self) -> int:
        """A property: never evaluated while looking for hooks."""
        raise AssertionError("evaluated")

    @hookimpl
    def permission_ask(self) -> None:
        """A hook."""


class _ClassPlugin:
    """A plugin registered as the class itself, with static and class methods."""

    @staticmethod
    @hookimpl
    def tool_execute_after() -> None:
        """A hook."""

    @classmethod
    @hookimpl(tryfirst=True)
    def tool_execute_before(cls) -> None:
        """A hook."""


def _module_plugin() -> Any:
    import functools
    import types

    module = types.ModuleType("plugin_module")

    @hookimpl(trylast=True)
    def tool_execute_before() -> None:
        """A hook."""

    @hookimpl
    def renamed() -> None:
        """A hook under another attribute name."""

    module.tool_execute_before = tool_execute_before  # type: ignore[attr-defined]
    module.permission_ask = renamed  # type: ignore[attr-defined]
    module.a_helper = _module_plugin  # type: ignore[attr-defined]
    module.a_class = _ClassPlugin  # type: ignore[attr-defined]
    module.a_partial = functools.partial(print)  # type: ignore[attr-defined]
    module.a_string = "text"  # type: ignore[attr-defined]
    module.a_static = staticmethod(hookimpl(lambda: None))  # type: ignore[attr-defined]
    module.hookimpl = hookimpl  # type: ignore[attr-defined]
    return module


def test_the_managers_find_the_hooks_pluggy_finds() -> None:
    # Plugins' manager skips attributes that plainly are no hooks: it finds exactly what pluggy finds
    from opencode_cli import hookspecs
    from opencode_cli.builtin import PLUGINS

    candidates = [(entry.name, entry.load()) for entry in PLUGINS]
    candidates += [
        ("slots", _SlotPlugin()),
        ("class", _ClassPlugin),
        ("module", _module_plugin()),
        ("instance", _InstancePlugin()),
    ]
    ours = Plugins(builtin=(), autoload=False).manager
    theirs = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    theirs.add_hookspecs(hookspecs)
    for name, plugin in candidates:
        ours.register(plugin, name=name)
        theirs.register(plugin, name=name)

    def found(manager: pluggy.PluginManager) -> dict[str, list[tuple[str, str, bool, bool]]]:
        return {
            hook: [
                (i.plugin_name, i.function.__name__, i.tryfirst, i.trylast)
                for i in getattr(manager.hook, hook).get_hookimpls()
            ]
            for hook in sorted(vars(manager.hook))
        }

    assert found(ours) == found(theirs)

    def specified(manager: pluggy.PluginManager) -> dict[str, object]:
        return {
            hook: getattr(getattr(manager.hook, hook).spec, "opts", None)
            for hook in sorted(vars(manager.hook))
        }

    assert specified(ours) == specified(theirs)
    assert specified(ours)["tool_execute"] is not None
    assert ("module", "renamed", False, False) in found(ours)["permission_ask"]


class _OptionalHookPlugin:
    """A plugin with an ``optionalhook`` implementation of a hook nobody specified, and a real hook."""

    def __init__(self) -> None:
        self.called = 0

    @hookimpl(optionalhook=True)
    def no_such_hook(self) -> None:
        """Not a hook of opencode-tools: pluggy lets an optional one be."""

    @hookimpl
    def tool_execute_before(self) -> None:
        """A hook."""
        self.called += 1


def test_a_plugin_with_an_unspecified_optional_hook_is_called_alone() -> None:
    plugin = _OptionalHookPlugin()
    plugins = Plugins(builtin=(), extra=[("optional", plugin)], autoload=False)

    assert plugins.record_for("optional") is not None
    arguments = {"tool": "read", "session_id": "s", "call_id": "c", "args": {}}
    assert plugins.call_each("tool_execute_before", **arguments) == []
    assert plugin.called == 1
