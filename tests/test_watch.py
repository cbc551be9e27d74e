"""Hot reload in-process: ``Project.watch()`` builds new generations and swaps them in between calls."""

from __future__ import annotations

import asyncio
import textwrap
import time
import types
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import hookimpl, tool
from opencode_cli.watch import ChangeReport, Watcher, watch_plan

ProjectFactory = Callable[..., Any]

HELLO = '''
from opencode_cli import Field, tool


@tool
def default(name: str = Field(description="Who to greet.")) -> str:
    """Say hello."""
    return f"hello {name}"
'''

HELLO_LOUD = '''
from opencode_cli import Field, tool


@tool
def default(name: str = Field(description="Who to greet."), loud: bool = False) -> str:
    """Say hello."""
    return f"HELLO {name.upper()}" if loud else f"hi {name}"
'''

BROKEN = """
from opencode_cli import tool


@tool
def default(name: str:
    return name
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def run(coroutine: Coroutine[Any, Any, Any], timeout: float = 90) -> Any:
    """Run a test's async body with a bound on its time."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def next_report(watcher: Watcher, timeout: float = 30) -> ChangeReport:
    return await asyncio.wait_for(anext(watcher), timeout)


async def report_where(
    watcher: Watcher, condition: Callable[[ChangeReport], bool], timeout: float = 30
) -> ChangeReport:
    """The first report that meets ``condition`` (a save can come as more than one batch of events)."""
    deadline = time.monotonic() + timeout
    while True:
        report = await next_report(watcher, max(0.05, deadline - time.monotonic()))
        if condition(report):
            return report


