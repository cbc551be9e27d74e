"""``OPENCODE_*`` environment flags (core spec §3.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.errors import ConfigError
from opencode_cli.flags import Flags, parse_bool, parse_int

TRUE = ["true", "yes", "on", "1", "y"]
FALSE = ["false", "no", "off", "0", "n"]
EXPERIMENTAL_FIELDS = {
    "OPENCODE_EXPERIMENTAL_CODE_MODE": "experimental_code_mode",
    "OPENCODE_EXPERIMENTAL_LSP_TOOL": "experimental_lsp_tool",
    "OPENCODE_EXPERIMENTAL_PLAN_MODE": "experimental_plan_mode",
    "OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS": "experimental_background_subagents",
}


@pytest.mark.parametrize("value", TRUE)
def test_true_literals(value) -> None:
    assert parse_bool("OPENCODE_X", value) is True


@pytest.mark.parametrize("value", FALSE)
def test_false_literals(value) -> None:
    assert parse_bool("OPENCODE_X", value) is False


@pytest.mark.parametrize(
    "value", ["TRUE", "True", "Yes", "ON", "Y", "N", "2", "", " 1", "1 ", "enabled", "t"]
)
def test_anything_else_is_an_error_naming_the_variable(value) -> None:
    with pytest.raises(ConfigError) as info:
        parse_bool("OPENCODE_SOME_FLAG", value)
    assert "OPENCODE_SOME_FLAG" in str(info.value)
    assert repr(value) in str(info.value)


@given(st.text(max_size=10).filter(lambda v: v not in TRUE + FALSE))
def test_parse_bool_rejects_every_other_string(value) -> None:
    with pytest.raises(ConfigError, match="OPENCODE_P"):
        parse_bool("OPENCODE_P", value)


def test_defaults() -> None:
    flags = Flags.from_env({})

    assert flags == Flags()
    assert flags.client == "cli"
    assert flags.enable_question_tool is False
    assert flags.enable_exa is False
    assert flags.enable_parallel is False
    assert all(getattr(flags, field) is False for field in EXPERIMENTAL_FIELDS.values())
    assert flags.bash_default_timeout_ms is None
    assert flags.output_token_max is None


@pytest.mark.parametrize(("variable", "field"), EXPERIMENTAL_FIELDS.items())
def test_experimental_flags_fall_back_to_opencode_experimental(variable, field) -> None:
    assert getattr(Flags.from_env({variable: "1"}), field) is True
    assert getattr(Flags.from_env({"OPENCODE_EXPERIMENTAL": "true"}), field) is True
    # an explicit value wins over the fallback, both ways
    assert getattr(Flags.from_env({"OPENCODE_EXPERIMENTAL": "true", variable: "0"}), field) is False
    assert getattr(Flags.from_env({"OPENCODE_EXPERIMENTAL": "false", variable: "on"}), field) is True


def test_experimental_does_not_switch_on_parallel() -> None:
    flags = Flags.from_env({"OPENCODE_EXPERIMENTAL": "1"})
    assert flags.enable_exa is True
    assert flags.enable_parallel is False


@pytest.mark.parametrize(
    "variable", ["OPENCODE_EXPERIMENTAL", "OPENCODE_ENABLE_EXA", "OPENCODE_EXPERIMENTAL_EXA"]
)
def test_exa_is_any_of_three(variable) -> None:
    assert Flags.from_env({variable: "yes"}).enable_exa is True
    assert Flags.from_env({variable: "no"}).enable_exa is False


@pytest.mark.parametrize("variable", ["OPENCODE_ENABLE_PARALLEL", "OPENCODE_EXPERIMENTAL_PARALLEL"])
def test_parallel_is_any_of_two(variable) -> None:
    assert Flags.from_env({variable: "y"}).enable_parallel is True


@pytest.mark.parametrize(
    ("client", "forced", "expected"),
    [
        ("cli", None, True),
        ("app", None, True),
        ("desktop", None, True),
        ("web", None, False),
        ("acp", None, False),
        ("web", "1", True),
    ],
)
def test_question_tool_gating(client, forced, expected) -> None:
    env = {"OPENCODE_CLIENT": client}
    if forced is not None:
        env["OPENCODE_ENABLE_QUESTION_TOOL"] = forced
    flags = Flags.from_env(env)

    assert flags.client == client
    assert flags.question_tool_enabled is expected


def test_other_booleans_and_integers() -> None:
    flags = Flags.from_env(
        {
            "OPENCODE_PURE": "1",
            "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "on",
            "OPENCODE_DISABLE_PROJECT_CONFIG": "yes",
            "OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS": "120000",
            "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX": "32000",
        }
    )

    assert flags.pure
    assert flags.disable_plugin_autoload and flags.disable_project_config
    assert flags.bash_default_timeout_ms == 120000
    assert flags.output_token_max == 32000


@pytest.mark.parametrize(
    "variable",
    [
        "OPENCODE_EXPERIMENTAL",
        "OPENCODE_ENABLE_QUESTION_TOOL",
        "OPENCODE_ENABLE_EXA",
        "OPENCODE_EXPERIMENTAL_LSP_TOOL",
        "OPENCODE_PURE",
        "OPENCODE_DISABLE_PLUGIN_AUTOLOAD",
    ],
)
def test_malformed_boolean_raises_config_error_naming_the_variable(variable) -> None:
    with pytest.raises(ConfigError, match=variable):
        Flags.from_env({variable: "maybe"})


def test_malformed_integer_raises_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS"):
        Flags.from_env({"OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS": "soon"})
    assert parse_int("X", "-5") == -5


def test_malformed_flag_through_a_project(make_project) -> None:
    project = make_project(extra_env={"OPENCODE_EXPERIMENTAL_PLAN_MODE": "Yes"})

    with pytest.raises(ConfigError, match="OPENCODE_EXPERIMENTAL_PLAN_MODE"):
        _ = project.flags


def test_malformed_disable_project_config_fails_config_loading(make_project) -> None:
    project = make_project(extra_env={"OPENCODE_DISABLE_PROJECT_CONFIG": "sure"})

    with pytest.raises(ConfigError, match="OPENCODE_DISABLE_PROJECT_CONFIG"):
        _ = project.config


def test_project_flags_come_from_its_env_not_os_environ(make_project, monkeypatch) -> None:
    monkeypatch.setenv("OPENCODE_EXPERIMENTAL", "1")

    assert make_project().flags.experimental_code_mode is False
    assert make_project(extra_env={"OPENCODE_EXPERIMENTAL": "1"}).flags.experimental_code_mode is True


def test_disable_default_plugins_is_not_read() -> None:
    """In OpenCode it switches off the bundled npm sign-in plugins, which nothing here corresponds to; the
    built-in plugins are disabled by name instead (tests/test_builtin_plugins.py)."""
    flags = Flags.from_env({"OPENCODE_DISABLE_DEFAULT_PLUGINS": "not a boolean"})  # not read: no error
    assert "disable_default_plugins" not in Flags._fields
    assert flags == Flags()
