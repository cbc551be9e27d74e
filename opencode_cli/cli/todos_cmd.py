"""``opencode todos show``: a session's todo list, read from the store."""

from __future__ import annotations

from .common import friendly_errors, make_project, print_json

MARKS = {"completed": "[x]", "in_progress": "[>]", "cancelled": "[-]", "pending": "[ ]"}


def show(session_id: str, as_json: bool) -> None:
    """Print the todo list of ``session_id`` (``--json``: ``{"session", "todos"}``)."""
    with friendly_errors():
        todos = make_project().store.todos(session_id)
    if as_json:
        print_json({"session": session_id, "todos": todos})
        return
    if not todos:
        print(f"no todos in session {session_id}")
        return
    for item in todos:
        mark = MARKS.get(item["status"], f"[{item['status']}]")
        print(f"{mark} {item['content']} ({item['priority']})")