async def until(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.fixture
def tool_dir(project_dir: Path) -> Path:
    folder = project_dir / ".opencode" / "tool"
    folder.mkdir(parents=True)
    return folder


def test_an_edit_is_reported_with_the_schema_difference_and_swapped_in(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            assert watcher.current.number == 1
            assert "hello" in watcher.current.tools
            write(hello, HELLO_LOUD)
            report = await report_where(watcher, lambda r: bool(r.changed))
            assert report.ok and report.generation == 2
            assert report.files == [str(hello)]
            [change] = report.changed
            assert change.id == "hello"
            assert any(line.startswith("+ properties.loud") for line in change.parameters), change.parameters
            assert not change.description_changed and not report.added and not report.removed
            schema = project.registry.get("hello").tool.load().schema()
            assert "loud" in schema["properties"]
            result = await project.session().execute("hello", {"name": "ada", "loud": True})
            assert result.output == "HELLO ADA"

    run(main())


def test_a_syntax_error_keeps_the_last_good_tool_and_names_file_and_line(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            write(hello, BROKEN)
            report = await report_where(watcher, lambda r: bool(r.errors))
            assert report.ok and report.unchanged
            [error] = report.errors
            assert error.startswith(f"{hello}:5: SyntaxError"), error
            assert report.kept == {str(hello): ["hello"]}
            result = await project.session().execute("hello", {"name": "ada"})
            assert result.output == "hello ada"  # the last good version still runs
            record = next(r for r in project.generation.plugin_records() if r.location == str(hello))
            assert record.status == "failed" and record.tools == ["hello"]

            write(hello, HELLO_LOUD)
            report = await report_where(watcher, lambda r: bool(r.resolved))
            assert report.resolved == [str(hello)] and not report.errors
            assert [change.id for change in report.changed] == ["hello"]
            result = await project.session().execute("hello", {"name": "ada"})
            assert result.output == "hi ada"

    run(main())


def test_adding_and_removing_a_tool_file(make_project: ProjectFactory, tool_dir: Path) -> None:
    write(tool_dir / "hello.py", HELLO)
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            extra = write(tool_dir / "extra.py", HELLO.replace("Say hello.", "Another greeting."))
            report = await report_where(watcher, lambda r: bool(r.added))
            assert [(t.id, t.source.path, t.description) for t in report.added] == [
                ("extra", str(extra), "Another greeting.")
            ]
            assert "extra" in project.registry.entries
            extra.unlink()
            report = await report_where(watcher, lambda r: bool(r.removed))
            assert [t.id for t in report.removed] == ["extra"]
            assert "extra" not in project.registry.entries

    run(main())


def test_a_config_change_reloads_and_invalid_toml_keeps_the_generation(
    make_project: ProjectFactory, project_dir: Path, tool_dir: Path
) -> None:
    write(tool_dir / "hello.py", HELLO)
    project = make_project()
    config = project_dir / "opencode.toml"

    async def main() -> None:
        async with project.watch() as watcher:
            assert project.generation.truncator.max_lines == 2000
            config.write_text("[tool_output]\nmax_lines = 3\n")
            report = await report_where(watcher, lambda r: bool(r.config))
            assert report.files == [str(config)]
            assert report.config == ['+ tool_output = {"max_lines": 3}']
            assert project.generation.truncator.max_lines == 3
            assert "config changed" in report.summary()

            config.write_text("[tool_output\nmax_lines = 4\n")
            report = await report_where(watcher, lambda r: not r.ok)
            assert report.generation == watcher.current.number
            [error] = report.errors
            assert str(config) in error and "line 1" in error
            assert project.generation.truncator.max_lines == 3  # the last good generation stays

    run(main())


def test_a_config_directory_created_later_is_watched(make_project: ProjectFactory, project_dir: Path) -> None:
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            before = watcher.plan
            assert before is not None and str(project_dir / ".opencode" / "tool") not in before.roots
            write(project_dir / ".opencode" / "tool" / "late.py", HELLO)
            report = await report_where(watcher, lambda r: bool(r.added))
            assert [t.id for t in report.added] == ["late"]
            await until(lambda: str(project_dir / ".opencode" / "tool") in watcher.plan.roots)
            write(project_dir / ".opencode" / "tool" / "late.py", HELLO_LOUD)
            report = await report_where(watcher, lambda r: bool(r.changed))
            assert [c.id for c in report.changed] == ["late"]

    run(main())


SLOW = '''
import asyncio
from pathlib import Path

from opencode_cli import tool

GATE = Path({gate!r})
STARTED = Path({started!r})


@tool
async def default() -> str:
    """Wait for the gate."""
    STARTED.touch()
    while not GATE.exists():
        await asyncio.sleep(0.01)
    return "{version}"
'''


def test_a_held_call_finishes_on_its_generation_and_the_swap_waits(
    make_project: ProjectFactory, tool_dir: Path, tmp_path: Path
) -> None:
    gate, started = tmp_path / "gate", tmp_path / "started"
    slow = write(tool_dir / "slow.py", SLOW.format(gate=str(gate), started=str(started), version="v1"))
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            session = project.session()

            async def call() -> tuple[int, str]:
                with watcher.hold() as generation:
                    result = await session.execute("slow", {})
                    return generation.number, result.output

            task = asyncio.create_task(call())
            await until(started.exists)
            assert watcher.in_flight == 1
            write(slow, SLOW.format(gate=str(gate), started=str(started), version="v2") + "\nEXTRA = 1\n")
            await until(lambda: watcher.pending)  # built, waiting for the call to end
            assert watcher.current.number == 1
            offered = project.registry.get("slow").tool.load()
            assert "EXTRA" not in offered._function.__globals__  # still the first version's module
            gate.touch()
            assert await task == (1, "v1")
            report = await next_report(watcher)
            assert report.generation == 2 and watcher.current.number == 2 and not watcher.pending
            assert (await session.execute("slow", {})).output == "v2"

    run(main())


def test_an_unheld_call_still_finishes_with_the_tool_it_started(
    make_project: ProjectFactory, tool_dir: Path, tmp_path: Path
) -> None:
    gate, started = tmp_path / "gate", tmp_path / "started"
    slow = write(tool_dir / "slow.py", SLOW.format(gate=str(gate), started=str(started), version="v1"))
    project = make_project()

    async def main() -> None:
        async with project.watch() as watcher:
            task = asyncio.create_task(project.session().execute("slow", {}))
            await until(started.exists)
            write(slow, SLOW.format(gate=str(gate), started=str(started), version="v2") + "\n# v2\n")
            report = await next_report(watcher)  # swapped while the call runs
            assert report.generation == 2
            gate.touch()
            assert (await task).output == "v1"
            assert (await project.session().execute("slow", {})).output == "v2"

    run(main())


def test_reload_by_hand_reports_description_and_source_changes(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    project = make_project()
    watcher = project.watch()
    assert watcher.current.number == 1
    write(hello, HELLO.replace("Say hello.", "Say hello, warmly.\n\n    In two lines."))
    write(tool_dir / "glob.py", HELLO)  # a tool file shadows the built-in glob
    report = watcher.reload([hello])
    assert report is not None and report.generation == 2
    changes = {change.id: change for change in report.changed}
    assert changes["hello"].description_changed and not changes["hello"].parameters
    assert changes["hello"].description_diff() == [
        "-Say hello.",
        "+Say hello, warmly.",
        "+",
        "+In two lines.",
    ]
    assert changes["glob"].source_changed
    assert changes["glob"].as_dict()["source_before"] == {"kind": "builtin", "name": "opencode"}
    data = report.as_dict()
    assert data["event"] == "reload" and data["generation"] == 2
    assert [c["id"] for c in data["changed"]] == ["glob", "hello"]  # in the registry's order


def test_a_reload_during_a_hold_is_installed_when_the_hold_closes(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    project = make_project()
    seen: list[ChangeReport] = []
    watcher = project.watch(on_change=seen.append)
    with watcher.hold() as generation:
        write(hello, HELLO_LOUD)
        assert watcher.reload([hello]) is None
        assert watcher.pending and seen == []
        assert project.registry is generation.registry
        with watcher.hold():  # holds nest
            pass
        assert watcher.pending
    project.builder.wait()  # the report of the install the closing hold made comes from the builder's thread
    assert not watcher.pending and [r.generation for r in seen] == [2]
    assert project.registry is watcher.current.registry is not generation.registry
    assert "loud" in project.registry.get("hello").tool.load().schema()["properties"]


def test_an_unchanged_failure_is_reported_once(
    make_project: ProjectFactory, project_dir: Path, tool_dir: Path
) -> None:
    broken = write(tool_dir / "broken.py", BROKEN)
    project = make_project()
    watcher = project.watch()
    assert list(watcher.current.failures) == [str(broken)]
    (project_dir / "opencode.toml").write_text("[tool_output]\nmax_lines = 10\n")
    report = watcher.reload([project_dir / "opencode.toml"])
    assert report is not None and report.errors == [] and report.config
    report = watcher.reload([broken])  # saved again: said again
    assert report is not None and len(report.errors) == 1 and "broken.py:5: SyntaxError" in report.errors[0]


def test_entry_point_plugins_are_kept_not_reloaded_and_the_notice_says_so(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    calls: list[int] = []
    plugin = types.SimpleNamespace()

    @hookimpl
    def register_tools(register: Any) -> None:
        calls.append(1)
        register(shout)

    plugin.register_tools = register_tools
    hello = write(tool_dir / "hello.py", HELLO)
    project = make_project(plugins=[("demo", plugin)])
    watcher = project.watch()
    assert "entry-point plugins are not reloaded: demo" in watcher.notice
    write(hello, HELLO_LOUD)
    report = watcher.reload([hello])
    assert report is not None and "shout" in project.registry.entries
    assert [c.id for c in report.changed] == ["hello"]
    assert project.plugins.record_for("demo") is not None
    assert len(calls) == 1  # a reload rebuilds the saved file's source only, not the plugin's


def test_the_model_decides_what_reports_compare(make_project: ProjectFactory, tool_dir: Path) -> None:
    project = make_project()
    gpt = project.watch(model="gpt-5")
    assert "apply_patch" in gpt.current.tools and "edit" not in gpt.current.tools
    assert str(gpt.model) == "openai/gpt-5"
    claude = make_project().watch(model="anthropic/claude-sonnet-4-5")
    assert "edit" in claude.current.tools and "apply_patch" not in claude.current.tools


def test_the_watch_plan_filters_events(
    make_project: ProjectFactory, project_dir: Path, tool_dir: Path
) -> None:
    plan = watch_plan(make_project())
    assert str(tool_dir) in plan.roots and str(project_dir) in plan.roots
    assert plan.relevant(None, str(tool_dir / "new.py"))
    assert plan.relevant(None, str(project_dir / "opencode.toml"))
    assert plan.relevant(None, str(project_dir / ".opencode" / "opencode.toml"))
    assert plan.relevant(None, str(project_dir / ".opencode" / "tools"))
    assert not plan.relevant(None, str(tool_dir / "notes.txt"))
    assert not plan.relevant(None, str(tool_dir / ".#hello.py"))
    assert not plan.relevant(None, str(tool_dir / "__pycache__"))
    assert not plan.relevant(None, str(project_dir / "README.md"))
    assert not plan.relevant(None, str(project_dir / "src"))


def test_a_broken_config_at_start_is_an_error(make_project: ProjectFactory, project_dir: Path) -> None:
    from opencode_cli.errors import ConfigError

    (project_dir / "opencode.toml").write_text("[oops\n")
    watcher = make_project().watch()
    with pytest.raises(ConfigError, match="invalid TOML"):
        run(watcher.start())


def test_iteration_ends_when_the_watcher_is_closed(make_project: ProjectFactory, tool_dir: Path) -> None:
    project = make_project()

    async def main() -> list[ChangeReport]:
        watcher = project.watch()
        got = []
        asyncio.get_running_loop().call_later(0.2, watcher.close)
        async for report in watcher:
            got.append(report)
        await watcher.stop()
        return got

    assert run(main()) == []


def test_two_reloads_during_a_hold_are_reported_once_with_both_files(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    other = write(tool_dir / "other.py", HELLO.replace("Say hello.", "Say other."))
    project = make_project()
    seen: list[ChangeReport] = []
    watcher = project.watch(on_change=seen.append)
    with watcher.hold():
        write(hello, HELLO_LOUD)
        assert watcher.reload([hello]) is None
        write(other, HELLO.replace("Say hello.", "Say something else."))
        assert watcher.reload([other]) is None
    project.builder.wait()  # the install the closing hold made is told on the builder's thread
    [report] = seen
    assert report.generation == 2 and report.files == sorted([str(hello), str(other)])
    assert sorted(change.id for change in report.changed) == ["hello", "other"]


def test_a_broken_file_fixed_loads_again_and_one_deleted_is_gone(
    make_project: ProjectFactory, tool_dir: Path
) -> None:
    fixed = write(tool_dir / "fixed.py", BROKEN)
    deleted = write(tool_dir / "deleted.py", BROKEN)
    watcher = make_project().watch()
    assert set(watcher.current.failures) == {str(fixed), str(deleted)}
    write(fixed, HELLO)
    deleted.unlink()
    report = watcher.reload([fixed, deleted])
    assert report is not None and report.resolved == [str(fixed)] and report.gone == [str(deleted)]
    assert report.as_dict()["gone"] == [str(deleted)]
