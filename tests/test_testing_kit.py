"""``opencode_cli.testing``, the pytest plugin for plugin authors: run as they would run it (pytester), and
used directly."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib.metadata import distributions
from pathlib import Path

import pytest

from opencode_cli import CorrectedError, DeniedError, RejectedError, hookimpl, tool
from opencode_cli.testing import Decision, PermissionReplies, Progress, TempProject, ToolRunner

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


def kit_installed() -> bool:
    """Whether pytest finds the ``pytest11`` entry point (``pip install -e .`` puts it in the metadata).

    Every distribution is looked at, as pytest does: a stale ``opencode_cli.egg-info`` in the checkout
    may hide the installed metadata from :func:`importlib.metadata.entry_points`.
    """
    return any(
        ep.group == "pytest11" and ep.value == "opencode_cli.testing"
        for dist in distributions()
        for ep in dist.entry_points
    )


def kit_args() -> list[str]:
    # a checkout whose metadata predates the entry point still runs these tests
    return [] if kit_installed() else ["-p", "opencode_cli.testing"]


WEATHER_PLUGIN = '''
from opencode_cli import ToolContext, hookimpl, tool


@tool
async def weather(city: str, ctx: ToolContext) -> str:
    """Current weather for a city."""
    ctx.metadata(title=f"looking up {city}")
    await ctx.ask("weather", [city], always=["*"])
    return f"{city}: sunny"


@hookimpl
def register_tools(register):
    register(weather)


@hookimpl
def tool_execute_before(tool, args):
    if tool == "weather" and args.get("city") == "Atlantis":
        raise ValueError("Atlantis has no weather service")


@hookimpl
def tool_definition(tool_id, output):
    if tool_id == "weather":
        output.description += " Cities only."
'''

AUTHOR_CONFTEST = """
import pytest

import weather_plugin


@pytest.fixture
def opencode_plugins():
    return [weather_plugin]
"""

AUTHOR_TESTS = """
import pytest

from opencode_cli import CorrectedError
from opencode_cli.testing import Decision


def test_runs(run_tool):
    result = run_tool("weather", city="Oslo")
    assert result.output == "Oslo: sunny"
    assert [p.title for p in run_tool.progress] == ["looking up Oslo"]


def test_described(run_tool):
    assert run_tool.definition("weather").description == "Current weather for a city. Cities only."


def test_blocked(run_tool):
    with pytest.raises(ValueError, match="no weather service"):
        run_tool("weather", city="Atlantis")
    assert run_tool.dispatch("weather", {"city": "Atlantis"}).text == "Atlantis has no weather service"


def test_asks(run_tool, permission_replies, opencode_tmp_project):
    run_tool.rule("weather")  # make the plugin's permission ask
    permission_replies.extend(["once", Decision("reject", "try Bergen")])
    assert run_tool("weather", city="Oslo").output == "Oslo: sunny"
    with pytest.raises(CorrectedError, match="try Bergen"):
        run_tool("weather", city="Paris")
    assert [r.patterns for r in permission_replies.requests] == [["Oslo"], ["Paris"]]


def test_config_and_isolation(make_opencode_project, opencode_tmp_project, permission_replies):
    import os

    opencode_tmp_project.config('[permission]\\nweather = "ask"\\n')
    assert os.environ["HOME"] == str(opencode_tmp_project.home)
    assert not [key for key in os.environ if key.startswith("OPENCODE_")]
    from opencode_cli.testing import ToolRunner

    import weather_plugin

    runner = ToolRunner(make_opencode_project(weather_plugin), permission_replies)
    permission_replies.update({"weather": "always"})
    assert runner("weather", city="Oslo").output == "Oslo: sunny"
    assert permission_replies.permissions == ["weather"]


def test_the_author_made_a_mistake(run_tool):
    assert run_tool("weather", city="Oslo").output == "Oslo: rainy"
"""


@pytest.fixture
def author_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A plugin author's project: the plugin module, a conftest naming it, and their tests."""
    pytester.makepyfile(weather_plugin=WEATHER_PLUGIN, conftest=AUTHOR_CONFTEST, test_weather=AUTHOR_TESTS)
    return pytester


