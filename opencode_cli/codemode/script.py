"""One ``execute`` call: the script's tools, its inner calls through the session, and what the model reads.

Each inner call is run by :meth:`~opencode_cli.session.Session.execute_inner`, the path of a direct call:
``tool_execute_before``, the tool's wrap (the MCP tool asks the permission keyed by its flat id with the
pattern ``*``, and calls the server within its timeout), ``tool_execute_after``. Its call id is the
``execute`` call's id, ``/`` and the call's number. A failed call raises in the script (a denial as
``PermissionError``, invalid arguments as ``ValueError``, anything else as ``RuntimeError``), so the script
may catch it. ``metadata()`` streams ``{toolCalls: [{tool, status, input}]}`` as calls start and end.

Output (builtin-tools §15.3): a string result as it is, anything else as JSON indented by two spaces
(``None`` is ``null``), then ``\\n\\nLogs:\\n`` and what the script printed. Images and files that the
tools return are attachments of the ``execute`` result; the script sees ``[1 image attached to the
result]`` in the tool's text instead.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentsError, PermissionFailure, ToolError
from ..results import Attachment, ToolResult
from .catalog import Binding

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..project import Project
    from ..session import Session
    from .sandbox import Limits

TITLE = "execute"
CANCELLED = "Execution cancelled."


def bindings_for(project: Project, session: Session) -> list[Binding]:
    """The tools ``session``'s scripts may call: the MCP tools its agent and rules can see, and, with
    ``[experimental] code_mode_builtins``, the read-only built-ins."""
    from ..permission import merge
    from ..policy import code_mode_builtins, code_mode_tools
    from .catalog import bindings_of

    registry = project.registry
    ruleset = merge(session.agent.permission, session.rules)
    switches = project.config.get("tools")
    switches = switches if isinstance(switches, Mapping) else None
    mcp = code_mode_tools(registry, ruleset, config_switches=switches)
    builtins = (
        code_mode_builtins(registry, ruleset, config_switches=switches)
        if project.config.boolean("experimental.code_mode_builtins")
        else []
    )
    return bindings_of(mcp, builtins)


class _Calls:
    """The inner calls of one script, reported live through ``ctx.metadata``."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.entries: list[dict[str, Any]] = []

    def start(self, tool: str, arguments: dict[str, Any]) -> int:
        self.entries.append({"tool": tool, "status": "running", "input": _plain(arguments)})
        self.report()
        return len(self.entries)

    def finish(self, number: int, status: str) -> None:
        self.entries[number - 1]["status"] = status
        self.report()

    def metadata(self) -> dict[str, Any]:
        return {"toolCalls": [dict(entry) for entry in self.entries]}

    def report(self) -> None:
        self.ctx.metadata(TITLE, self.metadata())


async def run_script(code: str, ctx: ToolContext, limits: Limits | None = None) -> ToolResult:
    """Run ``code`` for the ``execute`` call of ``ctx``: the result as the model sees it. A script that
    fails, or goes over a limit, raises :class:`ToolError` with the message, hints and logs."""
    from .sandbox import SERVICE_KEY, Cancelled, LimitExceeded, Limits, Sandbox, ScriptError, tools_module

    project, session = ctx.project, ctx.session
    limits = limits or Limits.from_config(project.config)
    bindings = bindings_for(project, session)
    if not bindings:
        raise ToolError("No MCP tools are available to the script: execute needs at least one.")
    by_path = {binding.path: binding for binding in bindings}
    calls = _Calls(ctx)
    attachments: list[Attachment] = []
    outer = ctx.call_id or "execute"

    async def call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        binding = by_path.get(name)
        if binding is None:
            raise AttributeError(f"{name} is not a tool of this script (see execute's description)")
        arguments = binding.arguments(args, kwargs)
        number = calls.start(binding.tool_id, arguments)
        try:
            result = await session.execute_inner(
                binding.tool_id, arguments, call_id=f"{outer}/{number}", abort=ctx.abort
            )
        except Exception as error:
            calls.finish(number, "error")
            raise _for_script(error) from None
        calls.finish(number, "completed")
        attachments.extend(result.attachments)
        return _value(binding, result)

    sandbox = await project.services.get(SERVICE_KEY, Sandbox)
    calls.report()
    try:
        run = await sandbox.run(code, tools_module(bindings), call, limits, ctx.abort)
    except Cancelled:
        return ToolResult(CANCELLED, TITLE, calls.metadata(), attachments)
    except (ScriptError, LimitExceeded) as error:
        raise ToolError(_failure(error, getattr(error, "logs", ""))) from None
    if isinstance(run.value, str) and UNAWAITED.fullmatch(run.value):  # how Monty gives back a coroutine
        raise ToolError(
            f"The script returned {run.value}, a tool call never run. {AWAIT_HINT}" + _logs(run.logs)
        )
    try:
        output = render(run.value)
    except RecursionError:
        too_deep = "The script's result is nested too deeply to be shown as JSON."
        raise ToolError(too_deep + _logs(run.logs)) from None
    if len(output.encode("utf-8", "replace")) > limits.output_kb * 1024:
        raise ToolError(
            f"Execution stopped: the script's result is larger than {limits.output_kb} KB (the output limit)."
            + _logs(run.logs)
        )
    return ToolResult(output + _logs(run.logs), TITLE, calls.metadata(), attachments)


