"""Task-augmented tool calls (MCP tasks, protocol revision 2025-11-25): for a tool that declares
``execution.taskSupport = "required"`` on a server that offers ``tasks.requests.tools.call``.

The call is sent as ``tools/call`` with a ``task`` field; the server answers at once with the task
(``CreateTaskResult``). The task is then polled with ``tasks/get`` at the interval the server asks for
(each status reported through ``on_status``), and its result fetched with ``tasks/result`` once the task
has ended, or once it needs input (the server delivers its queued requests, such as an elicitation,
while that request is open, and answers it when the task ends). An abort (the call's task cancelled)
sends ``tasks/cancel`` before the cancellation goes on.

The messages are the SDK's types (``mcp.types``); they go through the session's dispatcher, because the
SDK 2.3 client validates every ``tools/call`` answer as a ``CallToolResult``, which a
``CreateTaskResult`` is not.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

#: Seconds between two polls when the server names no interval.
DEFAULT_POLL = 0.5
#: The shortest and longest poll interval honoured (seconds): a server cannot make us spin or stall.
POLL_BOUNDS = (0.05, 5.0)
#: Seconds a ``tasks/cancel`` may take on an abort.
CANCEL_TIMEOUT = 2.0
#: Task statuses after which nothing changes.
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def required(tool: Any, capabilities: Any) -> bool:
    """Whether ``tool`` (a listed ``Tool``) must be called as a task; raises ``ToolError`` when it
    must and the server does not offer task-augmented calls."""
    execution = getattr(tool, "execution", None)
    if getattr(execution, "task_support", None) != "required":
        return False
    tasks = getattr(capabilities, "tasks", None)
    requests = getattr(tasks, "requests", None)
    if getattr(getattr(requests, "tools", None), "call", None) is None:
        from ..errors import ToolError

        raise ToolError(
            f'tool "{tool.name}" can only run as a task, and its server does not offer task-augmented calls'
        )
    return True


async def _send(session: Any, request: Any, timeout: float | None) -> dict[str, Any]:
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    dispatcher = session._dispatcher  # see the module docstring
    options = {"timeout": timeout} if timeout is not None else {}
    return await dispatcher.send_raw_request(data["method"], data.get("params"), options)


async def call_as_task(
    session: Any,
    name: str,
    arguments: dict[str, Any],
    timeout: float,
    on_status: Callable[[str, str | None], None] | None = None,
) -> Any:
    """Run tool ``name`` as a task on ``session`` (an SDK ``ClientSession``) and return its
    ``CallToolResult``; each request is bounded by ``timeout`` seconds, the task by nothing but the
    abort (cancelling the caller cancels the task)."""
    from mcp import types

    created = types.CreateTaskResult.model_validate(
        await _send(
            session,
            types.CallToolRequest(
                params=types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata())
            ),
            timeout,
        ),
        by_name=False,
    )
    task: Any = created.task
    task_id = task.task_id
    try:
        while True:
            if on_status is not None:
                on_status(task.status, task.status_message)
            if task.status in TERMINAL or task.status == "input_required":
                break
            low, high = POLL_BOUNDS
            wait = (task.poll_interval / 1000) if task.poll_interval else DEFAULT_POLL
            await asyncio.sleep(min(max(wait, low), high))
            task = types.GetTaskResult.model_validate(
                await _send(
                    session, types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), timeout
                ),
                by_name=False,
            )
        # tasks/result waits for the end (a task needing input gets its answers meanwhile)
        payload = await _send(
            session,
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
            None if task.status == "input_required" else timeout,
        )
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            cancel = _send(
                session,
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
                CANCEL_TIMEOUT,
            )
            await asyncio.wait_for(asyncio.shield(cancel), CANCEL_TIMEOUT)
        raise
    return types.CallToolResult.model_validate(payload, by_name=False)
