"""Sessions moved whole: a fork (a copy to continue), an import of an export (ours or OpenCode's
``opencode export``), and an export in OpenCode's own shape.

An export is ``{"info": Session.Info, "messages": [{"info": Message, "parts": [Part…]}]}``; ours adds
``"children"`` (the subagent sessions' infos), which an import ignores. OpenCode's shapes carry more than
ours (a message's ``cost``, ``tokens``, ``path`` and ``mode``, parts of kinds such as ``step-start`` or
``reasoning``): an import keeps every key and every part as it came (a resumed session does not show the
model the kinds it does not know), and :func:`as_opencode` adds what OpenCode's own reader expects.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .shapes import new_id, now_ms

if TYPE_CHECKING:
    from ..store import Store


#: What an OpenCode assistant message says it used when nothing was counted.
NO_TOKENS = {"input": 0, "output": 0, "reasoning": 0}


class ExportError(ConfigError):
    """A file that is not a session export; the message says where and why."""


def fork(store: Store, session_id: str) -> str:
    """Copy the stored session ``session_id`` (its messages and parts, each with a new id; the copy's
    title says it is a fork) and return the copy's id. The original is left as it was."""
    info = store.session(session_id)
    if info is None:
        raise ExportError(f"no session {session_id!r}")
    messages = store.messages(session_id)
    renamed = {session_id: new_id("ses")}
    for message in messages:
        renamed[message["info"]["id"]] = new_id("msg")
        for part in message["parts"]:
            renamed[part["id"]] = new_id("prt")
    now = now_ms()
    copied = _renamed({**info, "title": _fork_title(info.get("title") or "")}, renamed)
    copied["time"] = {"created": now, "updated": now}
    store.write_session(copied, [_renamed(message, renamed) for message in messages])
    return renamed[session_id]


def _fork_title(title: str) -> str:
    return f"{title} (fork)" if title else "fork"


def _renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string that is an old id replaced by its new one (ids are unique strings, so
    a reference anywhere, such as an assistant's ``parentID``, follows)."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {key: _renamed(inner, names) for key, inner in value.items()}
    if isinstance(value, list):
        return [_renamed(inner, names) for inner in value]
    return value


def read_export(text: str, where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session info and messages of an export's JSON text; an :class:`ExportError` naming ``where``
    and what is wrong for anything that is not one. A message or part without ``sessionID`` (or a part
    without ``messageID``) gets its session's (message's); nothing else is changed."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ExportError(f"{where}: not JSON: {error}") from None
    info = data.get("info") if isinstance(data, dict) else None
    if not isinstance(info, dict) or not _is_id(info.get("id"), "ses"):
        raise ExportError(f"{where}: not a session export (no info with a ses_ id)")
    times = info.get("time")
    if not isinstance(times, dict) or not all(isinstance(times.get(k), int) for k in ("created", "updated")):
        raise ExportError(f"{where}: info.time needs created and updated (epoch milliseconds)")
    messages = data.get("messages", [])
    if not isinstance(messages, list):
        raise ExportError(f"{where}: messages must be a list")
    session_id = info["id"]
    checked = [_message(message, session_id, f"{where}: messages[{n}]") for n, message in enumerate(messages)]
    return copy.deepcopy(info), checked


def _message(message: Any, session_id: str, where: str) -> dict[str, Any]:
    info = message.get("info") if isinstance(message, dict) else None
    if not isinstance(info, dict) or not _is_id(info.get("id"), "msg"):
        raise ExportError(f"{where}: no info with a msg_ id")
    if info.get("role") not in ("user", "assistant"):
        raise ExportError(f"{where}: role must be user or assistant, not {info.get('role')!r}")
    if not isinstance((info.get("time") or {}).get("created"), int):
        raise ExportError(f"{where}: info.time.created must be epoch milliseconds")
    if info.setdefault("sessionID", session_id) != session_id:
        raise ExportError(f"{where}: belongs to session {info['sessionID']!r}, not {session_id!r}")
    parts = message.get("parts", [])
    if not isinstance(parts, list):
        raise ExportError(f"{where}: parts must be a list")
    for index, part in enumerate(parts):
        if (
            not isinstance(part, dict)
            or not _is_id(part.get("id"), "prt")
            or not isinstance(part.get("type"), str)
        ):
            raise ExportError(f"{where}.parts[{index}]: a part needs a prt_ id and a type")
        part.setdefault("sessionID", session_id)
        part.setdefault("messageID", info["id"])
    return copy.deepcopy({"info": info, "parts": parts})


def _is_id(value: Any, prefix: str) -> bool:
    return isinstance(value, str) and value.startswith(f"{prefix}_") and len(value) > len(prefix) + 1


def as_opencode(export: Mapping[str, Any], directory: Path) -> dict[str, Any]:
    """An export of ours in the shape OpenCode's ``opencode import`` reads: without ``children``, the
    session's ``projectID`` as OpenCode computes it (the repository's first root commit, else
    ``global``), and each assistant message with the keys OpenCode's messages always have (``mode``,
    ``path``, ``cost``, ``tokens``; an error as ``{name, data: {message}}``)."""
    info = dict(export["info"])
    info.setdefault("projectID", _project_id(directory))
    messages = []
    for message in export["messages"]:
        head = dict(message["info"])
        if head["role"] == "assistant":
            head.setdefault("mode", head.get("agent", ""))
            head.setdefault("path", {"cwd": info.get("directory", ""), "root": str(directory)})
            head.setdefault("cost", 0)
            head.setdefault(
                "tokens", {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
            )
            if isinstance(head.get("error"), str):
                head["error"] = {"name": head["error"], "data": {"message": head["error"]}}
        messages.append({"info": head, "parts": message["parts"]})
    return {"info": info, "messages": messages}


def _project_id(directory: Path) -> str:
    """OpenCode's project id: the first of the repository's root commits, or ``global`` outside git."""
    try:
        found = subprocess.run(
            # a project's own .git/config may name commands (core.fsmonitor): none is run for this
            ["git", "-c", "core.fsmonitor=false", "rev-list", "--max-parents=0", "--all"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return "global"
    roots = sorted(found.stdout.split()) if found.returncode == 0 else []
    return roots[0] if roots else "global"