# -- values across the boundary --------------------------------------------------------------------------


def _marker(attachments: list[Attachment]) -> str:
    images = sum(1 for a in attachments if a.mime.startswith("image/"))
    files = len(attachments) - images
    said = []
    if images:
        said.append(f"{images} image{'s' if images != 1 else ''}")
    if files:
        said.append(f"{files} file{'s' if files != 1 else ''}")
    return f"[{' and '.join(said)} attached to the result]"


def _value(binding: Binding, result: ToolResult) -> Any:
    """What the script gets from a call: for a tool with an output schema, the value that schema describes
    (the structured content, else the text decoded as JSON: see :mod:`.catalog`), else the text (with a
    marker for its attachments)."""
    if binding.returns_json and isinstance(result.metadata.get("structuredContent"), dict):
        return result.metadata["structuredContent"]
    if binding.returns_json and not result.metadata.get("truncated"):
        try:
            return json.loads(result.output)
        except ValueError:
            pass
    text = result.output
    if result.attachments:
        marker = _marker(result.attachments)
        text = f"{text}\n\n{marker}" if text else marker
    return text


def _for_script(error: Exception) -> Exception:
    """The exception a failed call raises in the script."""
    from ..errors import error_text

    text = error_text(error)
    if isinstance(error, PermissionFailure):
        return PermissionError(text)
    if isinstance(error, InvalidArgumentsError):
        return ValueError(text)
    if isinstance(error, TypeError | AttributeError):
        return error
    return RuntimeError(text)


def _plain(value: Any) -> Any:
    """``value`` as JSON data: tuples and sets as lists, bytes as text, non-finite floats as ``null``,
    objects of the script as their attributes; anything else as its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    attributes = getattr(value, "attributes", None)
    if isinstance(attributes, Mapping):
        return _plain(attributes)
    return str(value)


def render(value: Any) -> str:
    """The script's value as the model reads it: a string as it is, anything else as 2-space JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), indent=2, ensure_ascii=False)


def _logs(logs: str) -> str:
    text = logs.rstrip("\n")
    return f"\n\nLogs:\n{text}" if text else ""


# -- failures --------------------------------------------------------------------------------------------


_ALWAYS = "Fix the script and run it again; the tool calls it already made are not undone."
#: A script's value that is a tool call it did not await, as the sandbox returns it.
UNAWAITED = re.compile(r"<coroutine external_future\(\d+\)>")
#: For a value that is a tool call not awaited.
AWAIT_HINT = "A tool call returns a coroutine: `await` it (`await tools.<server>.<tool>(...)`)."


def hints(error: Exception) -> list[str]:
    """What to try next, for a script's error."""
    from .sandbox import LimitExceeded, ScriptError

    found: list[str] = []
    if isinstance(error, LimitExceeded):
        if error.kind == "time":
            found.append("Check that every loop ends; gather independent calls with asyncio.gather.")
        elif error.kind == "tool_calls":
            found.append("Call fewer tools per script, or split the work over several execute calls.")
        elif error.kind in ("output", "memory"):
            found.append("Keep less data: filter and summarise inside the script, return only what matters.")
        return found
    if not isinstance(error, ScriptError):
        return [_ALWAYS]
    if "coroutine" in error.message:
        found.append(AWAIT_HINT)
    if error.kind == "syntax":
        found.append("Scripts are Python; top-level await and return are allowed.")
    elif error.type_name in ("ModuleNotFoundError", "ImportError"):
        found.append(
            "Only some standard modules can be imported (asyncio, json, re, math, datetime…); "
            "there is no file system, network or process access."
        )
    elif error.type_name in ("PermissionError", "OSError", "FileNotFoundError"):
        found.append(
            "The sandbox has no file system or network: reach them through the tools. A tool call that "
            "raised PermissionError was refused by the permission rules or the user; catch it to go on."
        )
    elif error.type_name in ("NameError", "AttributeError"):
        found.append("Call tools as `await tools.<server>.<tool>(...)`, as listed in execute's description.")
    elif error.type_name == "TypeError":
        found.append("Check the call against the tool's signature (keyword arguments by parameter name).")
    found.append(_ALWAYS)
    return found


def _failure(error: Exception, logs: str) -> str:
    """The error text of a failed script: what happened and where, hints, logs."""
    from .sandbox import ScriptError

    if isinstance(error, ScriptError):
        where = f" (line {error.line})" if error.line is not None else ""
        lines = [f"Script failed: {error.type_name}: {error.message}{where}"]
        if error.source:
            lines.append(f"    {error.source.strip()}")
    else:
        lines = [str(error)]
    found = hints(error)
    if found:
        lines += ["", "Hints:", *(f"- {hint}" for hint in found)]
    return "\n".join(lines) + _logs(logs)
