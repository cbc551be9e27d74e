"""A ``SKILL.md`` lacking a required field (issue 18, item 8): a command warns about it, naming the file and
the field (once per change of the file: issue 36), and the ``skill`` tool cannot load it by name (as it
cannot be listed for the model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def skill(project: str, folder: str, front: str) -> Path:
    path = Path(project) / ".opencode" / "skill" / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\n{front}---\nThe instructions.\n")
    return path


@pytest.mark.parametrize(
    ("front", "field"),
    [
        ("name: quiet\n", "description"),
        ("description: Ship it.\n", "name"),
        ("name: quiet\ndescription: ''\n", "description"),
    ],
)
def test_a_skill_lacking_a_field_is_warned_about_and_cannot_be_loaded(
    run_cli: Any, cli_env: dict[str, str], front: str, field: str
) -> None:
    path = skill(cli_env["project"], "quiet", front)
    listed = run_cli("tools", "inspect", "skill")
    assert listed.exit_code == 0, listed.output
    assert f'warning: skill skipped: {path}: front matter field "{field}"' in listed.stderr
    assert "quiet" not in listed.stdout

    loaded = run_cli("tools", "run", "skill", "name=quiet", "--yes")
    assert loaded.exit_code == 1
    assert 'Skill "quiet" not found. Available skills: customize-opencode' in loaded.stderr
    assert "warning:" not in loaded.stderr  # shown once, until the file changes

    path.write_text(path.read_text() + "More instructions.\n")
    again = run_cli("tools", "run", "skill", "name=quiet", "--yes")
    assert again.exit_code == 1
    assert f'warning: skill skipped: {path}: front matter field "{field}"' in again.stderr


def test_a_complete_skill_loads_without_a_warning(run_cli: Any, cli_env: dict[str, str]) -> None:
    skill(cli_env["project"], "deploy", "name: deploy\ndescription: Ship it.\n")
    loaded = run_cli("tools", "run", "skill", "name=deploy", "--yes")
    assert loaded.exit_code == 0, loaded.output
    assert '<skill_content name="deploy">' in loaded.stdout
    assert "warning" not in loaded.stderr
