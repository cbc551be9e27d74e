"""The console script runs only the group a command line names (``app_for``): the same commands, help
and errors as the whole application, with less to build at each start."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from opencode_cli.cli.app import GROUPS, _command_name, app, app_for


def test_every_group_of_the_application_is_listed() -> None:
    names = {info.name for info in app.registered_groups}
    assert names == set(GROUPS)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_a_group_alone_says_what_the_whole_application_says(group: str) -> None:
    runner = CliRunner()
    for args in ([group, "--help"], [group, "no-such-command"], [group]):
        alone = runner.invoke(app_for(args), args, prog_name="opencode")
        whole = runner.invoke(app, args, prog_name="opencode")
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    assert app_for([group]) is not app


@pytest.mark.parametrize("args", [["--version"], ["run", "hi"], ["nonsense"], ["-p", "no:web", "nonsense"]])
def test_anything_else_gets_the_whole_application(args: list[str]) -> None:
    assert app_for(args) is app


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["-h"],
        ["-p", "no:web", "--help"],
        ["--trust", "-h"],
        ["--help", "tools", "list"],
        ["--trust"],
    ],
)
def test_the_root_help_says_what_the_whole_application_says(args: list[str]) -> None:
    # each group is an empty shell of itself there: its name and help are listed, its commands never built
    narrowed = app_for(args)
    runner = CliRunner()
    alone = runner.invoke(narrowed, args, prog_name="opencode")
    whole = runner.invoke(app, args, prog_name="opencode")
    assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    if args != ["--trust"]:  # the root's options and no command: its own "Missing command." error
        assert "List, inspect and run tools." in whole.output
    else:
        assert "Missing command." in whole.output
    assert [info.name for info in narrowed.registered_groups] == list(GROUPS)
    assert all(not info.typer_instance.registered_commands for info in narrowed.registered_groups)
    assert all(group.registered_commands for group in GROUPS.values())  # the application itself untouched


def _commands(group: str) -> list[str]:
    return sorted(name for info in GROUPS[group].registered_commands if (name := _command_name(info)))


@pytest.mark.parametrize(
    ("group", "command"), [(group, command) for group in sorted(GROUPS) for command in _commands(group)]
)
def test_a_command_alone_says_what_the_whole_application_says(group: str, command: str) -> None:
    runner = CliRunner()
    for args in ([group, command, "--help"], [group, command, "--no-such-option"]):
        alone = runner.invoke(app_for(args), args, prog_name="opencode")
        whole = runner.invoke(app, args, prog_name="opencode")
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    narrowed = app_for([group, command]).registered_groups[0].typer_instance
    assert [_command_name(info) for info in narrowed.registered_commands] == [command]
    assert narrowed is not GROUPS[group] and len(GROUPS[group].registered_commands) >= 1


def test_a_group_with_subgroups_keeps_them_for_a_name_that_is_no_command() -> None:
    for group, typer_app in GROUPS.items():
        for info in typer_app.registered_groups:
            assert app_for([group, info.name]).registered_groups[0].typer_instance is typer_app
