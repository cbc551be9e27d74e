"""``todowrite``: replace the session's todo list (builtin spec §12).

The list lives in the project's sqlite store (``<data>/opencode.db``, table ``todo``), keyed by the
session id, so a later process working on the same session (``opencode tools run --session S``) sees it,
and ``opencode todos show --session S`` prints it. The store is found from the call's environment, the
same way :attr:`opencode_cli.project.Project.store` finds it.

As upstream, ``status`` and ``priority`` are free strings: the values the descriptions name are not
enforced. Extra keys of an item (an old-style ``id``) are dropped.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import Field

from .. import paths
from ..context import ToolContext
from ..results import ToolResult
from ._arguments import Arguments


class TodoItem(Arguments):
    # one entry of the list (no docstring: it would become the description of the schema's items)

    content: str = Field(description="What has to be done, in a few words")
    status: str = Field(description="Where the task stands: pending, in_progress, completed, cancelled")
    priority: str = Field(description="How important the task is: high, medium, low")


class TodoWriteParameters(Arguments):
    """Arguments of the todowrite tool."""

    todos: list[TodoItem] = Field(description="The complete, updated todo list")


def render(todos: list[dict[str, str]]) -> str:
    """The list as the model sees it: JSON indented by two spaces, non-ASCII text kept as is."""
    return json.dumps(todos, indent=2, ensure_ascii=False)


def title(todos: list[dict[str, str]]) -> str:
    """``"{n} todos"``, counting the items that are not completed (cancelled ones count, as upstream)."""
    return f"{sum(1 for item in todos if item.get('status') != 'completed')} todos"


def _store(ctx: ToolContext) -> Any:
    from ..store import Store

    return Store(paths.data_dir(ctx.env) / "opencode.db")


async def execute(params: TodoWriteParameters, ctx: ToolContext) -> ToolResult:
    """Ask ``todowrite``, then store and echo the new list."""
    await ctx.ask("todowrite", ["*"], always=["*"], metadata={})
    todos = [item.model_dump() for item in params.todos]
    await asyncio.to_thread(_store(ctx).set_todos, ctx.session_id, todos)
    return ToolResult(title=title(todos), output=render(todos), metadata={"todos": todos})


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": TodoWriteParameters, "execute": execute}