def test_a_plugin_authors_suite_runs_with_the_fixtures(author_suite: pytest.Pytester) -> None:
    result = author_suite.runpytest(*kit_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*assert 'Oslo: sunny' == 'Oslo: rainy'*"])


def test_the_environment_is_isolated_even_from_opencode_variables(
    author_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", '{"permission": {"weather": "deny"}}')
    monkeypatch.setenv("OPENCODE_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = author_suite.runpytest(*kit_args(), "-p", "no:cacheprovider", "-k", "not mistake")
    result.assert_outcomes(passed=5)


@pytest.mark.skipif(not kit_installed(), reason="the pytest11 entry point is not in the installed metadata")
def test_the_plugin_is_loaded_by_entry_point_and_can_be_turned_off(author_suite: pytest.Pytester) -> None:
    result = author_suite.runpytest("-p", "no:opencode", "-p", "no:cacheprovider", "-k", "runs")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'run_tool' not found*"])


def test_pyproject_declares_the_pytest11_entry_point() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"opencode": "opencode_cli.testing"}


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, pytest; before = set(sys.modules); import opencode_cli.testing; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["opencode_cli", "opencode_cli.testing"]


# -- direct use -------------------------------------------------------------------------------------------


def test_temp_project_isolates_home_and_writes_files(
    opencode_tmp_project: TempProject, tmp_path: Path
) -> None:
    assert opencode_tmp_project.directory.is_relative_to(tmp_path)
    assert (opencode_tmp_project.directory / ".git").is_dir()
    assert os.environ["HOME"] == str(opencode_tmp_project.home)
    assert opencode_tmp_project.data_dir == Path(os.environ["XDG_DATA_HOME"]) / "opencode"
    path = opencode_tmp_project.tool_file("hello", '\n    """Doc."""\n    X = 1\n')
    assert path == opencode_tmp_project.directory / ".opencode" / "tool" / "hello.py"
    assert path.read_text() == '"""Doc."""\nX = 1\n'


def test_tool_files_of_the_temp_project_are_loaded(
    opencode_tmp_project: TempProject, run_tool: ToolRunner
) -> None:
    opencode_tmp_project.tool_file(
        "greet",
        """
        from opencode_cli import tool


        @tool
        def default(name: str) -> str:
            "Greet someone."
            return f"hello {name}"
        """,
    )
    assert run_tool("greet", name="Ada").output == "hello Ada"


def test_make_opencode_project_names_and_registers_plugins(make_opencode_project, opencode_warnings) -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    class Pinger:
        @hookimpl
        def register_tools(self, register):
            register(ping)

    class Unknown:
        @hookimpl
        def not_a_hook(self):
            pass

    project = make_opencode_project(Pinger(), Pinger(), ("odd", Unknown()))
    project.registry.entries  # noqa: B018 - building the registry runs register_tools
    names = [record.name for record in project.generation.plugin_records() if record.kind == "entrypoint"]
    assert names == ["Pinger", "Pinger-2", "odd"]
    assert project.plugins.record_for("Pinger").tools == ["ping"]
    assert [r.status for r in project.generation.plugin_records() if r.name == "odd"] == ["failed"]
    assert any("plugin odd failed to load" in warning for warning in opencode_warnings)


def test_builtins_run_and_progress_is_recorded(
    opencode_tmp_project: TempProject, run_tool: ToolRunner
) -> None:
    opencode_tmp_project.write("a.txt", "alpha\nbeta\n")
    result = run_tool("read", filePath="a.txt")
    assert "1: alpha" in result.output
    run_tool("bash", command="echo one; echo two")
    assert run_tool.progress and all(isinstance(report, Progress) for report in run_tool.progress)


def test_permission_replies_are_consumed_in_order_and_recorded(
    opencode_tmp_project: TempProject, run_tool: ToolRunner, permission_replies: PermissionReplies
) -> None:
    opencode_tmp_project.write(".env", "TOKEN=1\n")
    permission_replies.extend(["once", ("reject", "read .env.example instead"), "reject"])
    assert "TOKEN=1" in run_tool("read", filePath=".env").output
    with pytest.raises(CorrectedError, match=r"read \.env\.example instead"):
        run_tool("read", filePath=".env")
    with pytest.raises(RejectedError):
        run_tool("read", filePath=".env")
    with pytest.raises(RejectedError):  # nothing left: the default answer
        run_tool("read", filePath=".env")
    assert permission_replies.permissions == ["read"] * 4
    assert [decision.reply for _, decision in permission_replies.answers] == [
        "once",
        "reject",
        "reject",
        "reject",
    ]
    assert permission_replies.remaining == 0


def test_always_carries_over_within_the_runner_session(
    opencode_tmp_project: TempProject, run_tool: ToolRunner, permission_replies: PermissionReplies
) -> None:
    opencode_tmp_project.write(".env", "TOKEN=1\n")
    permission_replies.append(Decision("always"))
    run_tool("read", filePath=".env")
    run_tool("read", filePath=".env")
    assert len(permission_replies.requests) == 1


def test_standing_replies_and_rules(run_tool: ToolRunner, permission_replies: PermissionReplies) -> None:
    permission_replies.update({"bash": "reject"}).append("once")
    run_tool.rule("bash", "ask")
    with pytest.raises(RejectedError):
        run_tool("bash", command="echo hi")
    assert permission_replies.remaining == 1  # a standing answer does not use up the queue
    run_tool.rule("bash", "deny")
    with pytest.raises(DeniedError, match="prevents you from using this specific tool call"):
        run_tool("bash", command="echo hi")
    # denied wholly, the tool is not even offered: a model's call to it is rerouted to invalid
    assert run_tool.dispatch("bash", {"command": "echo hi"}).tool == "invalid"
    with pytest.raises(ValueError, match="allow, ask or deny"):
        run_tool.rule("bash", "maybe")


def test_bad_scripted_replies_are_refused(permission_replies: PermissionReplies) -> None:
    with pytest.raises(ValueError, match="'once', 'always' or 'reject'"):
        permission_replies.append("yes")
    with pytest.raises(TypeError):
        permission_replies.append(42)


async def _in_a_loop(runner: ToolRunner) -> tuple[str, str]:
    awaited = await runner.acall("glob", pattern="*")
    return awaited.title, runner("glob", pattern="*").title  # the sync form works inside a loop too


def test_run_tool_from_async_code(run_tool: ToolRunner) -> None:
    import asyncio

    first, second = asyncio.run(_in_a_loop(run_tool))
    assert first == second
