"""opencode-demo-tools: an example plugin package that adds seven tools to opencode.

The entry point ``demo-tools = "opencode_demo_tools"`` (see ``pyproject.toml``) makes opencode load this
module; the one hook below registers the tools. Four are functions, in :mod:`opencode_demo_tools.tools`;
three are the methods of a toolbox, in :mod:`opencode_demo_tools.notes`. They are imported only when a
project's tool registry is built, so loading the plugin stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opencode_cli import hookimpl

if TYPE_CHECKING:
    from opencode_cli.plugin import RegisterTool

__version__ = "0.1.0"


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Add the demo tools (a hook may take any subset of its arguments: here only ``register``)."""
    from . import notes, tools

    for found in tools.ALL:
        register(found)
    register(notes.DemoNotes)  # a toolbox class: each project gets an instance, set up on first use
