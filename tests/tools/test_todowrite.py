"""The built-in ``todowrite`` tool (builtin-tools spec §12) and its table in the sqlite store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _harness import Recorder

from opencode_cli import Project
from opencode_cli.errors import DeniedError, InvalidArgumentsError
from opencode_cli.store import SCHEMA_VERSION, Store


def item(content: str, status: str = "pending", priority: str = "medium", **extra: Any) -> dict[str, Any]:
    return {"content": content, "status": status, "priority": priority, **extra}


def write(project: Project, todos: list[dict[str, Any]], session: str = "ses_todo", **options: Any) -> Any:
    return project.run_tool("todowrite", {"todos": todos}, id=session, **options)


# -- parameters ------------------------------------------------------------------------------------------


def test_schema_requires_todos_and_every_item_field(project: Project) -> None:
    schema = project.registry.get("todowrite").tool.load().schema()
    assert schema["required"] == ["todos"]
    items = schema["properties"]["todos"]["items"]
    assert items["required"] == ["content", "status", "priority"]
    assert "description" not in items  # no class docstring leaking into the schema
    for key in ("status", "priority"):
        assert items["properties"][key]["type"] == "string"
        assert "enum" not in items["properties"][key]  # values are described, not enforced
    assert "pending, in_progress, completed, cancelled" in items["properties"]["status"]["description"]
    assert "high, medium, low" in items["properties"]["priority"]["description"]


@pytest.mark.parametrize(
    "args",
    [{}, {"todos": "x"}, {"todos": [{"content": "a", "status": "pending"}]}, {"todos": [{"content": 1}]}],
)
def test_invalid_arguments_are_refused(project: Project, args: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        project.run_tool("todowrite", args)
    assert str(caught.value).startswith("The todowrite tool was called with invalid arguments: ")


def test_extra_item_keys_are_ignored(project: Project) -> None:
    # parameters.test.ts: "todo accepts items (extra `id` ignored)"
    result = write(project, [item("a", id="1", note="x")])
    assert json.loads(result.output) == [{"content": "a", "status": "pending", "priority": "medium"}]


def test_status_and_priority_values_are_not_validated(project: Project) -> None:
    result = write(project, [item("a", status="blocked", priority="urgent")])
    assert json.loads(result.output)[0] == {"content": "a", "status": "blocked", "priority": "urgent"}


# -- behaviour -------------------------------------------------------------------------------------------


def test_output_is_the_list_as_two_space_json(project: Project) -> None:
    todos = [item("Write tests", "in_progress", "high"), item("Ship it", "pending", "low")]
    result = write(project, todos)
    assert result.output == json.dumps(todos, indent=2)
    assert result.output.startswith('[\n  {\n    "content": "Write tests",\n    "status": "in_progress"')


def test_non_ascii_text_is_kept_verbatim(project: Project) -> None:
    result = write(project, [item("Café — naïve 😀")])
    assert '"content": "Café — naïve 😀"' in result.output


@pytest.mark.parametrize(
    ("statuses", "title"),
    [
        (["pending"], "1 todos"),
        (["completed"], "0 todos"),
        (["pending", "in_progress", "completed", "cancelled"], "3 todos"),
        ([], "0 todos"),
    ],
)
def test_title_counts_items_not_completed(project: Project, statuses: list[str], title: str) -> None:
    result = write(project, [item(f"t{i}", status) for i, status in enumerate(statuses)])
    assert result.title == title


def test_empty_list(project: Project) -> None:
    result = write(project, [])
    assert result.output == "[]"
    assert result.metadata == {"todos": [], "truncated": False}
    assert project.store.todos("ses_todo") == []


def test_metadata_holds_the_todos(project: Project) -> None:
    todos = [item("a"), item("b", "completed")]
    result = write(project, todos)
    assert result.metadata == {"todos": todos, "truncated": False}


def test_asks_todowrite_permission_with_star(project: Project) -> None:
    from opencode_cli.permission import Rule

    prompt = Recorder()
    write(project, [item("a")], prompt=prompt)
    assert prompt.requests == []  # "*": allow in the defaults, so nothing reaches the human

    write(project, [item("a")], session="ses_asked", prompt=prompt, rules=[Rule("todowrite", "*", "ask")])
    [request] = prompt.requests
    assert (request.permission, request.patterns, request.always, request.metadata) == (
        "todowrite",
        ["*"],
        ["*"],
        {},
    )


def test_general_subagent_is_denied(project: Project) -> None:
    with pytest.raises(DeniedError):
        write(project, [item("a")], agent="general")
    assert "todowrite" not in [d.id for d in project.tools(agent="general")]
    assert "todowrite" in [d.id for d in project.tools(agent="build")]
    assert project.store.todos("ses_todo") == []


def test_each_call_replaces_the_whole_list(project: Project) -> None:
    write(project, [item("a"), item("b"), item("c")])
    write(project, [item("c", "completed"), item("d")])
    assert project.store.todos("ses_todo") == [item("c", "completed"), item("d")]


def test_lists_are_per_session(project: Project) -> None:
    write(project, [item("one")], session="ses_a")
    write(project, [item("two")], session="ses_b")
    assert project.store.todos("ses_a") == [item("one")]
    assert project.store.todos("ses_b") == [item("two")]
    assert project.store.todos("ses_other") == []


def test_list_survives_a_new_project_object(project: Project, make_project: Any) -> None:
    """Another process (a fresh Project on the same data directory) reads what was written."""
    write(project, [item("persisted", "in_progress", "high")], session="ses_keep")
    assert make_project().store.todos("ses_keep") == [item("persisted", "in_progress", "high")]


def test_store_is_found_from_the_context_environment(project: Project, tmp_path: Path) -> None:
    """The tool writes where the call's environment points, like Project.store."""
    tool = project.registry.get("todowrite").tool.load()
    data = tmp_path / "elsewhere"
    ctx = project.session(id="ses_ctx").context("todowrite", None)
    ctx.env = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    asyncio.run(tool.run({"todos": [item("x")]}, ctx))
    assert Store(data / "opencode" / "opencode.db").todos("ses_ctx") == [item("x")]


# -- the store -------------------------------------------------------------------------------------------


def test_a_version_one_store_gains_the_todo_table_and_keeps_approvals(tmp_path: Path) -> None:
    from opencode_cli.store import MIGRATIONS

    path = tmp_path / "opencode.db"
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0])
    connection.execute("INSERT INTO permission_approval VALUES ('ses_1', 'read', '*', 1.0)")
    connection.execute("PRAGMA user_version = 1")
    connection.commit()
    connection.close()
    store = Store(path)
    assert store.approvals("ses_1") == [("read", "*")]
    store.set_todos("ses_1", [item("a")])
    assert store.todos("ses_1") == [item("a")]
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
    finally:
        connection.close()


def test_store_keeps_order_and_duplicates(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    todos = [item("same"), item("same", "completed"), item("a"), item("B")]
    store.set_todos("s", todos)
    assert store.todos("s") == todos
