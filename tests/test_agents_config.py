"""``[agent.NAME]`` config keys: model, prompt, steps (and ``maxSteps``), temperature, top_p, color,
disable and the ``options`` catch-all, on real ``opencode.toml`` files and through ``agents list``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from opencode_cli.cli.app import app
from opencode_cli.errors import ConfigError
from opencode_cli.modelref import ModelRef

BUILTINS = ["build", "plan", "general", "explore"]
NEW_KEYS = ["model", "prompt", "steps", "temperature", "top_p", "color", "options"]


@pytest.fixture
def config(project_dir: Path, write_file) -> Callable[[str], Path]:
    """Write the project's ``opencode.toml``."""
    return lambda text: write_file(project_dir / "opencode.toml", text)


# -- parsing ---------------------------------------------------------------------------------------------


def test_every_key_parses(make_project, config) -> None:
    config(
        """
        [agent.review]
        mode = "subagent"
        description = "Reviews diffs"
        model = "anthropic/claude-sonnet-4-5"
        prompt = "You review code.\\nBe terse."
        steps = 8
        temperature = 0.2
        top_p = 0.9
        color = "#ff8800"
        hidden = true
        """
    )
    review = make_project().generation.agent("review")

    assert review.model == ModelRef("anthropic", "claude-sonnet-4-5")
    assert review.prompt == "You review code.\nBe terse."
    assert (review.steps, review.temperature, review.top_p) == (8, 0.2, 0.9)
    assert (review.mode, review.description, review.color) == ("subagent", "Reviews diffs", "#ff8800")
    assert review.hidden is True and review.builtin is False
    assert review.options == {}


def test_builtins_set_none_of_the_new_keys(make_project) -> None:
    for agent in make_project().generation.agents.values():
        assert [getattr(agent, key) for key in NEW_KEYS] == [None] * 6 + [{}], agent.name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai/gpt-5", ModelRef("openai", "gpt-5")),
        ("openrouter/meta/llama-3", ModelRef("openrouter", "meta/llama-3")),
        ("gpt-5", ModelRef("openai", "gpt-5")),  # a well-known bare id gets its provider
        ("my-local-model", ModelRef(None, "my-local-model")),
    ],
)
def test_model_goes_through_modelref(make_project, config, text, expected) -> None:
    config(f'[agent.review]\nmodel = "{text}"\n')
    assert make_project().generation.agent("review").model == expected


def test_integer_temperature_is_a_number(make_project, config) -> None:
    config("[agent.review]\ntemperature = 1\ntop_p = 0\n")
    review = make_project().generation.agent("review")
    assert (review.temperature, review.top_p) == (1, 0)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_finite_temperature_round_trips(make_project, config, value: float) -> None:
    config(f"[agent.review]\ntemperature = {value!r}\ntop_p = {value!r}\n")
    review = make_project().generation.agent("review")
    assert review.temperature == value and review.top_p == value
    assert json.loads(json.dumps(review.as_dict()))["temperature"] == value


# -- steps and maxSteps ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "steps"),
    [("maxSteps = 12", 12), ("steps = 3\nmaxSteps = 12", 3), ("maxSteps = 12\nsteps = 3", 3), ("", None)],
)
def test_max_steps_is_an_alias_and_steps_wins(make_project, config, lines, steps) -> None:
    config(f'[agent.review]\nmode = "subagent"\n{lines}\n')
    review = make_project().generation.agent("review")
    assert review.steps == steps
    assert "maxSteps" not in review.options


# -- type errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('temperature = "hot"', "agent.review.temperature must be a number, not 'hot'"),
        ("temperature = true", "agent.review.temperature must be a number, not True"),
        ("temperature = nan", "agent.review.temperature must be a number, not nan"),
        ('top_p = "high"', "agent.review.top_p must be a number, not 'high'"),
        ("steps = 0", "agent.review.steps must be an integer >= 1, not 0"),
        ("steps = -3", "agent.review.steps must be an integer >= 1, not -3"),
        ("steps = 2.5", "agent.review.steps must be an integer >= 1, not 2.5"),
        ("steps = true", "agent.review.steps must be an integer >= 1, not True"),
        ('maxSteps = "10"', "agent.review.maxSteps must be an integer >= 1, not '10'"),
        ("model = 5", 'agent.review.model must be a "provider/model" string, not 5'),
        ('model = ""', "agent.review.model must be a \"provider/model\" string, not ''"),
        ('prompt = ["be nice"]', "agent.review.prompt must be a string, not ['be nice']"),
        ("description = 7", "agent.review.description must be a string, not 7"),
        ("color = 0xff8800", "agent.review.color must be a string, not 16746496"),
        ('disable = "yes"', "agent.review.disable must be true or false, not 'yes'"),
        ('hidden = "false"', "agent.review.hidden must be true or false, not 'false'"),
        ("options = 3", "agent.review.options must be a table, not 3"),
        ('tools = "none"', "agent.review.tools must be a table, not 'none'"),
    ],
)
def test_wrong_types_name_the_key(make_project, config, line: str, message: str) -> None:
    config(f"[agent.review]\n{line}\n")
    with pytest.raises(ConfigError) as error:
        _ = make_project().generation.agents
    assert str(error.value) == message


def test_a_disabled_agent_is_still_checked(make_project, config) -> None:
    config("[agent.general]\ndisable = true\nsteps = 0\n")
    with pytest.raises(ConfigError, match=r"^agent\.general\.steps must be an integer >= 1, not 0$"):
        _ = make_project().generation.agents


# -- disable -----------------------------------------------------------------------------------------------


