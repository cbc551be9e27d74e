"""A Toolbox (issue 37): a class whose methods are tools, with a setup and a teardown the project owns as a
service. It works in the library (as a plugin of its own, or registered by one), as a tool file, with the
plugin test kit, and its teardown runs when the project closes, also on Ctrl-C of the command. The pip
plugin case is opencode-demo-tools' ``DemoNotes`` (tests/test_first_party_plugins.py)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import (
    Project,
    Tool,
    Toolbox,
    ToolContext,
    ToolError,
    ToolSpec,
    define,
    hookimpl,
    tool,
)


class Counter(Toolbox):
    """A toolbox that records its lifecycle in ``events`` (a list shared with the test)."""

    prefix = "counter"

    def __init__(self, events: list[str] | None = None, fail_setup: int = 0) -> None:
        self.events = [] if events is None else events
        self.fail_setup = fail_setup
        self.total = 0

    async def setup(self, project: Project | None) -> None:
        if self.fail_setup:
            self.fail_setup -= 1
            raise RuntimeError("the counter's store is not there yet")
        self.events.append("setup" if project is not None else "setup without a project")

    async def teardown(self) -> None:
        self.events.append("teardown")

    async def add(self, amount: int) -> str:
        """Add to the running total."""
        self.total += amount
        return f"total {self.total}"

    def total_now(self, ctx: ToolContext) -> str:
        """The running total (a plain method: it runs in a worker thread)."""
        return f"total {self.total} ({ctx.tool})"

    def reset(self) -> str:
        """Set the total back to zero."""
        self.total = 0
        return "reset"

    def _private(self) -> None:
        raise AssertionError("never a tool")


def test_every_form_gives_one_spec() -> None:
    @tool
    def shout(text: str) -> str:
        """Say it louder."""
        return text.upper()

    class Echo(Tool):
        id = "echo"
        description = "Say it back."
        json_schema = {"type": "object", "properties": {"text": {"type": "string"}}}  # noqa: RUF012

    lazy = define("later", lambda: shout, description="Built on first use.")
    specs = [shout.spec, Echo().spec, lazy.spec, *(t.spec for t in Counter().tools())]
    assert all(isinstance(spec, ToolSpec) for spec in specs)
    assert [s.id for s in specs] == [
        "shout",
        "echo",
        "later",
        "counter_add",
        "counter_total_now",
        "counter_reset",
    ]
    assert [s.description for s in specs][:3] == ["Say it louder.", "Say it back.", "Built on first use."]
    assert specs[3].description == "Add to the running total."
    assert specs[3].parameters["properties"]["amount"]["type"] == "integer"
    assert specs[4].parameters["properties"] == {}  # ctx is injected, never shown
    assert lazy.spec.parameters == shout.spec.parameters  # not given to define: the built tool's
    renamed = shout.copy(id="yell")
    assert renamed.spec.id == "yell" and shout.spec.id == "shout"  # one copy; a spec is frozen
    with pytest.raises(AttributeError):
        shout.spec.id = "x"  # type: ignore[misc]
    assert renamed.spec.replace(id="again").description == "Say it louder."


def test_a_toolbox_instance_is_a_plugin_and_is_set_up_once(project_dir: Path, env: dict[str, str]) -> None:
    events: list[str] = []

    async def main() -> list[str]:
        async with Project(project_dir, env=env, plugins=[("counter", Counter(events))]) as project:
            assert [t for t in project.registry.entries if t.startswith("counter")] == [
                "counter_add",
                "counter_total_now",
                "counter_reset",
            ]
            assert project.plugins.record_for("counter").tools == [
                "counter_add",
                "counter_total_now",
                "counter_reset",
            ]
            outputs = [
                (await project.arun_tool("counter_add", {"amount": 2})).output,
                (await project.arun_tool("counter_add", {"amount": 3})).output,
                (await project.arun_tool("counter_total_now", {})).output,
            ]
            assert events == ["setup"]
            return outputs

    assert asyncio.run(main()) == ["total 2", "total 5", "total 5 (counter_total_now)"]
    assert events == ["setup", "teardown"]


def test_a_failed_setup_fails_the_call_and_the_next_call_tries_again(make_project: Any) -> None:
    events: list[str] = []
    project = make_project(plugins=[("counter", Counter(events, fail_setup=1))])
    part = project.session().run_tool  # the sync façade: one session, calls on the project's loop
    with pytest.raises(ToolError, match="the counter's store is not there yet"):
        part("counter_add", {"amount": 1})
    assert events == []  # no teardown after a setup that failed
    assert part("counter_add", {"amount": 1}).output == "total 1"
    project.close()
    assert events == ["setup", "teardown"]


def test_a_plugin_registering_the_class_gives_each_project_its_own(make_project: Any) -> None:
    class Plugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Counter)

    first, second = make_project(plugins=[("p", Plugin())]), make_project(plugins=[("p", Plugin())])
    assert first.run_tool("counter_add", {"amount": 4}).output == "total 4"
    assert second.run_tool("counter_add", {"amount": 1}).output == "total 1"
    assert first.registry.get("counter_add").tool.box is not second.registry.get("counter_add").tool.box


NOTES_FILE = """
from pathlib import Path

