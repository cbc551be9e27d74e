"""Issue 42 item 3: ``[plugins] disabled`` edited in a running project is honoured by the next generation,
as a fresh process would honour it: the plugin's tools are not offered and its hooks are not called."""

from __future__ import annotations

from pathlib import Path

from opencode_cli import Project, hookimpl, tool


class Shouting:
    """A plugin with a tool and an ``async def tool_definition`` hook that changes every description."""

    @hookimpl
    def register_tools(self, register) -> None:
        register(tool(lambda: "HEY", id="shout", description="Shout."))

    @hookimpl
    async def tool_definition(self, tool_id, model, output) -> None:
        output.description = output.description.upper()


def _offer(project: Project) -> dict[str, str]:
    return {d.id: d.description for d in project.generation.offer("openai/gpt-4.1").tools}


def _fresh(project_dir: Path, env: dict[str, str]) -> dict[str, str]:
    with Project(project_dir, env=env, plugins=[("shouting", Shouting())], autoload_plugins=False) as fresh:
        return _offer(fresh)


def test_disabling_and_enabling_a_plugin_by_config_follows_each_reload(make_project, project_dir, env):
    config = project_dir / "opencode.toml"
    config.write_text('[plugins]\ndisabled = ["shouting"]\n')
    project = make_project(plugins=[("shouting", Shouting())])
    assert "shout" not in _offer(project)  # disabled from the start: never registered

    steps = ["[plugins]\ndisabled = []\n", '[plugins]\ndisabled = ["shouting"]\n', ""]
    for text in steps:
        config.write_text(text)
        project.builder.request(files=[config])
        offer = _offer(project)
        assert offer == _fresh(project_dir, env), text
        on = "shouting" not in text
        assert ("shout" in offer) is on
        assert (offer["read"] == offer["read"].upper()) is on  # its hook is called only while enabled
        [record] = [r for r in project.plugins.records if r.name == "shouting"]
        assert record.status == ("loaded" if on else "blocked")


def test_a_plugin_disabled_by_a_reload_is_recorded_as_a_fresh_process_records_it(
    make_project, project_dir, env
):
    config = project_dir / "opencode.toml"
    project = make_project(plugins=[("shouting", Shouting())])
    project.registry  # noqa: B018
    config.write_text('[plugins]\ndisabled = ["shouting", "web"]\n')
    project.builder.request(files=[config])
    with Project(project_dir, env=env, plugins=[("shouting", Shouting())], autoload_plugins=False) as fresh:
        expected = [record.as_dict() for record in fresh.generation.plugin_records()]
    assert [record.as_dict() for record in project.generation.plugin_records()] == expected


class Marking:
    """A plugin whose ``tool_definition`` appends its mark to every description (the order shows)."""

    def __init__(self, mark: str) -> None:
        self.mark = mark

    @hookimpl
    def tool_definition(self, tool_id, model, output) -> None:
        output.description += f" [{self.mark}]"


def test_a_plugin_enabled_again_takes_its_place_in_the_call_order(make_project, project_dir, env):
    """Pluggy calls the last registered first: a plugin disabled and enabled again by reloads is called
    where a fresh process would call it, not first."""

    def plugins() -> list[tuple[str, object]]:
        return [("first", Marking("1")), ("second", Marking("2")), ("third", Marking("3"))]

    def order(project: Project) -> tuple[list[str], str]:
        return project.plugins.order("tool_definition"), _offer(project)["read"][-12:]

    config = project_dir / "opencode.toml"
    project = make_project(plugins=plugins())
    project.registry  # noqa: B018
    with Project(project_dir, env=env, plugins=plugins(), autoload_plugins=False) as fresh:
        expected = order(fresh)
    assert expected[1].endswith("[3] [2] [1]")
    for text in ('[plugins]\ndisabled = ["first"]\n', "", '[plugins]\ndisabled = ["second"]\n', ""):
        config.write_text(text)
        project.builder.request(files=[config])
        with Project(project_dir, env=env, plugins=plugins(), autoload_plugins=False) as fresh:
            assert order(project) == order(fresh), text
    assert order(project) == expected
