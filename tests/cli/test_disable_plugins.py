"""``opencode -p no:NAME`` and ``--disable-plugin NAME`` (as pytest's ``-p no:NAME``), and ``[plugins]
disabled`` in config: a built-in plugin switched off loses its tools in ``tools list`` and its hooks, and
``plugins list`` shows it blocked with the way it was disabled (issue 37)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import __version__
from opencode_cli.cli.app import app, app_for

ALL = [
    "bash",
    "read",
    "glob",
    "grep",
    "edit",
    "write",
    "task",
    "webfetch",
    "todowrite",
    "websearch",
    "skill",
    "apply_patch",
    "invalid",
    "question",  # hidden: without a terminal nobody can answer it
    "execute",
    "lsp",
    "plan_exit",
]


def listed(result: Any) -> list[str]:
    """The ids ``tools list --all --json`` printed, offered and hidden."""
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return [t["id"] for t in data["tools"]] + [h["id"] for h in data["hidden"]]


def without(*ids: str) -> list[str]:
    return [tool_id for tool_id in ALL if tool_id not in ids]


def test_everything_is_listed_by_default(run_cli: Callable[..., Any]) -> None:
    assert listed(run_cli("tools", "list", "--all", "--json")) == ALL


@pytest.mark.parametrize(
    ("args", "gone"),
    [
        (["-p", "no:web"], ("webfetch", "websearch")),
        (["--disable-plugin", "shell"], ("bash",)),
        (
            ["-p", "no:files", "--disable-plugin", "codemode"],
            ("read", "glob", "grep", "edit", "write", "apply_patch", "execute"),
        ),
        (["-pno:agents"], ("question", "task", "todowrite", "skill", "plan_exit")),
        (["--disable-plugin=lsp"], ("lsp",)),
    ],
)
def test_the_flag_removes_the_plugins_tools(
    run_cli: Callable[..., Any], args: list[str], gone: tuple[str, ...]
) -> None:
    assert listed(run_cli(*args, "tools", "list", "--all", "--json")) == without(*gone)


def test_the_flag_holds_for_one_command_only(run_cli: Callable[..., Any]) -> None:
    assert "bash" not in listed(run_cli("-p", "no:shell", "tools", "list", "--all", "--json"))
    assert listed(run_cli("tools", "list", "--all", "--json")) == ALL


def test_config_removes_the_plugins_tools(run_cli: Callable[..., Any], cli_env: dict[str, str]) -> None:
    Path(cli_env["project"], "opencode.toml").write_text('[plugins]\ndisabled = ["web", "shell"]\n')
    assert listed(run_cli("tools", "list", "--all", "--json")) == without("webfetch", "websearch", "bash")
    plugins = {p["name"]: p for p in json.loads(run_cli("plugins", "list", "--json").stdout)["plugins"]}
    assert plugins["web"]["status"] == "blocked" and plugins["web"]["tools"] == []
    assert plugins["web"]["error"] == "disabled by [plugins] disabled in config"
    assert plugins["files"]["status"] == "loaded"


def test_plugins_list_names_the_flag(run_cli: Callable[..., Any]) -> None:
    result = run_cli("-p", "no:web", "plugins", "list")
    assert result.exit_code == 0
    assert f"web {__version__}  [builtin]  blocked" in result.stdout
    assert "error: disabled by -p no:web on the command line" in result.stdout


def test_a_disabled_tool_called_by_name_names_the_flag(run_cli: Callable[..., Any]) -> None:
    assert run_cli("tools", "run", "bash", "command=true", "--yes").exit_code == 0  # remembered as shell's
    result = run_cli("-p", "no:shell", "tools", "run", "bash", "command=true", "--yes")
    assert result.exit_code == 2
    assert (
        "It comes from plugin 'shell', which is disabled by -p no:shell on the command line." in result.stderr
    )


@pytest.mark.parametrize("form", ["flag", "config"])
def test_disabling_providers_removes_its_hook(
    run_cli: Callable[..., Any], cli_env: dict[str, str], form: str
) -> None:
    if form == "config":
        Path(cli_env["project"], "opencode.toml").write_text('[plugins]\ndisabled = ["providers"]\n')
        result = run_cli("run", "--model", "openai/gpt-5", "hi")
    else:
        result = run_cli("-p", "no:providers", "run", "--model", "openai/gpt-5", "hi")
    assert result.exit_code == 2
    assert "unknown provider 'openai' (providers: none)" in result.stderr


def test_a_p_value_without_no_is_a_usage_error(run_cli: Callable[..., Any]) -> None:
    result = run_cli("-p", "web", "tools", "list")
    assert result.exit_code == 2
    assert "-p takes no:NAME" in result.stderr


def test_an_unknown_name_is_warned_about_with_the_close_ones(run_cli: Callable[..., Any]) -> None:
    result = run_cli("-p", "no:wbe", "tools", "list", "--all", "--json")
    assert listed(result) == ALL
    assert "warning: no plugin named wbe (-p no:wbe on the command line) (did you mean web?)" in result.stderr


def test_core_is_essential(run_cli: Callable[..., Any]) -> None:
    result = run_cli("-p", "no:core", "tools", "run", "read", "filePath=README.md")
    assert result.exit_code == 0 and "A small project." in result.stdout
    assert "plugin core cannot be disabled" in result.stderr


def test_the_console_script_reads_the_flag_before_the_group(run_process: Callable[..., Any]) -> None:
    done = run_process("-p", "no:web", "tools", "list")
    assert done.returncode == 0, done.stderr
    ids = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert "read" in ids and "webfetch" not in ids and "websearch" not in ids
    narrowed = app_for(["-p", "no:web", "--disable-plugin", "x", "tools", "list"])
    assert narrowed is not app and narrowed.registered_groups[0].name == "tools"
