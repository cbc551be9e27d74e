"""The built-ins are ordinary named plugins (issue 37): listed by name, loaded through the same function as
an installed plugin, and switched off by name in config (``[plugins] disabled``) or by the host
(``Project(disabled_plugins=...)``, which ``opencode -p no:NAME`` uses: tests/cli/test_disable_plugins.py).
Disabling one removes exactly its tools and its hooks; the rest works."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import __version__, hookimpl, tool
from opencode_cli.builtin import ESSENTIAL, PLUGINS, TOOL_ORDER
from opencode_cli.entrypoints import EntryPoint
from opencode_cli.errors import UnknownToolError
from opencode_cli.models.chat import open_model
from opencode_cli.models.errors import ModelError
from opencode_cli.plugins import Plugins
from opencode_cli.project import Project

NAMES = [entry.name for entry in PLUGINS]
SWITCHABLE = [name for name in NAMES if name not in ESSENTIAL]


@pytest.fixture
def projects(project_dir: Path, env: dict[str, str], warnings: list[str]) -> Iterator[Any]:
    """``projects(disabled_plugins=..., plugins=...)``: a project of ``project_dir``, closed at the end."""
    made: list[Project] = []

    def factory(**options: Any) -> Project:
        project = Project(project_dir, env=env, autoload_plugins=False, warn=warnings.append, **options)
        made.append(project)
        return project

    yield factory
    for project in made:
        project.close()


def builtin_tools(project: Project) -> dict[str, list[str]]:
    """The tools each built-in plugin registered (in the project's registry)."""
    project.registry  # noqa: B018 - the records list the tools registered while it is built
    return {r.name: list(r.tools) for r in project.plugins.records if r.kind == "builtin"}


def test_the_builtins_are_named_plugins_with_the_package_version(projects: Any) -> None:
    records = [r for r in projects().generation.plugin_records() if r.kind == "builtin"]
    assert [r.name for r in records] == [
        "core",
        "files",
        "shell",
        "web",
        "agents",
        "codemode",
        "lsp",
        "providers",
        "llm",
        "langchain",
        "pydantic_ai",
        "telemetry",
    ]
    assert {(r.version, r.status) for r in records} == {(__version__, "loaded")}
    assert [r.location for r in records] == [entry.value for entry in PLUGINS]
    assert all(r.location.startswith("opencode_cli.builtin.") for r in records)


def test_each_builtin_tool_comes_from_one_plugin_and_they_keep_opencodes_order(projects: Any) -> None:
    project = projects()
    owners = builtin_tools(project)
    everything = sorted(tool_id for tools in owners.values() for tool_id in tools)
    assert everything == sorted(TOOL_ORDER)
    assert list(project.registry.entries) == list(TOOL_ORDER)
    assert owners["shell"] == ["bash"] and owners["web"] == ["webfetch", "websearch"]
    assert owners["providers"] == [] and project.plugins.implementers("register_providers") == ["providers"]


@pytest.mark.parametrize("name", SWITCHABLE)
@pytest.mark.parametrize("form", ["config", "host"])
def test_disabling_a_builtin_removes_exactly_its_tools(
    name: str, form: str, projects: Any, project_dir: Path, write_file: Any
) -> None:
    whole = projects()
    owned = builtin_tools(whole)[name]
    expected = [tool_id for tool_id in whole.registry.entries if tool_id not in owned]
    if form == "config":
        write_file(project_dir / "opencode.toml", f'[plugins]\ndisabled = ["{name}"]\n')
        project = projects()
        how = "[plugins] disabled in config"
    else:
        project = projects(disabled_plugins={name: f"-p no:{name} on the command line"})
        how = f"-p no:{name} on the command line"
    assert list(project.registry.entries) == expected
    record = project.plugins.record_for(name) or next(r for r in project.plugins.records if r.name == name)
    assert (record.status, record.error, record.hooks) == ("blocked", f"disabled by {how}", [])
    assert name not in project.plugins.implementers("register_tools")


def test_a_disabled_builtins_tool_called_by_name_says_why(projects: Any, env: dict[str, str]) -> None:
    env["XDG_CACHE_HOME"] = str(Path(env["HOME"]) / "cache")  # where the tools of each plugin are remembered
    assert projects().registry.get("bash")
    project = projects(disabled_plugins={"shell": "-p no:shell on the command line"})
    with pytest.raises(UnknownToolError) as caught:
        project.registry.get("bash")
    assert str(caught.value) == (
        "No tool named 'bash'. It comes from plugin 'shell', which is disabled by -p no:shell on the "
        "command line."
    )


def test_the_rest_still_runs_with_a_builtin_disabled(projects: Any, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    project = projects(disabled_plugins=["shell", "web", "agents"])
    assert "two" in project.run_tool("read", {"filePath": "notes.txt"}).output
    assert [d.id for d in project.tools()] == ["read", "glob", "grep", "edit", "write", "apply_patch"]


def test_disabling_the_providers_plugin_removes_its_hook(
    projects: Any, project_dir: Path, write_file: Any
) -> None:
    write_file(project_dir / "opencode.toml", '[plugins]\ndisabled = ["providers"]\n')
    project = projects()
    assert project.plugins.implementers("register_providers") == []
    with pytest.raises(ModelError, match=r"unknown provider 'openai' \(providers: none\)"):
        asyncio.run(open_model(project, "openai/gpt-5"))


def test_core_cannot_be_disabled(projects: Any, warnings: list[str], project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("hello\n")
    project = projects(disabled_plugins=["core"])
    assert project.plugins.record_for("core").status == "loaded"
    assert "hello" in project.run_tool("read", {"filePath": "a.txt"}).output  # through core's tool_execute
    assert any("plugin core cannot be disabled" in w for w in warnings)


class Counter:
    """An installed plugin's stand-in: one tool and a hook that counts the calls it sees."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout)

    @hookimpl
    def tool_execute_before(self, tool: str) -> None:
        self.seen.append(tool)


@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


@pytest.mark.parametrize("form", ["config", "host"])
def test_disabling_an_installed_plugin_removes_its_hooks_too(
    form: str, projects: Any, project_dir: Path, write_file: Any
) -> None:
    (project_dir / "a.txt").write_text("hello\n")
    counter = Counter()
    on = projects(plugins=[("counter", counter)])
    assert on.run_tool("shout", {"text": "hi"}).output == "HI" and counter.seen == ["shout"]
    if form == "config":
        write_file(project_dir / "opencode.toml", '[plugins]\ndisabled = ["counter"]\n')
        off = projects(plugins=[("counter", counter)])
    else:
        off = projects(plugins=[("counter", counter)], disabled_plugins=["counter"])
    assert "hello" in off.run_tool("read", {"filePath": "a.txt"}).output
    assert counter.seen == ["shout"]  # its tool_execute_before no longer runs
    assert "shout" not in off.registry.entries


def test_builtins_and_installed_plugins_load_through_one_function(tmp_path: Path) -> None:
    """A built-in is an entry point like any other: a second plugin of a taken name is refused, an entry
    point that fails to import is failed, and a disabled one is never imported."""
    warnings: list[str] = []
    plugins = Plugins(
        autoload=False,
        builtin=[*PLUGINS, EntryPoint("web", "opencode_cli.builtin.web", "someone-else", "9.9")],
        warn=warnings.append,
        disabled=["never"],
    )
    duplicate = plugins.records[-1]
    assert (duplicate.name, duplicate.version, duplicate.status) == ("web", "9.9", "failed")
    assert plugins.record_for("web").version == __version__
    broken = plugins.load(EntryPoint("broken", "no_such_module_anywhere:plugin"))
    assert broken.status == "failed" and "ModuleNotFoundError" in (broken.error or "")
    blocked = plugins.load(EntryPoint("never", "no_such_module_either"))
    assert blocked.status == "blocked"
    assert len(warnings) == 2
