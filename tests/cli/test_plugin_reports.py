"""What a plugin or tool file gets told (issue 18, item 7): a tool of a disabled plugin, called by name, says
which plugin and which config key; a hook implementation pluggy refuses is reported at the plugin's own
file and line with a one-line reason; a tool with no description or an untyped parameter is warned about
at load, naming the file and line, in the warnings and in ``opencode plugins list``."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import hookimpl, tool
from opencode_cli.errors import UnknownToolError


@tool
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"{city}: rain"


class WeatherPlugin:
    """A well-formed plugin: one tool."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(forecast)


class ExtraArgument:
    @hookimpl
    def register_tools(self, register: Any, colour: str) -> None:
        raise AssertionError("never called")


class MisspeltHook:
    @hookimpl
    def tool_definiton(self, tool_id: str) -> None:
        raise AssertionError("never called")


class AsyncWrapper:
    @hookimpl(wrapper=True)
    async def tool_definition(self, tool_id: str) -> None:
        raise AssertionError("never called")


def line_of(function: Any) -> int:
    """The line a (decorated) method starts on, as Python reports it."""
    return inspect.unwrap(function).__code__.co_firstlineno


# -- a disabled plugin's tool ----------------------------------------------------------------------------


def test_a_disabled_plugins_tool_names_the_plugin_and_the_key(
    make_project: Any, project_dir: Path, write_file: Any
) -> None:
    assert make_project(plugins=[("weather", WeatherPlugin())]).registry.get("forecast")  # seen once
    write_file(project_dir / "opencode.toml", '[plugins]\ndisabled = ["weather"]\n')
    project = make_project(plugins=[("weather", WeatherPlugin())])
    with pytest.raises(UnknownToolError) as caught:
        project.registry.get("forecast")
    assert str(caught.value) == (
        "No tool named 'forecast'. It comes from plugin 'weather', which is disabled by [plugins] disabled "
        "in config."
    )


def test_a_plugin_never_seen_is_still_named_as_a_possible_source(
    make_project: Any, project_dir: Path, write_file: Any
) -> None:
    write_file(project_dir / "opencode.toml", '[plugins]\ndisabled = ["weather"]\n')
    project = make_project(plugins=[("weather", WeatherPlugin())])
    with pytest.raises(UnknownToolError, match=r"disabled by \[plugins\] disabled in config.*: weather"):
        project.registry.get("forecast")


def test_without_a_disabled_plugin_the_error_is_the_plain_one(make_project: Any) -> None:
    with pytest.raises(UnknownToolError) as caught:
        make_project().registry.get("raed")
    assert str(caught.value) == "No tool named 'raed'. Did you mean: read?"


# -- hook validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin", "method", "reason"),
    [
        (
            ExtraArgument,
            "register_tools",
            "register_tools() takes colour, which the hook does not pass "
            "(it passes register, flags, project)",
        ),
        (MisspeltHook, "tool_definiton", "tool_definiton is not a hook of opencode-tools. Did you mean: "),
        (AsyncWrapper, "tool_definition", "tool_definition: "),
    ],
)
def test_a_refused_hook_is_reported_at_the_plugins_own_line(
    make_project: Any, warnings: Any, plugin: type, method: str, reason: str
) -> None:
    project = make_project(plugins=[("bad", plugin())])
    record = project.plugins.record_for("bad") or next(r for r in project.plugins.records if r.name == "bad")
    assert record.status == "failed"
    where = f"{__file__}:{line_of(getattr(plugin, method))}: "
    assert record.error is not None and record.error.startswith(where + reason)
    assert "\n" not in record.error and "pluggy" not in record.error
    assert warnings == [f"plugin bad failed to load: {record.error}"]
    assert project.registry.get("read")  # everything else still works


def test_a_tool_file_whose_tool_cannot_be_built_names_its_line(
    make_project: Any, project_dir: Path, write_file: Any, warnings: Any
) -> None:
    path = write_file(
        project_dir / ".opencode" / "tool" / "spread.py",
        """
        from opencode_cli import tool


        @tool
        def default(*names):
            "Join names."
            return ",".join(names)
        """,
    )
    project = make_project()
    record = next(r for r in project.generation.plugin_records() if r.kind == "file")
    assert record.status == "failed"
    assert record.error == (
        f"{path}:4: TypeError: tool 'default': *args and **kwargs parameters cannot be described to a model"
    )
    assert project.registry.get("read")


# -- a tool the model is told too little about -----------------------------------------------------------

VAGUE = """
from opencode_cli import tool


@tool
def default(city, days: int = 1):
    return f"{city}: sun for {days} days"
"""


def test_a_tool_file_without_description_or_types_is_warned_about(
    make_project: Any, project_dir: Path, write_file: Any, warnings: Any
) -> None:
    path = write_file(project_dir / ".opencode" / "tool" / "vague.py", VAGUE)
    project = make_project()
    assert project.registry.get("vague")  # it still loads
    assert f"{path}:4: tool 'vague' has no description" in warnings.text()
    assert f"{path}:4: tool 'vague': parameter 'city' has no type" in warnings.text()
    assert "'days'" not in warnings.text()
    record = next(r for r in project.generation.plugin_records() if r.kind == "file")
    assert record.status == "loaded" and len(record.warnings) == 2


