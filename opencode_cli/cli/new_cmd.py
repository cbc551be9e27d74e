"""``opencode tools new NAME`` and ``opencode plugins new NAME``: write a tool file, or a plugin package,
from a template that runs (and passes its tests) as written."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .common import EXIT_USAGE, err, fail, friendly_errors, make_project

#: A tool name: what a model calls it, and the file's name (``NAME.py``).
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
#: A plugin name: the entry point's, and the package's (``opencode_NAME``); its tools' ids start with it.
PLUGIN_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")

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


def _check_name(name: str, pattern: re.Pattern[str], what: str, rule: str) -> None:
    """Exit 2 unless ``name`` matches ``pattern``, suggesting a name that does."""
    if pattern.fullmatch(name):
        return
    suggestion = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")[:64]
    if pattern is PLUGIN_NAME_PATTERN:
        suggestion = suggestion.lower()[:40]
    hint = f" (e.g. {suggestion})" if suggestion and pattern.fullmatch(suggestion) else ""
    fail(f"error: {name!r} is not {what}: {rule}{hint}", EXIT_USAGE)


def _write_new(target: Path, text: str) -> None:
    """Write a new file (its folders made); ``"x"``: never replace a file made meanwhile."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "x", encoding="utf-8") as handle:
        handle.write(text)


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when it is under it."""
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def new_tool(name: str, global_: bool) -> None:
    """Write ``<config dir>/tool/NAME.py``; never overwrite; print the path and how to run it."""
    _check_name(
        name,
        NAME_PATTERN,
        "a tool name",
        "use letters, digits and underscores, starting with a letter, at most 64 characters",
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
        _write_new(target, render(name))
    print(f"created {_shown(target)}")
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


def new_plugin(name: str) -> None:
    """Write the package of plugin ``name`` into ``./NAME`` (:mod:`.plugin_template`); never into an
    existing directory; print what was written and what to run next."""
    from ..compat import series
    from .plugin_template import render as render_plugin

    _check_name(
        name,
        PLUGIN_NAME_PATTERN,
        "a plugin name",
        "use lowercase letters, digits and underscores, "
        "starting with a letter, at most 40 characters (it names the package opencode_NAME and the tools)",
    )
    folder = Path(name).absolute()
    if folder.exists():
        fail(f"error: {_shown(folder)} already exists; not writing into it", EXIT_USAGE)
    import shutil
    import tempfile

    with friendly_errors():  # written aside, then renamed into place: all of it or nothing
        building = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=folder.parent))
        try:
            for path, text in render_plugin(name, series()).items():
                _write_new(building / path, text)
            building.chmod(0o777 & ~_umask())
            building.rename(folder)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    print(f"created {_shown(folder)}/ (the package opencode-{name.replace('_', '-')})")
    print(f"try it:  pip install -e {name} && pytest {name}")
    print(f"         opencode tools run {name}_greet name=Ada")


def _umask() -> int:
    """The process's umask (a directory made by ``mkdtemp`` is private; the package should not be)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
