"""``opencode session list|show|export|delete`` in-process (CliRunner), over sessions a library host kept
in the store that ``opencode run --continue`` reads; the same commands as a real process after ``opencode
run`` live in tests/models/test_run_cli.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import Project


@pytest.fixture
def kept(cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Two kept sessions of the project (one with a subagent session) and one of another directory."""
    for key, value in cli_env.items():
        if key != "project":
            monkeypatch.setenv(key, value)
    project_dir = Path(cli_env["project"])
    other = project_dir.parent / "elsewhere"
    (other / ".git").mkdir(parents=True)
    ids: dict[str, Any] = {}
    with Project(other) as project, project.session(remember=True, title="Not here") as session:
        session.user("hello")
    with Project(project_dir) as project:
        with project.session(remember=True, title="Older", model="openai/gpt-5") as session:
            session.user("first")
            ids["older"] = session.id
        with project.session(remember=True, title="Reading", model="anthropic/claude-sonnet-4-5") as session:
            session.user("read the README, then a file that is not there")
            session.run_tool("read", {"filePath": "README.md"})
            with pytest.raises(Exception, match="File not found"):
                session.run_tool("read", {"filePath": "missing.txt"})
            child = session.child("explore")
            child.user("look around")
            child.transcript.update_session()
            ids["reading"], ids["child"] = session.id, child.id
    yield ids


def test_list_shows_this_projects_sessions_newest_first(run_cli, kept) -> None:
    result = run_cli("session", "list")
    assert result.exit_code == 0, result.output
    header, first, second = result.stdout.splitlines()
    assert header.split() == ["ID", "TITLE", "AGENT", "MODEL", "UPDATED", "MESSAGES"]
    assert first.split()[:4] == [kept["reading"], "Reading", "build", "anthropic/claude-sonnet-4-5"]
    assert first.split()[-1] == "2"
    assert second.split()[:4] == [kept["older"], "Older", "build", "openai/gpt-5"]
    data = json.loads(run_cli("session", "list", "--json").stdout)
    assert [row["id"] for row in data["sessions"]] == [kept["reading"], kept["older"]]
    assert set(data["sessions"][0]) == {"id", "title", "agent", "model", "updated", "created", "messages"}
    assert data["sessions"][1]["messages"] == 1


def test_show_prints_the_transcript_with_each_calls_status(run_cli, kept) -> None:
    result = run_cli("session", "show", kept["reading"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"{kept['reading']}  Reading"
    assert "agent build" in lines[1] and "model anthropic/claude-sonnet-4-5" in lines[1]
    assert "  read the README, then a file that is not there" in lines
    assert "  ✓ read completed  README.md" in lines
    assert any(line.startswith("  ✗ read error: File not found:") for line in lines)
    assert lines[-1].startswith(f"  {kept['child']}")


def test_export_is_openCodes_json_and_delete_takes_the_subagents_along(run_cli, kept) -> None:
    data = json.loads(run_cli("session", "export", kept["reading"]).stdout)
    assert data["info"]["id"] == kept["reading"] and data["info"]["title"] == "Reading"
    user, assistant = data["messages"]
    assert user["info"]["role"] == "user" and assistant["info"]["role"] == "assistant"
    assert [part["state"]["status"] for part in assistant["parts"]] == ["completed", "error"]
    assert [child["id"] for child in data["children"]] == [kept["child"]]
    deleted = run_cli("session", "delete", kept["reading"])
    assert deleted.exit_code == 0 and deleted.stdout == f"deleted {kept['reading']} and 1 subagent session\n"
    for session_id in (kept["reading"], kept["child"]):
        gone = run_cli("session", "show", session_id)
        assert gone.exit_code == 2 and f"no session {session_id!r}" in gone.stderr
    assert [row["id"] for row in json.loads(run_cli("session", "list", "--json").stdout)["sessions"]] == [
        kept["older"]
    ]


def test_an_unknown_id_is_a_usage_error_with_the_close_ones(run_cli, kept) -> None:
    result = run_cli("session", "delete", kept["older"][:-1])
    # the closest first: ids made in the same second share their time prefix, so others may follow
    assert result.exit_code == 2 and f"did you mean {kept['older']}" in result.stderr
    assert "Traceback" not in result.output
