"""``opencode tools new NAME``: write a tool file from a template that runs as written."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .common import EXIT_USAGE, err, fail, friendly_errors, make_project

#: A tool name: what a model calls it, and the file's name (``NAME.py``).
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")

TEMPLATE = '''\
"""The __NAME__ tool, written by `opencode tools new __NAME__`: make it yours.

The tool called `default` takes the file's name, so the model is offered `__NAME__`;
another tool in this file, say `def summary(...)`, would be `__NAME___summary`.
The docstring (or a `__NAME__.txt` file beside this one) is the description the
model reads; the typed parameters, with their `Field(description=...)`, are the
JSON Schema it fills in. `ctx` is given by the host and never shown to the model.

    opencode tools run __NAME__ text="hello world" times:=2  # as a model would call it
    opencode tools inspect __NAME__       # the description and JSON Schema it gets
    opencode tools watch                  # each save shows what changed
"""

from typing import Literal

from opencode_cli import Field, ToolContext, tool


@tool
async def default(
    ctx: ToolContext,
    text: str = Field(description="The text to repeat."),
    times: int = Field(default=1, ge=1, le=10, description="How many times (1 to 10)."),
    style: Literal["plain", "upper"] = Field("plain", description="upper: capitals."),
) -> dict:
    """Repeat a piece of text a few times.

    Tell the model here what the tool does, when to use it, and what it gives back.
    """
    # Live progress: a host shows it while the call runs (the CLI, on a terminal).
    ctx.metadata(title=f"repeating {len(text)} characters", metadata={"times": times})
    # A permission check, judged by the agent's rules: allowed unless opencode.toml
    # says [permission] __NAME__ = "ask" (or "deny"); a refusal raises an error whose
    # text the model reads. In a plain `def` tool (run in a thread), drop the `await`.
    await ctx.ask("__NAME__", [text], always=["*"])
    line = text.upper() if style == "upper" else text
    return {
        "title": f"{times} line(s)",
        "output": "\\n".join([line] * times),
        "metadata": {"times": times, "style": style},
    }
'''


def render(name: str) -> str:
    """The template for tool ``name``."""
    return TEMPLATE.replace("__NAME__", name)


def _config_dir(project: Any, global_: bool) -> Path:
    """Where the file goes: the global config directory, or the nearest project ``.opencode``."""
    from .. import paths

    if global_:
        return paths.config_dir(project.env)
    top = project.root
    for folder in (project.directory, *project.directory.parents):
        if (folder / ".opencode").is_dir():
            return folder / ".opencode"
        if folder == top:
            break
    return top / ".opencode"


def new_tool(name: str, global_: bool) -> None:
    """Write ``<config dir>/tool/NAME.py``; never overwrite; print the path and how to run it."""
    if not NAME_PATTERN.fullmatch(name):
        suggestion = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")[:64]
        hint = f" (e.g. {suggestion})" if suggestion and NAME_PATTERN.fullmatch(suggestion) else ""
        fail(
            f"error: {name!r} is not a tool name: use letters, digits and underscores, starting with a "
            f"letter, at most 64 characters{hint}",
            EXIT_USAGE,
        )
    with friendly_errors():
        project = make_project()
        folder = _config_dir(project, global_)
        subfolders = [folder / sub for sub in ("tool", "tools")]
        for existing in (sub / f"{name}.py" for sub in subfolders):
            if existing.exists():
                fail(
                    f"error: {existing} already exists; not overwriting it (edit it, delete it, or choose "
                    "another name)",
                    EXIT_USAGE,
                )
        target_dir = next((sub for sub in subfolders if sub.is_dir()), subfolders[0])
        target = target_dir / f"{name}.py"
        previous = project.registry.entries.get(name)
        target_dir.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as handle:  # "x": never replace a file made meanwhile
            handle.write(render(name))
    shown = os.path.relpath(target) if target.is_relative_to(Path.cwd()) else str(target)
    print(f"created {shown}")
    if previous is not None:
        if previous.source.kind == "builtin":
            err(f"note: it replaces the built-in tool {name}")
        else:
            err(
                f"note: a tool {name} already comes from {previous.source.describe()}; of two tool files "
                "with one name, the one in the later config directory wins"
            )
    if not global_ and project.flags.disable_project_config:
        err("note: OPENCODE_DISABLE_PROJECT_CONFIG is set, so project tool files are not loaded")
    print(f'try it:  opencode tools run {name} text="hello world" times:=2')
    print(f"         opencode tools inspect {name}   (the schema the model gets)")
