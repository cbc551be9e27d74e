"""The built-in tools, registered as an ordinary plugin of our own framework.

Each tool lives in its own module with a ``.txt`` description beside it and is declared with
:func:`~opencode_cli.contract.define`, so listing tools reads the description file but imports no tool
module. Tools are registered in OpenCode's order (core spec §3.1); a tool joins the list only once it
really works.
"""

from __future__ import annotations

from pathlib import Path

from ..contract import define
from ..flags import Flags
from ..hookspecs import hookimpl
from ..registry import RegisterTool
from . import _bash_prompt, _websearch_prompt

HERE = Path(__file__).parent


def _builtin(tool_id: str) -> object:
    return define(tool_id, f"opencode_cli.tools.{tool_id}:init", description=HERE / f"{tool_id}.txt")


@hookimpl
def register_tools(register: RegisterTool, flags: Flags) -> None:
    """Register the built-in tools in OpenCode's order."""
    register(_builtin("invalid"))
    register(define("bash", "opencode_cli.tools.bash:init", description=_bash_prompt.describer(flags)))
    register(_builtin("read"))
    register(_builtin("glob"))
    register(_builtin("grep"))
    register(_builtin("edit"))
    register(_builtin("write"))
    register(_builtin("webfetch"))
    register(define("websearch", "opencode_cli.tools.websearch:init", description=_websearch_prompt.describe))
    register(_builtin("apply_patch"))
