"""The registry: sources, shadowing, broken files, per-model filtering, hooks (core spec §3, §11.3)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from opencode_cli import hookimpl
from opencode_cli.contract import Tool, tool
from opencode_cli.errors import UnknownToolError
from opencode_cli.modelref import ModelRef
from opencode_cli.policy import uses_apply_patch
from opencode_cli.toolspec import ToolSource

HELLO = """
from opencode_cli import tool, Field

@tool
def default(name: str = Field(description="Who to greet")) -> str:
    \"\"\"Say hello.\"\"\"
    return f"hello {name}"
"""


def ids(definitions) -> list[str]:
    return [d.id for d in definitions]


def make_tool(tool_id: str, output: str | None = None) -> Tool:
    def body() -> str:
        return output if output is not None else f"ran {tool_id}"

    return tool(id=tool_id, description=f"stand-in {tool_id}")(body)


class StandIns:
    """A test plugin registering tools named like the built-ins the per-model rules are about."""

    def __init__(self, names=("edit", "write", "apply_patch", "websearch")) -> None:
        self.names = names

    @hookimpl
    def register_tools(self, register) -> None:
        for name in self.names:
            register(make_tool(name))


# -- built-ins and invalid -------------------------------------------------------------------------------


def test_builtins_come_first_in_order(make_project, project_dir, write_file) -> None:
    write_file(project_dir / ".opencode" / "tool" / "hello.py", HELLO)
    registry = make_project(plugins=[("demo", StandIns(names=("zzz_plugin_tool",)))]).registry
    order = list(registry.entries)
    kinds = [registry.entries[i].source.kind for i in order]

    assert order[0] == "invalid"
    assert order.index("invalid") < order.index("read")
    assert kinds == sorted(kinds, key=["builtin", "file", "plugin"].index)
    assert order[-2:] == ["hello", "zzz_plugin_tool"]
    assert all(registry.entries[i].source == ToolSource("builtin") for i in ("invalid", "read"))


def test_invalid_is_registered_but_never_offered(make_project) -> None:
    project = make_project()
    registry = project.registry

    assert "invalid" in [e.id for e in registry.all()]
    assert "invalid" not in ids(project.tools())
    for model in (None, ModelRef.parse("gpt-5"), ModelRef.parse("anthropic/claude-sonnet-4-5")):
        offer = project.generation.offer(model)
        assert "invalid" in [h.entry.id for h in offer.hidden]
        assert "invalid" not in ids(offer.tools)
    # it can still be run (calls are repaired into it)
    result = project.run_tool("invalid", {"tool": "nope", "error": "bad"})
    assert "The arguments provided to the tool are invalid: bad" in result.output


def test_unknown_tool_suggests_close_ids(make_project) -> None:
    registry = make_project().registry

    with pytest.raises(UnknownToolError) as info:
        registry.get("raed")

    assert "read" in info.value.suggestions
    assert str(info.value) == "No tool named 'raed'. Did you mean: read?"


# -- tool files ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["tool", "tools"])
def test_loads_tool_file_from_singular_and_plural_dirs(make_project, project_dir, write_file, folder) -> None:
    path = write_file(project_dir / ".opencode" / folder / "hello.py", HELLO)
    project = make_project()

    entry = project.registry.get("hello")

    assert entry.source == ToolSource("file", name="hello", path=str(path))
    assert "hello" in ids(project.tools())
    assert project.run_tool("hello", {"name": "Ada"}).output == "hello Ada"
    schema = project.registry.definition(entry, None).parameters
    assert schema["properties"]["name"] == {"type": "string", "description": "Who to greet"}


def test_non_tool_attributes_are_ignored(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "mixed.py",
        """
        from opencode_cli import tool, Field
        import json

        helper = "a string"
        COUNT = 3

        def plain_function(x):
            return x

        class Plain:
            pass

        @tool
        def default(text: str) -> str:
            \"\"\"Main.\"\"\"
            return text

        @tool
        def add(a: int, b: int) -> str:
            \"\"\"Add two numbers.\"\"\"
            return str(a + b)
        """,
    )
    project = make_project()

    file_ids = [e.id for e in project.registry.entries.values() if e.source.kind == "file"]

    assert file_ids == ["mixed", "mixed_add"]
    assert project.run_tool("mixed_add", {"a": 2, "b": 3}).output == "5"
    record = next(r for r in project.generation.plugin_records() if r.kind == "file")
    assert (record.name, record.status, record.tools) == ("mixed", "loaded", ["mixed", "mixed_add"])


def test_only_python_files_directly_in_the_dir_are_loaded(make_project, project_dir, write_file) -> None:
    folder = project_dir / ".opencode" / "tool"
    write_file(folder / "hello.py", HELLO)
    write_file(folder / "other.ts", "export default {}")
    write_file(folder / "notes.md", "# notes")
    write_file(folder / "sub" / "deep.py", HELLO)

    entries = make_project().registry.entries

    assert [e.id for e in entries.values() if e.source.kind == "file"] == ["hello"]


def test_tool_without_parameters_has_an_empty_object_schema(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "noargs.py",
        """
        from opencode_cli import tool

        @tool
        def default() -> str:
            \"\"\"No arguments at all.\"\"\"
            return "nothing needed"
        """,
    )
    project = make_project()

    registry = project.registry
    assert "read" in registry.entries
    definition = next(d for d in project.tools() if d.id == "noargs")
    assert definition.parameters["type"] == "object"
    assert definition.parameters["properties"] == {}
    assert "required" not in definition.parameters or definition.parameters["required"] == []
    assert project.run_tool("noargs", {}).output == "nothing needed"


def test_structured_result_keeps_attachments(make_project, project_dir, write_file) -> None:
    attachments = [
        {
            "type": "file",
            "mime": "image/png",
            "url": "data:image/png;base64,iVBORw0KGgo=",
            "filename": "a.png",
        }
    ]
    write_file(
        project_dir / ".opencode" / "tool" / "pic.py",
        f"""
        from opencode_cli import tool

        @tool
        def default() -> dict:
            \"\"\"Returns an image.\"\"\"
            return {{"output": "here is an image", "title": "pic", "attachments": {attachments!r}}}
        """,
    )

    result = make_project().run_tool("pic", {})

    assert result.output == "here is an image"
    assert result.title == "pic"
    assert [{k: v for k, v in a.as_dict().items() if k != "id"} for a in result.attachments] == attachments
    assert all(a.id and a.id.startswith("prt_") for a in result.attachments)


def test_sync_tools_returning_string_and_object(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "sync.py",
        """
        from opencode_cli import tool

        @tool
        def echo(text: str) -> str:
            return f"echo: {text}"

        @tool
        def obj() -> dict:
            return {"output": "ok", "title": "sync"}
        """,
    )
    project = make_project()

    assert project.run_tool("sync_echo", {"text": "hello"}).output == "echo: hello"
    result = project.run_tool("sync_obj", {})
    assert (result.output, result.title) == ("ok", "sync")


def test_tool_error_surfaces_as_a_catchable_exception(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "explode.py",
        """
        from opencode_cli import tool

        @tool
        async def default() -> str:
            raise RuntimeError("tool exploded")
        """,
    )

    with pytest.raises(RuntimeError, match="tool exploded"):
        make_project().run_tool("explode", {})


def test_description_from_txt_beside_the_tool_file(make_project, project_dir, write_file) -> None:
    folder = project_dir / ".opencode" / "tool"
    write_file(folder / "hello.py", HELLO)
    write_file(folder / "hello.txt", "Greets from the text file.")

    definition = next(d for d in make_project().tools() if d.id == "hello")

    assert definition.description == "Greets from the text file."


def test_class_based_tool_in_a_file(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "text.py",
        """
        from opencode_cli.contract import Tool

        class Upper(Tool):
            description = "Upper-case a fixed word."

            async def execute(self, params, ctx):
                return "WORD"
        """,
    )
    project = make_project()

    assert project.run_tool("text_Upper", {}).output == "WORD"


# -- broken tool files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "kind"),
    [
        ("x = 1\ndef broken(:\n    pass\n", 2, "SyntaxError"),
        ("import os\n\nraise ValueError('boom at import')\n", 3, "ValueError: boom at import"),
        ("import no_such_module_anywhere_xyz\n", 1, "ModuleNotFoundError"),
    ],
)
def test_broken_tool_file_never_breaks_listing(
    make_project, project_dir, write_file, warnings, source, line, kind
) -> None:
    folder = project_dir / ".opencode" / "tool"
    write_file(folder / "hello.py", HELLO)
    bad = folder / "bad.py"
    bad.write_text(source)
    project = make_project()

    offered = ids(project.tools())

    assert "hello" in offered and "read" in offered
    assert "bad" not in project.registry.entries
    record = next(r for r in project.generation.plugin_records() if r.name == "bad")
    assert record.status == "failed"
    assert record.kind == "file"
    assert f"{bad}:{line}" in record.error
    assert kind in record.error
    assert any(str(bad) in w for w in warnings)
    assert all("\n" not in w for w in warnings)


# -- shadowing and directory order -----------------------------------------------------------------------


def test_project_tool_file_overrides_builtin_read(make_project, project_dir, write_file) -> None:
    write_file(project_dir / ".opencode" / "tool" / "hello.py", HELLO)  # loads before read.py
    path = write_file(
        project_dir / ".opencode" / "tool" / "read.py",
        """
        from opencode_cli import tool

        @tool
        def default(path: str) -> str:
            \"\"\"My own read.\"\"\"
            return f"custom read of {path}"
        """,
    )
    project = make_project()

    entry = project.registry.get("read")

    assert entry.source == ToolSource("file", name="read", path=str(path))
    assert entry.shadowed == [ToolSource("builtin")]
    assert project.run_tool("read", {"path": "x"}).output == "custom read of x"
    # the id keeps its place in the order (a JS object key keeps its first position)
    order = [i for i in project.registry.entries if i in ("invalid", "read", "hello")]
    assert order == ["invalid", "read", "hello"]
    assert next(d for d in project.tools() if d.id == "read").description == "My own read."


def test_global_config_dir_tools_load_before_project_ones(
    make_project, project_dir, global_config_dir, write_file
) -> None:
    global_dup = write_file(global_config_dir / "tool" / "dup.py", HELLO.replace("hello {name}", "global"))
    write_file(global_config_dir / "tools" / "only_global.py", HELLO)
    project_dup = write_file(
        project_dir / ".opencode" / "tool" / "dup.py", HELLO.replace("hello {name}", "project")
    )
    project = make_project()

    entry = project.registry.get("dup")

    assert entry.source.path == str(project_dup)
    assert entry.shadowed == [ToolSource("file", name="dup", path=str(global_dup))]
    assert project.run_tool("dup", {"name": "x"}).output == "project"
    assert project.registry.get("only_global").source.path.startswith(str(global_config_dir))
    file_ids = [e.id for e in project.registry.entries.values() if e.source.kind == "file"]
    assert file_ids == ["dup", "only_global"]  # global tool/ then tools/; the override keeps dup's place


def test_opencode_config_dir_tools_load_last(make_project, project_dir, tmp_path, write_file) -> None:
    extra = tmp_path / "extra-config"
    extra_dup = write_file(
        extra / "tool" / "dup.py", HELLO.replace("hello {name}", "from OPENCODE_CONFIG_DIR")
    )
    project_dup = write_file(project_dir / ".opencode" / "tool" / "dup.py", HELLO)
    project = make_project(extra_env={"OPENCODE_CONFIG_DIR": str(extra)})

    entry = project.registry.get("dup")

    assert entry.source.path == str(extra_dup)
    assert [s.path for s in entry.shadowed] == [str(project_dup)]
    assert project.run_tool("dup", {"name": "x"}).output == "from OPENCODE_CONFIG_DIR"


def test_home_dot_opencode_tools_load_after_project_ones(make_project, project_dir, home, write_file) -> None:
    home_dup = write_file(home / ".opencode" / "tool" / "dup.py", HELLO.replace("hello {name}", "home"))
    write_file(project_dir / ".opencode" / "tool" / "dup.py", HELLO)

    entry = make_project().registry.get("dup")

    assert entry.source.path == str(home_dup)


def test_farther_dot_opencode_dir_comes_later(make_project, project_dir, write_file) -> None:
    """Config dirs run nearest ``.opencode`` first (core spec §9.1), so a farther one shadows a nearer one."""
    nested = project_dir / "pkg" / "sub"
    near = write_file(nested / ".opencode" / "tool" / "dup.py", HELLO.replace("hello {name}", "near"))
    far = write_file(project_dir / ".opencode" / "tool" / "dup.py", HELLO.replace("hello {name}", "far"))

    entry = make_project(directory=nested).registry.get("dup")

    assert entry.source.path == str(far)
    assert [s.path for s in entry.shadowed] == [str(near)]


def test_disable_project_config_skips_project_tool_files(make_project, project_dir, write_file) -> None:
    write_file(project_dir / ".opencode" / "tool" / "hello.py", HELLO)

    project = make_project(extra_env={"OPENCODE_DISABLE_PROJECT_CONFIG": "1"})

    assert "hello" not in project.registry.entries


def test_plugin_tools_override_file_tools(make_project, project_dir, write_file) -> None:
    path = write_file(project_dir / ".opencode" / "tool" / "hello.py", HELLO)
    project = make_project(plugins=[("demo", StandIns(names=("hello",)))])

    entry = project.registry.get("hello")

    assert entry.source.kind == "plugin" and entry.source.name == "demo"
    assert entry.shadowed == [ToolSource("file", name="hello", path=str(path))]
    assert project.run_tool("hello", {}).output == "ran hello"


# -- plugins ---------------------------------------------------------------------------------------------


def test_plugin_tools_are_registered_with_their_source(make_project) -> None:
    project = make_project(plugins=[("demo", StandIns(names=("noargs_plugin_tool",)))])

    entry = project.registry.get("noargs_plugin_tool")

    assert entry.source == ToolSource("plugin", name="demo")
    assert "read" in project.registry.entries
    record = project.plugins.record_for("demo")
    assert (record.status, record.tools, record.hooks) == (
        "loaded",
        ["noargs_plugin_tool"],
        ["register_tools"],
    )
    definition = next(d for d in project.tools() if d.id == "noargs_plugin_tool")
    assert definition.parameters["type"] == "object" and definition.parameters["properties"] == {}


def test_async_register_tools_hook_is_awaited(make_project) -> None:
    class AsyncPlugin:
        @hookimpl
        async def register_tools(self, register) -> None:
            await asyncio.sleep(0)
            register(make_tool("async_one"))

    project = make_project(plugins=[("asyncdemo", AsyncPlugin())])

    assert "async_one" in project.registry.entries


def test_register_tools_that_raises_keeps_earlier_tools(make_project, warnings) -> None:
    class HalfBroken:
        @hookimpl
        def register_tools(self, register) -> None:
            register(make_tool("first_one"))
            register("not a tool")

    project = make_project(plugins=[("half", HalfBroken())])

    assert "first_one" in project.registry.entries
    record = project.plugins.record_for("half")
    assert record.status == "failed"
    assert "register_tools" in record.error and "TypeError" in record.error
    assert any("half" in w for w in warnings)


def test_gated_tools_are_registered_but_not_offered(make_project) -> None:
    class Gated:
        @hookimpl
        def register_tools(self, register) -> None:
            register(make_tool("gated_one"), gate="needs OPENCODE_FAKE_FLAG")

    project = make_project(plugins=[("gated", Gated())])
    registry = project.registry

    assert "gated_one" in registry.entries
    assert "gated_one" not in [e.id for e in registry.all()]
    assert "gated_one" not in ids(project.tools())
    assert [h.reason for h in project.generation.offer().hidden if h.entry.id == "gated_one"] == [
        "needs OPENCODE_FAKE_FLAG"
    ]


def test_disabled_plugin_is_blocked(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", '[plugins]\ndisabled = ["demo"]\n')

    project = make_project(
        plugins=[("demo", StandIns(names=("demo_tool",))), ("other", StandIns(names=("x1",)))]
    )

    record = next(r for r in project.generation.plugin_records() if r.name == "demo")
    assert record.status == "blocked"
    assert "demo_tool" not in project.registry.entries
    assert "x1" in project.registry.entries


def test_tool_definition_hook_rewrites_description_and_parameters(
    make_project, project_dir, write_file
) -> None:
    write_file(project_dir / ".opencode" / "tool" / "hello.py", HELLO)
    seen: list[tuple[str, Any]] = []

    class Rewriter:
        @hookimpl
        def tool_definition(self, tool_id, model, output) -> None:
            seen.append((tool_id, model))
            if tool_id == "hello":
                output.description = output.description + " (rewritten)"
                schema = dict(output.parameters)
                schema["properties"] = {**schema["properties"], "loud": {"type": "boolean"}}
                output.parameters = schema

    project = make_project(plugins=[("rewriter", Rewriter())])
    model = ModelRef.parse("anthropic/claude-sonnet-4-5")

    definitions = {d.id: d for d in project.tools(model)}

    assert definitions["hello"].description == "Say hello. (rewritten)"
    assert set(definitions["hello"].parameters["properties"]) == {"name", "loud"}
    assert definitions["read"].description == project.registry.get("read").tool.description
    assert ("hello", model) in seen and ("read", model) in seen
    assert all(tool_id != "invalid" for tool_id, _ in seen)
    # the tool itself is untouched
    assert set(project.registry.get("hello").tool.load().schema()["properties"]) == {"name"}


def test_tool_definition_hook_with_fewer_arguments(make_project) -> None:
    class Short:
        @hookimpl
        def tool_definition(self, output) -> None:
            output.description = "same for all"

    project = make_project(plugins=[("short", Short())])

    # task's list of subagents comes after the hooks (core §3.5 step 3)
    assert {d.description.split("\nAvailable agent types")[0] for d in project.tools()} == {"same for all"}


def test_failing_tool_definition_hook_is_reported_not_raised(make_project, warnings) -> None:
    class Broken:
        @hookimpl
        def tool_definition(self, tool_id, output) -> None:
            raise ValueError("hook broke")

    project = make_project(plugins=[("broken", Broken())])

    definitions = project.tools()

    assert "read" in ids(definitions)
    record = project.plugins.record_for("broken")
    assert record.status == "failed"
    assert "tool_definition" in record.error and "hook broke" in record.error
    assert any("broken" in w and "hook broke" in w for w in warnings)


# -- per-model filtering ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "provider", "model_id"),
    [
        ("openai/gpt-5", "openai", "gpt-5"),
        ("gpt-5", "openai", "gpt-5"),
        ("anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("opencode/grok-code", "opencode", "grok-code"),
        ("openrouter/openai/gpt-5", "openrouter", "openai/gpt-5"),
        ("some-local-model", None, "some-local-model"),
    ],
)
def test_model_ref_parse(text, provider, model_id) -> None:
    ref = ModelRef.parse(text)
    assert (ref.provider, ref.id) == (provider, model_id)


def test_model_ref_str() -> None:
    assert str(ModelRef.parse("openai/gpt-5")) == "openai/gpt-5"
    assert str(ModelRef(None, "local")) == "local"


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("gpt-5", True),
        ("gpt-5-codex", True),
        ("gpt-5.1", True),
        ("openai/gpt-5", True),
        ("gpt-4o", False),
        ("gpt-4.1", False),
        ("gpt-oss-120b", False),
        ("claude-sonnet-4-5", False),
        ("o3", False),
    ],
)
def test_uses_apply_patch(model_id, expected) -> None:
    assert uses_apply_patch(model_id) is expected


@pytest.mark.parametrize(
    ("model", "offered", "hidden"),
    [
        ("openai/gpt-5", {"apply_patch"}, {"edit", "write"}),
        ("gpt-5", {"apply_patch"}, {"edit", "write"}),
        ("openai/gpt-4o", {"edit", "write"}, {"apply_patch"}),
        ("openrouter/gpt-oss-120b", {"edit", "write"}, {"apply_patch"}),
        ("anthropic/claude-sonnet-4-5", {"edit", "write"}, {"apply_patch"}),
    ],
)
def test_apply_patch_versus_edit_and_write(make_project, model, offered, hidden) -> None:
    project = make_project(plugins=[("demo", StandIns())])

    shown = set(ids(project.tools(ModelRef.parse(model))))

    assert offered <= shown
    assert not (hidden & shown)
    reasons = {h.entry.id: h.reason for h in project.generation.offer(ModelRef.parse(model)).hidden}
    assert hidden <= set(reasons)


def test_without_a_model_every_stand_in_is_offered(make_project) -> None:
    project = make_project(plugins=[("demo", StandIns())])

    assert {"edit", "write", "apply_patch", "websearch"} <= set(ids(project.tools()))


@pytest.mark.parametrize(
    ("model", "extra_env", "offered"),
    [
        ("opencode/grok-code", {}, True),
        ("opencode-go/kimi-k2", {}, True),
        ("anthropic/claude-sonnet-4-5", {}, False),
        ("openai/gpt-5", {}, False),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_ENABLE_EXA": "1"}, True),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_EXPERIMENTAL_EXA": "true"}, True),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_EXPERIMENTAL": "yes"}, True),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_ENABLE_PARALLEL": "on"}, True),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_EXPERIMENTAL_PARALLEL": "y"}, True),
        ("anthropic/claude-sonnet-4-5", {"OPENCODE_ENABLE_EXA": "0"}, False),
    ],
)
def test_websearch_provider_rule(make_project, model, extra_env, offered) -> None:
    project = make_project(extra_env=extra_env, plugins=[("demo", StandIns())])
    hidden = {h.entry.id: h.reason for h in project.generation.offer(ModelRef.parse(model)).hidden}

    assert ("websearch" not in hidden) is offered
    assert ("websearch" in ids(project.tools(ModelRef.parse(model)))) is offered


def test_a_plugin_tool_named_execute_is_not_hidden_by_the_code_mode_rule(make_project) -> None:
    # the code-mode condition (core §3.1 item 15) is about registering the built-in, not a filter by id
    project = make_project(plugins=[("demo", StandIns(names=("execute",)))])

    assert "execute" in ids(project.tools())
    assert "execute" in ids(project.tools(ModelRef.parse("openai/gpt-5")))


def test_per_model_filters_go_by_id_whatever_the_source(make_project) -> None:
    # core §3.5 filters all() by id: a plugin's apply_patch is hidden from Claude like the built-in
    project = make_project(plugins=[("demo", StandIns(names=("apply_patch",)))])

    hidden = {
        h.entry.id: h.reason
        for h in project.generation.offer(ModelRef.parse("anthropic/claude-sonnet-4-5")).hidden
    }
    assert project.registry.get("apply_patch").source.kind == "plugin"
    assert "apply_patch" in hidden


def test_tools_wholly_denied_to_the_agent_are_not_offered(make_project) -> None:
    project = make_project(plugins=[("demo", StandIns())])

    explore = set(ids(project.tools(agent="explore")))
    build = set(ids(project.tools(agent="build")))

    assert {"read", "websearch"} <= explore
    assert not ({"edit", "write", "apply_patch"} & explore)
    assert {"edit", "write", "apply_patch", "read"} <= build
