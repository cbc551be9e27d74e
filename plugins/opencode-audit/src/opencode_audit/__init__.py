"""opencode-audit: an example plugin package that uses the three tool hooks.

* ``tool_definition`` appends ``(audited)`` to every tool's description;
* ``tool_execute_before`` blocks calls whose arguments match ``OPENCODE_AUDIT_BLOCK`` (and logs them);
* ``tool_execute_after`` appends a JSON line per finished call to ``OPENCODE_AUDIT_LOG``
  (default ``$XDG_DATA_HOME/opencode/audit.jsonl``).

Hooks receive the call, not the project's configuration, so the settings are environment variables,
read at each call (a test or a long-running host can change them between calls).
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opencode_cli import ToolError, hookimpl

if TYPE_CHECKING:
    from opencode_cli import ToolResult
    from opencode_cli.plugin import ToolDefinitionOutput

__version__ = "0.1.0"

LOG_VARIABLE = "OPENCODE_AUDIT_LOG"
BLOCK_VARIABLE = "OPENCODE_AUDIT_BLOCK"
MARK = "(audited)"


def log_path() -> Path:
    """``$OPENCODE_AUDIT_LOG``, else ``audit.jsonl`` in opencode's data directory."""
    configured = os.environ.get(LOG_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    from opencode_cli.plugin import data_dir

    return data_dir(os.environ) / "audit.jsonl"


@lru_cache(maxsize=8)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def arguments_text(args: dict[str, Any]) -> str:
    """The text ``OPENCODE_AUDIT_BLOCK`` is searched in: the arguments as JSON, keys sorted."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def write_entry(entry: dict[str, Any]) -> None:
    """Append one JSON line to the log with a single ``write`` (whole lines even with several writers)."""
    path = log_path()
    line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)
    except OSError as error:
        # an audit trail that cannot be written fails the call rather than losing the record
        raise ToolError(f"The opencode-audit plugin could not write its log {path}: {error}") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _entry(
    status: str, tool: str, session_id: str, call_id: str | None, args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "time": _now(),
        "status": status,
        "tool": tool,
        "session": session_id,
        "call": call_id,
        "args": args,
    }


@hookimpl
def tool_definition(output: ToolDefinitionOutput) -> None:
    """Tell the model that calls are audited (``tools inspect`` shows the new description)."""
    described = output.description.rstrip()
    if not described.endswith(MARK):
        output.description = f"{described}\n\n{MARK}" if described else MARK


# trylast: judge the arguments after every other plugin has had its chance to change them
@hookimpl(trylast=True)
def tool_execute_before(tool: str, session_id: str, call_id: str | None, args: dict[str, Any]) -> None:
    """Block a call whose arguments match ``OPENCODE_AUDIT_BLOCK``; the message is what the model sees."""
    pattern = os.environ.get(BLOCK_VARIABLE)
    if not pattern:
        return
    try:
        expression = _compile(pattern)
    except re.error as error:
        message = (
            f"The opencode-audit plugin blocks every call: {BLOCK_VARIABLE}={pattern!r} is not a valid "
            f"regular expression ({error}). Ask the user to fix it."
        )
    else:
        if not expression.search(arguments_text(args)):
            return
        message = (
            f"The opencode-audit plugin blocked this {tool} call: its arguments match the pattern "
            f"{pattern!r} that the user set in {BLOCK_VARIABLE}. Do not retry it with the same "
            "arguments; choose another way or ask the user."
        )
    write_entry({**_entry("blocked", tool, session_id, call_id, args), "error": message})
    raise ToolError(message)


# trylast: log the result as the model will get it, after other plugins changed it
@hookimpl(trylast=True)
def tool_execute_after(
    tool: str, session_id: str, call_id: str | None, args: dict[str, Any], result: ToolResult
) -> None:
    """Append one JSON line for the finished call."""
    entry = _entry("completed", tool, session_id, call_id, args)
    entry["title"] = result.title
    entry["outputBytes"] = len(result.output.encode("utf-8"))
    entry["attachments"] = len(result.attachments)
    write_entry(entry)
