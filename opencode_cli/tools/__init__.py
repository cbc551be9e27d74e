"""The built-in tools, registered as an ordinary plugin of our own framework.

Each tool lives in its own module with a ``.txt`` description beside it and is declared with
:func:`~opencode_cli.contract.define`, so listing tools reads the description file but imports no tool
module. Tools are registered in OpenCode's order (core spec §3.1); a tool joins the list only once it
really works.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import define
from ..flags import Flags
from ..hookspecs import hookimpl
from ..registry import RegisterTool
from . import _bash_prompt, _skill_prompt, _websearch_prompt

if TYPE_CHECKING:
    from ..project import Project

HERE = Path(__file__).parent


def _builtin(tool_id: str) -> object:
    return define(tool_id, f"opencode_cli.tools.{tool_id}:init", description=HERE / f"{tool_id}.txt")


def _question_gate(flags: Flags) -> str | None:
    if flags.question_tool_enabled:
        return None
    return (
        f"offered only to the app, cli and desktop clients (OPENCODE_CLIENT is {flags.client!r}) "
        "or with OPENCODE_ENABLE_QUESTION_TOOL"
    )


def _plan_exit_gate(flags: Flags) -> str | None:
    if not flags.experimental_plan_mode:
        return "experimental plan mode is off (OPENCODE_EXPERIMENTAL_PLAN_MODE)"
    if flags.client != "cli":
        return f"offered only to the cli client in plan mode (OPENCODE_CLIENT is {flags.client!r})"
    return None


def _skill_init(project: Project | None) -> Callable[[], Any]:
    """The skill tool's init, bound to the project whose skills it loads (imported on first use)."""
    return lambda: importlib.import_module("opencode_cli.tools.skill").init(project)


@hookimpl
def register_tools(register: RegisterTool, flags: Flags, project: Project | None) -> None:
    """Register the built-in tools in OpenCode's order."""
    register(_builtin("invalid"))
    register(_builtin("question"), gate=_question_gate(flags))
    register(define("bash", "opencode_cli.tools.bash:init", description=_bash_prompt.describer(flags)))
    register(_builtin("read"))
    register(_builtin("glob"))
    register(_builtin("grep"))
    register(_builtin("edit"))
    register(_builtin("write"))
    register(_builtin("webfetch"))
    register(_builtin("todowrite"))
    register(define("websearch", "opencode_cli.tools.websearch:init", description=_websearch_prompt.describe))
    register(define("skill", _skill_init(project), description=_skill_prompt.describer(project)))
    register(_builtin("apply_patch"))
    register(_builtin("plan_exit"), gate=_plan_exit_gate(flags))