def test_a_plugin_tool_without_types_is_warned_about(make_project: Any, warnings: Any) -> None:
    def untyped(city):  # type: ignore[no-untyped-def]
        """Weather."""
        return city

    class Plugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(tool(untyped))

    project = make_project(plugins=[("loose", Plugin())])
    assert project.registry.get("untyped")  # it still loads
    record = project.plugins.record_for("loose")
    assert record is not None and record.status == "loaded"
    assert record.warnings == [
        f"{__file__}:{line_of(untyped)}: tool 'untyped': parameter 'city' has no type, so the model may "
        "send anything (annotate it, e.g. city: str)"
    ]
    assert warnings == record.warnings


def test_a_described_and_typed_tool_gets_no_warning(
    make_project: Any, project_dir: Path, write_file: Any, warnings: Any
) -> None:
    write_file(
        project_dir / ".opencode" / "tool" / "clear.py",
        '''
        from opencode_cli import tool


        @tool
        def default(city: str, ctx) -> str:
            """The weather in a city."""
            return city
        ''',
    )
    make_project(plugins=[("weather", WeatherPlugin())]).registry.get("clear")
    assert list(warnings) == []


def test_plugins_list_shows_the_warnings(run_cli: Any, cli_env: dict[str, str]) -> None:
    path = Path(cli_env["project"]) / ".opencode" / "tool" / "vague.py"
    path.parent.mkdir(parents=True)
    path.write_text(VAGUE.lstrip("\n"))
    result = run_cli("plugins", "list")
    assert result.exit_code == 0, result.output
    assert f"    warning: {path}:4: tool 'vague' has no description" in result.stdout
    as_json = json.loads(run_cli("plugins", "list", "--json").stdout)
    (record,) = [p for p in as_json["plugins"] if p["kind"] == "file"]
    assert len(record["warnings"]) == 2


UNDESCRIBABLE = """
from opencode_cli import tool


class Thing:
    pass


@tool
def default(thing: Thing) -> str:
    "Take a thing."
    return "taken"
"""


def test_a_tool_whose_parameters_have_no_schema_fails_alone(run_cli: Any, cli_env: dict[str, str]) -> None:
    """Its model is made on first use: a listing shows it, and whatever needs its schema hides it as
    failed, with a warning, and goes on with the others."""
    path = Path(cli_env["project"]) / ".opencode" / "tool" / "thing.py"
    path.parent.mkdir(parents=True)
    path.write_text(UNDESCRIBABLE.lstrip("\n"))

    listed = run_cli("tools", "list")
    assert listed.exit_code == 0, listed.output
    assert "thing" in listed.stdout.split()

    schemas = run_cli("tools", "schema", "--model", "gpt-5")
    assert schemas.exit_code == 0, schemas.output
    names = [entry.get("name") or entry["function"]["name"] for entry in json.loads(schemas.stdout)]
    assert "read" in names and "thing" not in names
    assert "warning: tool thing (file " in schemas.stderr and "failed to load" in schemas.stderr

    hidden = json.loads(run_cli("tools", "list", "--all", "--json").stdout)["hidden"]
    assert "thing" not in [h["id"] for h in hidden]  # a listing never made the schema


# -- the same through a real entry-point plugin and the real command -------------------------------------

WEATHER = '''
from opencode_cli import hookimpl, tool


@tool
def weather_now(city: str) -> str:
    """The weather in a city right now."""
    return f"{city}: sunny"


@hookimpl
def register_tools(register):
    register(weather_now)
'''

BROKEN = """
from opencode_cli import hookimpl


@hookimpl
def register_tools(register, colour):
    pass
"""


def install(site: Path, name: str, module: str, text: str) -> Path:
    """A real distribution with an ``opencode`` entry point, as pip would leave it in ``site``."""
    info = site / f"opencode_{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: opencode-{name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[opencode]\n{name} = {module}\n")
    path = site / f"{module}.py"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_real_plugin_disabled_and_a_broken_one(cli_env: dict[str, str], tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, "weather", "opencode_weather", WEATHER)
    broken = install(site, "broken", "opencode_broken", BROKEN)
    env = {k: v for k, v in cli_env.items() if k not in ("project", "OPENCODE_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = env["OPENCODE_PLUGIN_PATH"] = str(site)
    script = Path(sys.executable).parent / "opencode"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], cwd=cli_env["project"], env=env, capture_output=True, text=True, timeout=60
        )

    used = run("tools", "run", "weather_now", "city=Oslo")
    assert used.returncode == 0, used.stderr
    assert used.stdout == "Oslo: sunny\n"
    assert f"plugin broken failed to load: {broken}:5: register_tools() takes colour" in used.stderr
    assert "Traceback" not in used.stderr and "pluggy" not in used.stderr

    (Path(cli_env["project"]) / "opencode.toml").write_text('[plugins]\ndisabled = ["weather", "broken"]\n')
    refused = run("tools", "run", "weather_now", "city=Oslo")
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: No tool named 'weather_now'. It comes from plugin 'weather', which is disabled by "
        "[plugins] disabled in config.\n"
    )
