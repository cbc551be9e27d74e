"""Tools from other ecosystems (issue 43): llm's tool plugins, LangChain tools and toolkits, pydantic-ai
toolsets, each a named built-in plugin whose tools are tools like ours. Driven through the real CLI (a
process) with the real packages: llm-tools-simpleeval, llm-tools-sqlite, langchain-core,
langchain-community's FileManagementToolkit, pydantic-ai."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from pydantic import v1

import opencode_cli

pytest.importorskip("llm")
pytest.importorskip("langchain_community")
pytest.importorskip("pydantic_ai")

import llm

ROOT = Path(opencode_cli.__file__).resolve().parent.parent
#: The site directory llm's plugins are installed in (the search path of both entry-point groups).
SITE = str(Path(llm.__file__).resolve().parent.parent)

DEMO = '''
from langchain_core.tools import StructuredTool, ToolException, tool
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.toolsets import FunctionToolset


@tool
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper() + "!"


@tool(response_format="content_and_artifact")
def count(words: str) -> tuple[str, dict]:
    """Count the words."""
    return f"{len(words.split())} words", {"n": len(words.split())}


def _refuse(x: int) -> str:
    raise ToolException(f"no {x}")


handled = StructuredTool.from_function(
    _refuse, name="handled", description="Refuses.", handle_tool_error=True
)
raised = StructuredTool.from_function(_refuse, name="raised", description="Refuses loudly.")

toolset = FunctionToolset()


@toolset.tool
def greet(ctx: RunContext[None], name: str, times: int = 1) -> str:
    """Greet someone.

    Args:
        name: who to greet
        times: how often
    """
    return " ".join([f"hello {name} ({ctx.tool_name})"] * times)


@toolset.tool_plain
def picky(word: str) -> str:
    """Accept only 'yes'."""
    if word != "yes":
        raise ModelRetry("say yes")
    return "thanks"
'''


@pytest.fixture
def bridged(tmp_path: Path, cli_env: dict[str, str]) -> dict[str, Any]:
    """An environment in which llm's installed plugins are seen (entry points searched in the site
    directory), with a module of LangChain and pydantic-ai tools on the path; config goes to the user's
    global config (the user's own: trusted)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "bridged_demo.py").write_text(textwrap.dedent(DEMO))
    env = {k: v for k, v in cli_env.items() if k not in ("project", "OPENCODE_DISABLE_PLUGIN_AUTOLOAD")}
    env.update(
        OPENCODE_PLUGIN_PATH=SITE,
        PYTHONPATH=os.pathsep.join([str(ROOT), str(pkg)]),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml"
    config.parent.mkdir(parents=True)
    return {"env": env, "project": Path(cli_env["project"]), "config": config}


def opencode(bridged: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "opencode_cli", *args],
        cwd=bridged["project"],
        env=bridged["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def configure(bridged: dict[str, Any], text: str) -> None:
    bridged["config"].write_text(textwrap.dedent(text))


def listed(bridged: dict[str, Any], *options: str) -> dict[str, dict[str, Any]]:
    done = opencode(bridged, *options, "tools", "list", "--json")
    assert done.returncode == 0, done.stderr
    return {tool["id"]: tool for tool in json.loads(done.stdout)["tools"]}


# -- llm ------------------------------------------------------------------------------------------------


def test_an_installed_llm_plugin_s_tool_runs_as_ours(bridged: dict[str, Any]) -> None:
    tools = listed(bridged)
    assert tools["simple_eval"]["source"] == {
        "kind": "bridge",
        "name": "llm",
        "origin": "tools_simpleeval",  # the plugin's name, as `llm plugins` shows it
        "version": version("llm-tools-simpleeval"),
    }
    assert "llm_time" not in tools and "llm_version" not in tools  # llm's own, not a plugin's
    assert "SQLite_query" not in tools  # a toolbox is offered once configured
    done = opencode(bridged, "tools", "run", "simple_eval", "expression=2**10")
    assert (done.returncode, done.stdout.strip()) == (0, "1024")


def test_a_configured_toolbox_answers_in_its_own_thread(bridged: dict[str, Any]) -> None:
    database = bridged["project"] / "x.db"
    with sqlite3.connect(database) as connection:
        connection.execute("create table t (a)")
        connection.execute("insert into t values (42)")
    configure(bridged, f"[llm]\ntoolboxes = ['SQLite(\"{database}\")']\n")
    tools = listed(bridged)
    assert tools["SQLite_query"]["source"]["origin"] == "llm_tools_sqlite"
    assert "SQLite_schema" in tools
    done = opencode(bridged, "tools", "run", "SQLite_query", "sql=select a from t")
    assert (done.returncode, json.loads(done.stdout)) == (0, [{"a": 42}]), done.stderr


def test_no_llm_switches_the_llm_tools_off(bridged: dict[str, Any]) -> None:
    assert "simple_eval" not in listed(bridged, "-p", "no:llm")
    done = opencode(bridged, "-p", "no:llm", "tools", "run", "simple_eval", "expression=1")
    assert done.returncode == 2 and "disabled by -p no:llm" in done.stderr


def test_a_toolbox_that_cannot_be_made_fails_the_plugin_not_the_command(bridged: dict[str, Any]) -> None:
    configure(bridged, "[llm]\ntoolboxes = ['SQLit(\"x.db\")']\n")
    done = opencode(bridged, "plugins", "list", "--json")
    assert done.returncode == 0
    record = next(p for p in json.loads(done.stdout)["plugins"] if p["name"] == "llm")
    assert record["status"] == "failed"
    assert "SQLit" in record["error"] and "toolboxes: SQLite" in record["error"]
    assert record["tools"] == ["simple_eval"]  # what it could register, it kept
    assert opencode(bridged, "tools", "run", "simple_eval", "expression=6*7").stdout.strip() == "42"


def test_llm_tool_call_output_and_attachments_map_onto_ours(project: Any, tool_context: Any) -> None:
    """A plugin's tool taking ``llm_tool_call``, returning a ``ToolOutput`` with an attachment, async."""
    from opencode_cli.bridges import source
    from opencode_cli.bridges.llm import LlmTool

    seen: list[Any] = []

    async def picture(name: str, llm_tool_call: llm.ToolCall) -> llm.ToolOutput:
        seen.append(llm_tool_call)
        return llm.ToolOutput(
            output={"name": name}, attachments=[llm.Attachment(type="image/png", content=b"\x89PNG")]
        )

    made = LlmTool(llm.Tool.function(picture), source("llm", "demo"))
    assert made.schema()["properties"] == {"name": {"type": "string"}}  # llm_tool_call is not shown
    result = project.portal.call(made.run, {"name": "a"}, tool_context("picture", call_id="call-1"))
    assert json.loads(result.output) == {"name": "a"}
    assert [(a.mime, a.url) for a in result.attachments] == [("image/png", "data:image/png;base64,iVBORw==")]
    assert (seen[0].name, seen[0].arguments, seen[0].tool_call_id) == ("picture", {"name": "a"}, "call-1")


def test_prepare_async_runs_once_before_the_first_call(project: Any, tool_context: Any) -> None:
    from opencode_cli.bridges import source
    from opencode_cli.bridges.llm import LlmTool

    class Counter(llm.Toolbox):
        def __init__(self) -> None:
            self.prepared = 0

        async def prepare_async(self) -> None:
            self.prepared += 1

        def value(self) -> int:
            """How often it was prepared."""
            return self.prepared

    box = Counter()
    made = [LlmTool(each, source("llm", "demo"), box) for each in box.tools()]
    assert [tool.id for tool in made] == ["Counter_value"]
    outputs = [project.portal.call(made[0].run, {}, tool_context("Counter_value")).output for _ in range(2)]
    assert outputs == ["1", "1"]


# -- LangChain --------------------------------------------------------------------------------------------


LANGCHAIN = """
[langchain]
tools = ["bridged_demo:shout", "bridged_demo:count", "bridged_demo:handled", "bridged_demo:raised"]
toolkits = [
  {{ path = "langchain_community.agent_toolkits:FileManagementToolkit", args = {{ root_dir = "{root}" }} }},
]
"""


def test_langchain_tools_are_listed_inspected_and_run(bridged: dict[str, Any]) -> None:
    configure(bridged, LANGCHAIN.format(root="sub"))
    tools = listed(bridged, "-p", "no:llm")
    assert tools["shout"]["source"] == {"kind": "bridge", "name": "langchain", "origin": "bridged_demo:shout"}
    assert {"read_file", "write_file", "list_directory"} <= set(tools)
    inspected = opencode(bridged, "tools", "inspect", "shout", "--json")
    assert json.loads(inspected.stdout)["parameters"]["properties"] == {"text": {"type": "string"}}
    assert opencode(bridged, "tools", "run", "shout", "text=hi").stdout.strip() == "HI!"
    counted = json.loads(opencode(bridged, "tools", "run", "count", "words=a b c", "--json").stdout)
    assert (counted["output"], counted["metadata"]["artifact"]) == ("3 words", {"n": 3})  # artifact kept


# pydantic v1 resolves the annotations (strings here) in the module's globals: the models live here
class V1Tone(v1.BaseModel):
    loud: bool = False


class V1Args(v1.BaseModel):
    """Arguments (not shown: the tool's description says it)."""

    text: str = v1.Field(description="what to say")
    times: int = 1
    tone: V1Tone | None = None


def _say(text: str, times: int = 1, tone: V1Tone | None = None) -> str:
    said = " ".join([text] * times)
    return said.upper() if tone is not None and tone.loud else said


def test_a_langchain_tool_with_a_pydantic_v1_args_schema_is_shown_and_called(
    project: Any, tool_context: Any
) -> None:
    """A tool whose ``args_schema`` is a ``pydantic.v1`` model (which has no ``model_json_schema``): its
    parameters come from the v1 schema, titles dropped and the nested model's definition inlined."""
    from langchain_core.tools import StructuredTool

    from opencode_cli.bridges import source
    from opencode_cli.bridges.langchain import LangchainTool

    wrapped = StructuredTool.from_function(_say, name="say", description="Say it.", args_schema=V1Args)
    made = LangchainTool(wrapped, source("langchain", "demo:say"))
    schema = made.schema()
    assert schema["required"] == ["text"]
    assert schema["properties"]["text"] == {"type": "string", "description": "what to say"}
    assert schema["properties"]["times"]["default"] == 1
    assert schema["properties"]["tone"] == {
        "type": "object",
        "properties": {"loud": {"type": "boolean", "default": False}},
    }
    assert "title" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
    arguments = {"text": "hi", "times": 2, "tone": {"loud": True}}
    result = project.portal.call(made.run, arguments, tool_context("say"))
    assert result.output == "HI HI"


@pytest.mark.parametrize("name", ["handled", "raised"])
def test_a_tool_exception_is_an_error_result(bridged: dict[str, Any], name: str) -> None:
    configure(bridged, LANGCHAIN.format(root="sub"))
    done = opencode(bridged, "-p", "no:llm", "tools", "run", name, "x=3", "--json")
    assert done.returncode == 1
    assert "no 3" in done.stdout + done.stderr


def test_the_file_toolkit_keeps_to_its_root_inside_the_project(bridged: dict[str, Any]) -> None:
    project = bridged["project"]
    (project / "sub").mkdir()
    (project / "sub" / "a.txt").write_text("inside\n")
    (project / "secret.txt").write_text("beside\n")
    configure(bridged, LANGCHAIN.format(root=project / "sub"))
    assert opencode(bridged, "tools", "run", "read_file", "file_path=a.txt").stdout.strip() == "inside"
    escaped = opencode(bridged, "tools", "run", "read_file", "file_path=../secret.txt")
    assert "beside" not in escaped.stdout and "Access denied to file_path: ../secret.txt" in escaped.stdout


def test_the_file_toolkit_outside_the_project_asks_external_directory(
    bridged: dict[str, Any], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("far away\n")
    configure(bridged, LANGCHAIN.format(root=outside))
    refused = opencode(bridged, "tools", "run", "read_file", "file_path=s.txt")
    assert refused.returncode != 0 and "far away" not in refused.stdout
    assert f"external_directory on {outside}/*" in refused.stderr
    allowed = opencode(
        bridged, "tools", "run", "read_file", "file_path=s.txt", "--allow", f"external_directory={outside}/*"
    )
    assert (allowed.returncode, allowed.stdout.strip()) == (0, "far away")
    denied = opencode(
        bridged, "tools", "run", "write_file", "file_path=new.txt", "text=x", "--deny", "external_directory"
    )
    assert denied.returncode != 0 and not (outside / "new.txt").exists()


# -- pydantic-ai ------------------------------------------------------------------------------------------


def test_a_pydantic_ai_toolset_hides_run_context(bridged: dict[str, Any]) -> None:
    configure(bridged, '[pydantic_ai]\ntoolsets = ["bridged_demo:toolset"]\n')
    tools = listed(bridged, "-p", "no:llm")
    assert tools["greet"]["source"] == {
        "kind": "bridge",
        "name": "pydantic_ai",
        "origin": "bridged_demo:toolset",
    }
    inspected = json.loads(opencode(bridged, "tools", "inspect", "greet", "--json").stdout)
    assert set(inspected["parameters"]["properties"]) == {"name", "times"}  # no ctx
    assert opencode(bridged, "tools", "run", "greet", "name=Ann", "times:=2").stdout.strip() == (
        "hello Ann (greet) hello Ann (greet)"
    )
    retry = opencode(bridged, "tools", "run", "picky", "word=no")
    assert retry.returncode == 1 and "say yes" in retry.stdout + retry.stderr
    assert opencode(bridged, "tools", "run", "picky", "word=yes").stdout.strip() == "thanks"


def test_a_toolset_that_is_not_of_functions_is_refused_with_the_reason(bridged: dict[str, Any]) -> None:
    configure(bridged, '[pydantic_ai]\ntoolsets = ["bridged_demo:shout", "nowhere:x"]\n')
    done = opencode(bridged, "-p", "no:llm", "plugins", "list", "--json")
    record = next(p for p in json.loads(done.stdout)["plugins"] if p["name"] == "pydantic_ai")
    assert record["status"] == "failed"
    assert "bridged_demo:shout: not a pydantic-ai toolset (StructuredTool)" in record["error"]
    assert "nowhere:x: cannot import nowhere" in record["error"]


# -- like any tool ----------------------------------------------------------------------------------------


def test_schemas_for_a_model_show_the_bridged_tools(bridged: dict[str, Any]) -> None:
    configure(
        bridged,
        LANGCHAIN.format(root="sub") + '\n[pydantic_ai]\ntoolsets = ["bridged_demo:toolset"]\n',
    )
    done = opencode(bridged, "tools", "schema", "--model", "gpt-5")
    functions = {item["function"]["name"]: item["function"] for item in json.loads(done.stdout)}
    assert functions["simple_eval"]["parameters"]["properties"] == {"expression": {"type": "string"}}
    assert functions["greet"]["parameters"]["required"] == ["name"]
    assert functions["read_file"]["description"] == "Read file from disk"
    assert functions["shout"]["parameters"]["properties"] == {"text": {"type": "string"}}


def test_a_bridged_tool_s_permission_is_its_id_and_its_output_is_truncated(bridged: dict[str, Any]) -> None:
    configure(
        bridged,
        """
        [tool_output]
        max_lines = 3
        [permission]
        simple_eval = "deny"
        [langchain]
        tools = ["bridged_demo:shout"]
        """,
    )
    assert "simple_eval" not in listed(bridged)  # denied wholly by its id: not offered, as any tool
    long = opencode(bridged, "tools", "run", "shout", "text=" + "a\n" * 50, "--json")
    result = json.loads(long.stdout)
    assert result["metadata"]["truncated"] is True and "outputPath" in result["metadata"]


def test_sandbox_check_and_plugins_list_say_what_runs_outside_the_sandbox(bridged: dict[str, Any]) -> None:
    configure(bridged, '[sandbox]\nmode = "workspace-write"\n[langchain]\ntools = ["bridged_demo:shout"]\n')
    check = json.loads(opencode(bridged, "sandbox", "check", "--json").stdout)
    assert check["unconfined"] == {"llm": ["simple_eval"], "langchain": ["shout"]}
    text = opencode(bridged, "plugins", "list").stdout
    assert text.count("runs in this process: the sandbox does not confine these tools") == 2


# -- the catalogue of llm plugins --------------------------------------------------------------------------

PLUGIN = '''
import llm


def {name}(text: str) -> str:
    """{doc}"""
    return text


@llm.hookimpl
def register_tools(register):
    register({name})
'''


def test_the_catalogue_is_made_again_when_a_plugin_changes(tmp_path: Path, monkeypatch: Any) -> None:
    """A plugin of one's own (a module on the path, named by an entry point): catalogued once, read from
    the cache while unchanged, made again when its file changes."""
    from opencode_cli.builtin import llm as llm_catalog
    from opencode_cli.entrypoints import EntryPoint

    module = tmp_path / "llm_catalogued.py"
    module.write_text(PLUGIN.format(name="echo_once", doc="Echo."))
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = EntryPoint("catalogued", "llm_catalogued", "llm-catalogued", "1.0")
    first, problems = llm_catalog.catalog([entry], tmp_path / "cache")
    assert problems == [] and [t["name"] for t in first["catalogued"]["tools"]] == ["echo_once"]
    assert (tmp_path / "cache" / llm_catalog.CACHE_FILE).is_file()
    module.write_text(PLUGIN.format(name="echo_twice", doc="Echo again."))
    os.utime(module, ns=(1, 1))  # another modification time, whatever the clock's resolution
    from opencode_cli.bridges import llm as bridge

    bridge._REGISTERED.clear()
    sys.modules.pop("llm_catalogued", None)
    again, _ = llm_catalog.catalog([entry], tmp_path / "cache")
    assert [(t["name"], t["description"]) for t in again["catalogued"]["tools"]] == [
        ("echo_twice", "Echo again.")
    ]


def test_a_bridged_call_goes_through_the_hooks_and_the_doom_loop(make_project: Any) -> None:
    """An llm plugin's tool, dispatched in a session: the execution hooks see it, and a third identical call
    in a row asks ``doom_loop`` with the tool's id, as for any tool."""
    import asyncio

    from opencode_cli import hookimpl
    from opencode_cli.session import Decision, ToolCall

    seen: list[tuple[str, str]] = []
    asked: list[tuple[str, list[str]]] = []

    class Spy:
        @hookimpl
        def tool_execute_before(self, tool: str, args: dict) -> None:
            seen.append(("before", tool))

        @hookimpl
        def tool_execute_after(self, tool: str, result: Any) -> None:
            seen.append(("after", tool))

    async def prompt(request: Any) -> Decision:
        asked.append((request.permission, request.patterns))
        return Decision("once")

    project = make_project(extra_env={"OPENCODE_PLUGIN_PATH": SITE}, plugins=[("spy", Spy())])
    session = project.session(prompt=prompt)

    async def calls() -> list[Any]:
        return [await session.dispatch(ToolCall("simple_eval", '{"expression": "6*7"}')) for _ in range(3)]

    parts = asyncio.run(asyncio.wait_for(calls(), 60))
    assert [(p.status, p.text) for p in parts] == [("completed", "42")] * 3
    assert seen[:2] == [("before", "simple_eval"), ("after", "simple_eval")] and len(seen) == 6
    assert asked == [("doom_loop", ["simple_eval"])]


def test_a_changed_table_rebuilds_its_bridge_on_reload(
    make_project: Any, env: dict[str, str], tmp_path: Path, monkeypatch: Any
) -> None:
    """A reload after ``[langchain]`` changed lists what the new table names (the bridge reads the config
    of the generation being built, not the current one's); an unchanged bridge keeps its tools."""
    (tmp_path / "bridged_demo.py").write_text(textwrap.dedent(DEMO))
    monkeypatch.syspath_prepend(str(tmp_path))
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[langchain]\ntools = ["bridged_demo:shout"]\n[pydantic_ai]\ntoolsets = ["bridged_demo:toolset"]\n'
    )
    project = make_project()
    before = project.registry
    assert {"shout", "greet"} <= set(before.entries) and "count" not in before.entries
    config.write_text(
        '[langchain]\ntools = ["bridged_demo:count"]\n[pydantic_ai]\ntoolsets = ["bridged_demo:toolset"]\n'
    )
    project.builder.request(files=[config])
    after = project.registry
    assert "count" in after.entries and "shout" not in after.entries
    assert after.get("greet").tool is before.get("greet").tool  # the pydantic_ai bridge was not rebuilt


TOOLBOX_PLUGIN = '''
import threading

import llm


class Notes(llm.Toolbox):
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.made_in = threading.get_ident()

    def prepare(self):
        def extra_note() -> str:
            """A tool added by prepare()."""
            return "extra"

        self.add_tool(extra_note)

    def note(self, text: str) -> str:
        """Write a note."""
        same = threading.get_ident() == self.made_in
        return f"{self.prefix}{text} (same thread: {same})"


@llm.hookimpl
def register_tools(register):
    register(Notes)
'''


def test_a_toolbox_is_prepared_its_added_tools_listed_and_called_where_it_was_made(
    tmp_path: Path, monkeypatch: Any, project: Any, tool_context: Any
) -> None:
    from opencode_cli.bridges.llm import toolbox_tools
    from opencode_cli.entrypoints import EntryPoint

    (tmp_path / "llm_notes.py").write_text(TOOLBOX_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = EntryPoint("notes", "llm_notes", "llm-notes", "0.1")
    made, problems = toolbox_tools([entry], ['Notes("> ")', "Nope()"], ["Notes"])
    assert sorted(tool.id for tool in made) == ["Notes_note", "extra_note"]
    assert [tool.source.describe() for tool in made] == ["llm: notes"] * 2
    assert problems == ["[llm] toolboxes: Nope(): ValueError: Unknown class 'Nope' (toolboxes: Notes)"]
    note = next(tool for tool in made if tool.id == "Notes_note")
    assert project.portal.call(note.run, {"text": "hi"}, tool_context("Notes_note")).output == (
        "> hi (same thread: True)"
    )
