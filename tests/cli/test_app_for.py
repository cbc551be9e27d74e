"""The console script runs only the group a command line names (``app_for``): the same commands, help
and errors as the whole application, with less to build at each start."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from opencode_cli.cli.app import GROUPS, app, app_for


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


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["run", "hi"], ["nonsense"]])
def test_anything_else_gets_the_whole_application(args: list[str]) -> None:
    assert app_for(args) is app
