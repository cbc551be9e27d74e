"""``opencode session list|show|export|import|fork|delete``: the sessions ``opencode run`` keeps, read
from the store that ``--continue`` and ``--session`` use (``<data>/opencode.db``)."""

from __future__ import annotations

import time
from typing import Any

from .common import fail, friendly_errors, make_project, print_json, write_out


def list_sessions(as_json: bool) -> None:
    """The project's top-level sessions, most recently updated first: id, title, agent, model, when it was
    last updated, how many messages (``--json``: ``{"sessions": [{id, title, agent, model, updated,
    created, messages}]}``, times in epoch milliseconds)."""
    with friendly_errors():
        project = make_project()
        rows = [_summary(info) for info in project.store.project_sessions(str(project.directory))]
    if as_json:
        print_json({"sessions": rows})
        return
    if not rows:
        print("no sessions in this project (opencode run keeps one)")
        return
    table = [("ID", "TITLE", "AGENT", "MODEL", "UPDATED", "MESSAGES")]
    for row in rows:
        cells = (row["title"] or "-", row["agent"] or "-", row["model"] or "-", _when(row["updated"]))
        table.append((row["id"], *cells, str(row["messages"])))
    widths = [max(len(row[column]) for row in table) for column in range(len(table[0]) - 1)]
    for line in table:
        padded = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        write_out("  ".join([*padded, line[-1]]))


def show(session_id: str) -> None:
    """The transcript as text: a header, then each message with its text, files and tool calls (with
    their status, title or error), and the subagent sessions it started."""
    data = _export(session_id)
    info = data["info"]
    header = f"{info['id']}  {info.get('title') or '(untitled)'}"
    model = _model_text(_last_model(data["messages"]))
    details = [f"agent {info.get('agent') or '-'}", f"model {model or '-'}"]
    details += [f"updated {_when(info['time']['updated'])}", f"{len(data['messages'])} messages"]
    lines = [header, "  ".join(details)]
    for message in data["messages"]:
        lines += ["", *_message_lines(message)]
    children = data.get("children") or []
    if children:
        lines += ["", "subagent sessions:"]
        lines += [f"  {child['id']}  {child.get('title') or ''}".rstrip() for child in children]
    write_out("\n".join(lines))


def export(session_id: str, *, opencode: bool = False) -> None:
    """The session as JSON: ``{"info": …, "messages": [{"info", "parts"}], "children": [info…]}``,
    OpenCode's shapes (what ``opencode export`` gives); ``opencode``: exactly the shape OpenCode's
    ``opencode import`` reads (:func:`~opencode_cli.transcript.exchange.as_opencode`)."""
    data = _export(session_id)
    if opencode:
        from ..transcript.exchange import as_opencode

        data = as_opencode(data, make_project().root)
    print_json(data)


def import_session(file: str) -> None:
    """Keep the session of an export file (``-``: standard input) in this project's store: its id, its
    messages and parts as they are, its directory this project's (so ``run --continue`` finds it)."""
    import sys
    from pathlib import Path

    from ..transcript.exchange import read_export

    with friendly_errors():
        project = make_project()
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            fail(f"error: cannot read {file}: {error}")
        info, messages = read_export(text, "standard input" if file == "-" else file)
        info["directory"] = str(project.directory)
        try:
            project.store.write_session(info, messages)
        except ValueError as error:
            fail(f"error: {error} (opencode session delete {info['id']} first to replace it)")
    print(
        f"imported {info['id']} ({len(messages)} messages): opencode run --session {info['id']} continues it"
    )


def fork(session_id: str) -> None:
    """Copy a kept session and print the copy's id."""
    from ..transcript.exchange import fork as fork_session

    with friendly_errors():
        project = make_project()
        _known(project, session_id)
        print(fork_session(project.store, session_id))


def delete(session_id: str) -> None:
    """Delete the session with its subagent sessions, approvals and todo list."""
    with friendly_errors():
        project = make_project()
        _known(project, session_id)
        deleted = project.store.delete_session(session_id)
    extra = len(deleted) - 1
    print(f"deleted {session_id}" + (f" and {extra} subagent session{'s' * (extra > 1)}" if extra else ""))


def _export(session_id: str) -> dict[str, Any]:
    with friendly_errors():
        project = make_project()
        info = _known(project, session_id)
        store = project.store
        return {"info": info, "messages": store.messages(session_id), "children": store.children(session_id)}


def _known(project: Any, session_id: str) -> dict[str, Any]:
    """The session's info; a usage error naming the close ids of this project when there is none."""
    info = project.store.session(session_id)
    if info is not None:
        return info
    import difflib

    ids = [row["id"] for row in project.store.project_sessions(str(project.directory))]
    close = difflib.get_close_matches(session_id, ids, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else " (opencode session list shows them)"
    fail(f"error: no session {session_id!r}{hint}")


def _summary(info: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": info["id"],
        "title": info.get("title", ""),
        "agent": info.get("agent", ""),
        "model": _model_text(info.get("model")),
        "updated": info["time"]["updated"],
        "created": info["time"]["created"],
        "messages": info.get("messages", 0),
    }


def _message_lines(message: dict[str, Any]) -> list[str]:
    info = message["info"]
    role = info["role"]
    head = f"{role}  {_when(info['time']['created'])}"
    model = _model_text(info.get("model") if role == "user" else info)
    if role == "assistant" and model:
        head += f"  {model}"
    if info.get("summary"):
        head += "  (summary of the conversation before it)"
    if info.get("error"):
        head += f"  error: {info['error']}"
    lines = [head]
    for part in message["parts"]:
        lines += [f"  {line}" for line in _part_lines(part)]
    return lines


#: How a tool call's status is marked.
MARKS = {"completed": "✓", "error": "✗", "running": "…", "pending": "…"}


def _part_lines(part: dict[str, Any]) -> list[str]:
    kind = part.get("type")
    if kind == "text":
        return (part.get("text") or "").splitlines() or [""]
    if kind == "file":
        return [f"[file] {part.get('filename') or part.get('url', '')[:60]} ({part.get('mime', '')})"]
    if kind == "compaction":
        return ["[compaction]"]
    if kind != "tool":
        return [f"[{kind}]"]
    state = part.get("state") or {}
    status = state.get("status", "pending")
    line = f"{MARKS.get(status, '?')} {part.get('tool')} {status}"
    if status == "error":
        first = next(iter(str(state.get("error") or "").splitlines()), "")
        line += f": {first}"
    elif state.get("title"):
        line += f"  {state['title']}"
    return [line]


def _last_model(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for message in reversed(messages):
        info = message["info"]
        model = info.get("model") if info["role"] == "user" else info
        if isinstance(model, dict) and model.get("modelID"):
            return model
    return None


def _model_text(model: dict[str, Any] | None) -> str:
    if not model or not model.get("modelID"):
        return ""
    provider = model.get("providerID")
    return f"{provider}/{model['modelID']}" if provider else model["modelID"]


def _when(ms: int) -> str:
    """A time in epoch milliseconds as local ``YYYY-MM-DD HH:MM``."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))
