"""Names the CLI cannot place are said out loud (issue 18, item 6): an unknown ``--profile`` is an error
(exit 2) with the close matches; a model no rule recognises and an ``--allow``/``--deny`` for a permission
no tool asks are warnings on stderr with the close matches, and the command goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.errors import ConfigError
from opencode_cli.modelref import ModelRef
from opencode_cli.permission import unasked
from opencode_cli.schema_profiles import PROFILES, check_profile

# -- --profile: a typo is an error ------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("tools", "schema"), ("tools", "inspect", "read")])
def test_an_unknown_profile_is_refused_with_the_close_match(run_cli: Any, command: tuple[str, ...]) -> None:
    result = run_cli(*command, "--model", "openai/gpt-5", "--profile", "openai-strcit")
    assert result.exit_code == 2
    assert "unknown schema profile 'openai-strcit'" in result.stderr
    assert "Did you mean: openai-strict" in result.stderr
    assert result.stdout == ""


def test_an_unknown_profile_of_tools_call_runs_nothing(run_cli: Any, cli_env: dict[str, str]) -> None:
    call = {"name": "write", "arguments": json.dumps({"filePath": "new.txt", "content": "x"})}
    result = run_cli("tools", "call", json.dumps(call), "--profile", "gemni", "--yes")
    assert result.exit_code == 2
    assert "Did you mean: gemini" in result.stderr
    assert not (Path(cli_env["project"]) / "new.txt").exists()


def test_a_known_profile_is_used(run_cli: Any) -> None:
    result = run_cli("tools", "inspect", "read", "--profile", "gemini", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["profile"] == "gemini"
    assert "warning" not in result.stderr


def test_a_session_refuses_an_unknown_profile(make_project: Any) -> None:
    project = make_project()
    with pytest.raises(ConfigError, match="Profiles: default, openai, openai-strict, kimi, gemini"):
        project.session(profile="strict")


@given(st.text(max_size=20))
def test_check_profile_accepts_exactly_the_profiles(name: str) -> None:
    if name in PROFILES:
        assert check_profile(name) == name
    else:
        with pytest.raises(ConfigError, match="unknown schema profile"):
            check_profile(name)


# -- a model no rule recognises: a warning ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "suggestion"),
    [("gtp-5", "gpt-5"), ("opnai/gpt-5", "openai/gpt-5"), ("antropic/claude-sonnet-4-5", "anthropic/")],
)
def test_an_unrecognised_model_is_warned_about_with_the_close_match(
    run_cli: Any, model: str, suggestion: str
) -> None:
    result = run_cli("tools", "list", "--model", model, "--json")
    assert result.exit_code == 0, result.output
    assert f"warning: model '{model}' is not recognised" in result.stderr
    assert f"Did you mean: {suggestion}" in result.stderr
    assert json.loads(result.stdout)["model"] == model  # the command still ran, for that model


@pytest.mark.parametrize("model", ["gpt-5", "openai/gpt-5", "claude-sonnet-4-5", "google/gemini-2.5-pro"])
def test_a_recognised_model_gets_no_warning(run_cli: Any, model: str) -> None:
    result = run_cli("tools", "list", "--model", model)
    assert result.exit_code == 0, result.output
    assert "not recognised" not in result.stderr


def test_a_configured_provider_and_model_are_recognised(run_cli: Any, cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / "opencode.toml").write_text(
        '[provider.local]\noptions = { baseURL = "http://127.0.0.1:9/v1" }\n'
        '[provider.local.models."qwen3-coder"]\n'
    )
    for model in ("local/qwen3-coder", "qwen3-coder"):
        result = run_cli("tools", "schema", "--model", model)
        assert result.exit_code == 0, result.output
        assert "not recognised" not in result.stderr


def test_the_config_model_is_checked_too(run_cli: Any, cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / "opencode.toml").write_text('model = "opnai/gpt-5"\n')
    result = run_cli("tools", "list")
    assert result.exit_code == 0, result.output
    assert "Did you mean: openai/gpt-5?" in result.stderr


@given(st.text(min_size=1, max_size=30))
def test_every_model_string_is_recognised_or_explained(text: str) -> None:
    ref = ModelRef.parse(text)
    problem = ref.unrecognised()
    if ref.provider is not None and ref.provider in {"openai", "anthropic", "google"}:
        assert problem is None
    if problem is not None:
        assert problem.startswith(f"model {str(ref)!r} is not recognised")
        assert "\n" not in problem  # one line, whatever the text (quoted as Python quotes it)


# -- --allow / --deny for a permission no tool asks: a warning --------------------------------------------


def test_a_misspelt_allow_is_warned_about_and_does_not_allow(run_cli: Any, cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / "opencode.toml").write_text('[permission]\nbash = "deny"\n')
    result = run_cli("tools", "run", "bash", "command=echo hi", "--allow", "bahs")
    assert "warning: --allow bahs: no tool asks the permission 'bahs'" in result.stderr
    assert "Did you mean: bash?" in result.stderr
    assert result.exit_code == 1  # the rule did nothing: bash is still denied


def test_a_misspelt_deny_with_a_pattern_is_warned_about(run_cli: Any) -> None:
    result = run_cli("tools", "run", "read", "filePath=README.md", "--deny", "raed=*.md")
    assert result.exit_code == 0, result.output
    assert "warning: --deny raed=*.md: no tool asks the permission 'raed'" in result.stderr
    assert "Did you mean: read?" in result.stderr
    assert "A small project." in result.stdout


@pytest.mark.parametrize(
    "flag", ["read", "edit=src/*", "external_directory=/tmp/*", "doom_loop", "web*", "*", "todowrite"]
)
def test_a_permission_some_tool_asks_gets_no_warning(run_cli: Any, flag: str) -> None:
    result = run_cli("tools", "run", "read", "filePath=README.md", "--allow", flag)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr


def test_tools_call_warns_about_a_misspelt_permission(run_cli: Any) -> None:
    call = {"name": "read", "arguments": json.dumps({"filePath": "README.md"})}
    result = run_cli("tools", "call", json.dumps(call), "--allow", "glbo")
    assert result.exit_code == 0, result.output
    assert "Did you mean: glob?" in result.stderr


def test_a_configured_mcp_servers_tools_count() -> None:
    assert unasked("github_create_issue", ["read"], ["github_"]) is None
    assert unasked("gitlab_create_issue", ["read"], ["github_"]) is not None


def test_write_and_apply_patch_ask_under_edit() -> None:
    problem = unasked("write", ["write", "apply_patch", "read"])
    assert problem is not None and "edit" in problem  # the permission to name instead
    assert unasked("edit", ["write"]) is None


def test_the_warnings_reach_a_real_process(run_process: Any) -> None:
    done = run_process("tools", "schema", "--model", "gtp-5")
    assert done.returncode == 0, done.stderr
    assert "warning: model 'gtp-5' is not recognised" in done.stderr
    assert json.loads(done.stdout)  # the payload is still printed, and only it is on stdout
    bad = run_process("tools", "schema", "--profile", "nope")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: unknown schema profile 'nope'")
    assert "Traceback" not in bad.stderr
