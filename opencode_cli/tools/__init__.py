"""The built-in tools, registered as an ordinary plugin of our own framework.

Each tool lives in its own module with a ``.txt`` description beside it and is declared with
:func:`~opencode_cli.contract.define`, so listing tools reads the description file but imports no tool
module. Tools are registered in OpenCode's order (core spec §3.1); a tool joins the list only once it
really works. Which of them a model is offered (``question`` only for some clients, ``plan_exit`` only in
plan mode…) is decided by the rules of :mod:`opencode_cli.policy`. The plugin also gives the innermost
``tool_execute``: running a tool's wrap.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import define
from ..flags import Flags
from ..hookspecs import hookimpl
from ..registry import RegisterTool
from . import _bash_prompt, _schemas, _skill_prompt, _websearch_prompt

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..contract import Tool, ToolResult
    from ..project import Project

HERE = Path(__file__).parent


def _builtin(tool_id: str) -> object:
    return define(
        tool_id,
        f"opencode_cli.tools.{tool_id}:init",
        description=HERE / f"{tool_id}.txt",
        schema=_schemas.recorded(tool_id),
        plain=_schemas.plain(tool_id),
    )


#: Said in task's description when background subagents are switched on: we run every task in the
#: foreground (builtin-tools §9 describes background=true; it is not implemented here).
_NO_BACKGROUND = (
    "\n\nBackground subagents are switched on, but opencode-cli runs every task in the foreground: do "
    "not set background=true."
)


def _task_describer(flags: Flags) -> Callable[[], str]:
    """task's description (read only when listed): the text file, and a word on background subagents."""

    def describe() -> str:
        text = (HERE / "task.txt").read_text(encoding="utf-8")
        return text.rstrip("\n") + _NO_BACKGROUND + "\n" if flags.experimental_background_subagents else text

    return describe


def _task_init(flags: Flags) -> Callable[[], Any]:
    """The task tool's init: its parameters depend on the background-subagents flag."""
    return lambda: importlib.import_module("opencode_cli.tools.task").init(flags)


def _skill_init(project: Project | None) -> Callable[[], Any]:
    """The skill tool's init, bound to the project whose skills it loads (imported on first use)."""
    return lambda: importlib.import_module("opencode_cli.tools.skill").init(project)


@hookimpl
def register_tools(register: RegisterTool, flags: Flags, project: Project | None) -> None:
    """Register the built-in tools in OpenCode's order."""
    register(_builtin("invalid"))
    register(_builtin("question"))
    register(
        define(
            "bash",
            "opencode_cli.tools.bash:init",
            description=_bash_prompt.describer(
                flags,
                project.env if project is not None else None,
                project.directory if project is not None else None,
            ),
            schema=_schemas.recorded("bash"),
            plain=_schemas.plain("bash"),
        )
    )
    register(_builtin("read"))
    register(_builtin("glob"))
    register(_builtin("grep"))
    register(_builtin("edit"))
    register(_builtin("write"))
    task_variant = "task@background" if flags.experimental_background_subagents else "task"
    register(
        define(
            "task",
            _task_init(flags),
            description=_task_describer(flags),
            schema=_schemas.recorded(task_variant),
        )
    )
    register(_builtin("webfetch"))
    register(_builtin("todowrite"))
    register(
        define(
            "websearch",
            "opencode_cli.tools.websearch:init",
            description=_websearch_prompt.describe,
            schema=_schemas.recorded("websearch"),
        )
    )
    register(
        define(
            "skill",
            _skill_init(project),
            description=_skill_prompt.describer(project),
            schema=_schemas.recorded("skill"),
        )
    )
    register(_builtin("apply_patch"))
    register(_builtin("execute"))
    register(_builtin("lsp"))
    register(_builtin("plan_exit"))


@hookimpl
def register_providers(register: Callable[[Any], None], project: Project) -> None:
    """Register the provider kinds for OpenAI-compatible endpoints (with the built-in ``openai``) and for
    Anthropic and Google (with ``anthropic`` and ``google``); their modules import no SDK: it is imported
    when a model is called."""
    from ..models.anthropic_provider import ANTHROPIC_KIND
    from ..models.google_provider import GOOGLE_KIND
    from ..models.openai_compatible import OPENAI_COMPATIBLE

    register(OPENAI_COMPATIBLE)
    register(ANTHROPIC_KIND)
    register(GOOGLE_KIND)


@hookimpl(trylast=True)
def tool_execute(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Awaitable[ToolResult]:
    """Run the tool's wrap (validate, execute, truncate): the innermost ``tool_execute``."""
    return tool.run(args, ctx)
