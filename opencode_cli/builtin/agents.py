"""The ``agents`` built-in plugin: the tools an agent uses to work with its user and its subagents
(question, task, todowrite, skill, plan_exit)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from ..tools import HERE, _skill_prompt, builtin

if TYPE_CHECKING:
    from ..flags import Flags
    from ..project import Project
    from ..registry import RegisterTool

#: Said in task's description when background subagents are switched on: we run every task in the
#: foreground (builtin-tools §9 describes background=true; it is not implemented here).
_NO_BACKGROUND = (
    "\n\nBackground subagents are switched on, but opencode-tools runs every task in the foreground: do "
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
    """Register the agent tools."""
    register(builtin("question"))
    background = flags.experimental_background_subagents
    register(
        builtin(
            "task",
            _task_init(flags),
            description=_task_describer(flags),
            recorded="task@background" if background else "task",
            plain=False,
        )
    )
    register(builtin("todowrite"))
    register(
        builtin("skill", _skill_init(project), description=_skill_prompt.describer(project), plain=False)
    )
    register(builtin("plan_exit"))