def test_disable_removes_a_builtin(make_project, config) -> None:
    config("[agent.general]\ndisable = true\n")
    project = make_project()
    assert list(project.generation.agents) == ["build", "plan", "explore"]
    with pytest.raises(ConfigError, match="no agent named 'general'"):
        project.generation.agent("general")


def test_disable_removes_a_configured_agent_and_false_keeps_it(make_project, config) -> None:
    config(
        """
        [agent.gone]
        mode = "subagent"
        disable = true

        [agent.kept]
        disable = false

        [agent.explore]
        disable = false
        """
    )
    assert list(make_project().generation.agents) == [*BUILTINS, "kept"]


# -- overriding a built-in ----------------------------------------------------------------------------------


def test_overriding_a_builtin_keeps_what_the_table_does_not_set(make_project, config) -> None:
    default = make_project().generation.agent("build")
    config('[agent.build]\nmodel = "openai/gpt-5"\n')
    build = make_project().generation.agent("build")

    assert build == replace(default, model=ModelRef("openai", "gpt-5"))  # description, rules... kept


def test_keys_from_several_files_merge(make_project, config, global_config_dir, write_file) -> None:
    write_file(global_config_dir / "opencode.toml", "[agent.plan]\ntemperature = 0.1\nsteps = 20\n")
    config('[agent.plan]\nmodel = "openai/gpt-5"\nsteps = 5\n')
    plan = make_project().generation.agent("plan")
    assert (str(plan.model), plan.temperature, plan.steps) == ("openai/gpt-5", 0.1, 5)


# -- options -------------------------------------------------------------------------------------------------


def test_unknown_keys_land_in_options(make_project, config, warnings) -> None:
    config(
        """
        [agent.review]
        reasoningEffort = "high"
        textVerbosity = "low"
        steps = 4

        [agent.review.options]
        reasoningEffort = "low"
        store = false

        [agent.review.thinking]
        budgetTokens = 8000
        """
    )
    review = make_project().generation.agent("review")

    # like OpenCode, a top-level key wins over the same key in [agent.NAME.options]
    assert review.options == {
        "reasoningEffort": "high",
        "store": False,
        "textVerbosity": "low",
        "thinking": {"budgetTokens": 8000},
    }
    assert review.steps == 4
    assert warnings == []


def test_options_on_a_builtin(make_project, config) -> None:
    config('[agent.explore]\nreasoningEffort = "minimal"\n')
    agents = make_project().generation.agents
    assert agents["explore"].options == {"reasoningEffort": "minimal"}
    assert agents["build"].options == {}


# -- agents list ---------------------------------------------------------------------------------------------


@pytest.fixture
def agents_list(
    project_dir: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., object]:
    """Run ``opencode agents list [ARGS]`` in-process from inside the project directory."""
    monkeypatch.chdir(project_dir)
    for key in list(os.environ):
        if key.startswith("OPENCODE_"):
            monkeypatch.delenv(key)

    def invoke(*args: str) -> object:
        return CliRunner().invoke(
            app, ["agents", "list", *args], env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
        )

    return invoke


REVIEW = """
[agent.general]
disable = true

[agent.review]
mode = "subagent"
description = "Reviews diffs"
model = "openai/gpt-5"
steps = 8
temperature = 0.2
"""


def test_agents_list_text_shows_the_set_keys(agents_list, config) -> None:
    before = agents_list().stdout.splitlines()
    config(REVIEW)
    result = agents_list()
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()

    assert [row.split()[0] for row in rows] == ["build", "plan", "explore", "review"]
    assert rows[:2] == before[:2] and rows[2] == before[3]  # agents without the new keys: unchanged
    assert rows[3].split(None, 2) == [
        "review",
        "subagent",
        "Reviews diffs  [model openai/gpt-5, steps 8, temperature 0.2]",
    ]


def test_agents_list_text_other_keys(agents_list, config) -> None:
    config(
        """
        [agent.ghost]
        hidden = true
        top_p = 0.5
        color = "accent"
        prompt = "abc"
        reasoningEffort = "low"
        store = false
        """
    )
    row = agents_list().stdout.splitlines()[-1]
    assert row.split(None, 2) == [
        "ghost",
        "all",
        "(hidden)  [top_p 0.5, color accent, prompt 3 chars, options reasoningEffort store]",
    ]


def test_agents_list_json_has_the_new_keys(agents_list, config) -> None:
    config(REVIEW + 'prompt = "Be terse."\nvariant = "high"\n')
    result = agents_list("--json")
    assert result.exit_code == 0, result.output
    agents = {agent["name"]: agent for agent in json.loads(result.stdout)["agents"]}

    assert list(agents) == ["build", "plan", "explore", "review"]
    old_keys = ["name", "mode", "description", "hidden", "builtin", "permission"]
    assert all(list(agent) == old_keys + NEW_KEYS for agent in agents.values())
    review = agents["review"]
    assert {key: review[key] for key in NEW_KEYS} == {
        "model": "openai/gpt-5",
        "prompt": "Be terse.",
        "steps": 8,
        "temperature": 0.2,
        "top_p": None,
        "color": None,
        "options": {"variant": "high"},
    }
    assert {key: agents["build"][key] for key in NEW_KEYS} == {
        **dict.fromkeys(NEW_KEYS[:-1]),
        "options": {},
    }


def test_agents_list_reports_a_type_error(agents_list, config) -> None:
    config('[agent.review]\ntemperature = "hot"\n')
    result = agents_list()
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: agent.review.temperature must be a number, not 'hot'"
    assert result.stdout == ""