from opencode_cli import Toolbox

LOG = Path(__file__).with_name("notes.log")


class Notes(Toolbox):
    def setup(self):
        self.kept = []
        with LOG.open("a") as log:
            log.write("setup VERSION\\n")

    def teardown(self):
        with LOG.open("a") as log:
            log.write("teardown VERSION\\n")

    def add(self, text: str) -> str:
        \"\"\"Keep a note.\"\"\"
        self.kept.append(text)
        return f"{len(self.kept)} kept (VERSION)"

    def show(self) -> str:
        \"\"\"The notes kept.\"\"\"
        return ", ".join(self.kept)

    async def wait(self) -> str:
        \"\"\"Wait until interrupted.\"\"\"
        import asyncio, sys
        print("STARTED", file=sys.stderr, flush=True)
        await asyncio.Event().wait()
        return "never"
"""


def write_notes(project_dir: Path, version: str) -> Path:
    path = project_dir / ".opencode" / "tool" / "notes.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NOTES_FILE.replace("VERSION", version))
    return path


def test_a_tool_files_toolbox_is_named_after_the_file_and_replaced_on_reload(
    make_project: Any, project_dir: Path
) -> None:
    path = write_notes(project_dir, "v1")
    log = path.with_name("notes.log")
    project = make_project()
    assert [t for t in project.registry.entries if t.startswith("notes")] == [
        "notes_add",
        "notes_show",
        "notes_wait",
    ]
    assert project.registry.get("notes_add").description == "Keep a note."
    assert project.run_tool("notes_add", {"text": "a"}).output == "1 kept (v1)"
    assert project.run_tool("notes_add", {"text": "b"}).output == "2 kept (v1)"
    write_notes(project_dir, "v2")
    project.generations.install(project.generations.prepare(project.sources.keys([path])))
    assert project.run_tool("notes_add", {"text": "c"}).output == "1 kept (v2)"  # the new file's toolbox
    assert log.read_text().splitlines() == ["setup v1", "teardown v1", "setup v2"]
    project.close()
    assert log.read_text().splitlines()[-1] == "teardown v2"


class KitCounter(Counter):
    prefix = "kit"


@pytest.fixture
def opencode_plugins() -> list[Any]:
    return [("kit", KitCounter())]


def test_the_plugin_test_kit_runs_a_toolbox(run_tool: Any, opencode_project: Project) -> None:
    assert run_tool("kit_add", amount=5).output == "total 5"
    assert run_tool("kit_total_now").output == "total 5 (kit_total_now)"
    box = opencode_project.registry.get("kit_add").tool.box
    assert box.events == ["setup"]
    opencode_project.close()
    assert box.events == ["setup", "teardown"]


@pytest.mark.slow
def test_ctrl_c_of_the_command_tears_the_toolbox_down(cli_env: dict[str, str]) -> None:
    project_dir = Path(cli_env["project"])
    log = write_notes(project_dir, "v1").with_name("notes.log")
    script = Path(sys.executable).parent / "opencode"
    env = {k: v for k, v in cli_env.items() if k != "project"}
    process = subprocess.Popen(
        [str(script), "tools", "run", "notes_wait"],
        cwd=project_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        seen = []
        while True:  # bounded by the communicate() timeout below if it never starts
            line = process.stderr.readline()
            if not line or line.startswith("STARTED"):
                break
            seen.append(line)
        assert process.poll() is None, seen
        assert log.read_text() == "setup v1\n"
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, "".join(seen) + rest
    assert "Traceback" not in rest
    assert log.read_text() == "setup v1\nteardown v1\n"


def test_register_refuses_what_is_no_tool(make_project: Any, warnings: list[str]) -> None:
    class Wrong:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(textwrap)

    project = make_project(plugins=[("wrong", Wrong())])
    assert project.registry.entries  # the others are there
    record = project.plugins.record_for("wrong")
    assert record.status == "failed"
    assert (
        "register() takes a tool (made with @tool or a Tool subclass) or a Toolbox, not module"
        in record.error
    )
