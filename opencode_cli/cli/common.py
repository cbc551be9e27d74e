"""Helpers shared by the CLI commands: building the project, printing, and turning errors into exit codes."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from ..errors import ConfigError, OpencodeError, UnknownToolError

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

T = TypeVar("T")


def unasked_in(project: Any, permission: str) -> str | None:
    """Why a rule for ``permission`` never applies in ``project``: no registered tool (nor the core) asks
    it, with the close matches (:func:`~opencode_cli.permission.unasked`); ``None`` when one does. A
    configured MCP server's ``NAME_`` counts, as do its resource tools."""
    from ..mcp.source import sanitize
    from ..permission import unasked

    tool_ids = list(project.registry.entries)
    prefixes = [f"{sanitize(name)}_" for name in project.generation.mcp_servers]
    if prefixes:
        from ..mcp.resources import LIST_RESOURCE_TEMPLATES, LIST_RESOURCES, READ_RESOURCE

        tool_ids += [LIST_RESOURCES, LIST_RESOURCE_TEMPLATES, READ_RESOURCE]
    return unasked(permission, tool_ids, prefixes)


def err(message: str) -> None:
    """Print one diagnostic line to stderr."""
    print(message, file=sys.stderr, flush=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``message`` to stderr and exit with ``code``."""
    err(message)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """Pretty JSON on stdout, keys in insertion order (non-ASCII escaped if the text holds a lone
    surrogate, which stdout cannot encode)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if not _encodable(text):
        text = json.dumps(value, indent=2, default=str)
    sys.stdout.write(text + "\n")


def write_out(text: str) -> None:
    """``text`` on stdout, ending with a newline; a lone surrogate is shown as its escape."""
    if not _encodable(text):
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn our configuration and lookup errors into a one-line message and exit code 2."""
    try:
        yield
    except UnknownToolError as error:
        fail(f"error: {error}")
    except ConfigError as error:
        fail(f"error: {error}")
    except OpencodeError as error:
        fail(f"error: {error}", EXIT_TOOL_ERROR)
    except typer.Exit:
        raise
    except Exception as error:
        if os.environ.get("OPENCODE_DEBUG"):
            raise
        from ..plugins import describe_exception

        fail(f"error: {describe_exception(error)} (set OPENCODE_DEBUG=1 for the traceback)", EXIT_TOOL_ERROR)


def make_project(directory: Path | None = None, warn: Callable[[str], None] | None = None) -> Any:
    """The :class:`~opencode_cli.project.Project` for the current directory (or ``directory``); it is
    closed when the command ends (whatever it started is stopped), also when the command fails."""
    import atexit

    from ..project import Project

    project = Project(directory, warn=warn or (lambda message: err(f"warning: {message}")))
    atexit.register(project.close)
    return project


def model_of(project: Any, text: str | None) -> Any:
    """The model ``text`` names (or the config's ``model``), as :meth:`Project.model` reads it; a warning
    on stderr, with the close matches, when no rule recognises it (see :meth:`ModelRef.unrecognised`)."""
    model = project.model(text)
    if model is None:
        return None
    tables = project.generation.providers
    plugins = project.plugins
    registered = [
        name
        for name in plugins.implementers("register_providers")
        if getattr(plugins.record_for(name), "kind", "builtin") != "builtin"
    ]
    if model.provider is not None and registered:
        return model  # a plugin's providers are known only once they are asked for (opencode run)
    models = [model_id for table in tables.values() for model_id in table.models]
    problem = model.unrecognised(tables, models)
    if problem is not None:
        err(f"warning: {problem}")
    return model


def collect_from_now_on() -> None:
    """The command has started and its work may go on for a while: turn the cyclic garbage collector back
    on (``main`` starts with it off), with everything built so far frozen out of its sweeps."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


#: Seconds a SIGTERM'd call has to answer its abort before it is cancelled.
TERM_GRACE = 3.0


#: The built-ins whose calls may start without an event loop (:func:`run_in_project` with ``loopless``):
#: whatever they await is loop-optional (``loops.offload``, ``loops.need_loop`` before a real wait).
LOOPLESS_TOOLS = frozenset({"read", "glob", "grep", "edit", "write", "apply_patch"})

#: The hooks around a call: a plugin implementing one may need a loop, so its calls get one from the start.
CALL_HOOKS = ("tool_execute", "tool_execute_before", "tool_execute_after")


def loopless(project: Any, tool_ids: Sequence[str]) -> bool:
    """Whether calls of ``tool_ids`` can start without an event loop: each is a built-in of
    :data:`LOOPLESS_TOOLS` (not shadowed by a plugin's or a file's tool), no MCP server is configured, and
    no plugin but the built-ins hooks the calls."""
    if not tool_ids or project.generation.mcp_servers:
        return False
    entries = project.registry.entries
    for tool_id in tool_ids:
        entry = entries.get(tool_id)
        if tool_id not in LOOPLESS_TOOLS or entry is None or getattr(entry.source, "kind", None) != "builtin":
            return False
    plugins = project.plugins
    return not any(
        getattr(plugins.record_for(name), "kind", "builtin") != "builtin"
        for hook in CALL_HOOKS
        for name in plugins.implementers(hook)
    )


class _Terminated(BaseException):
    """Raised by the SIGTERM handler of a call running without an event loop."""


def run_in_project(
    project: Any, work: Callable[[], Awaitable[T]], abort: Any = None, *, without_loop: bool = False
) -> T:
    """Run ``work()`` on a new event loop inside ``async with project``, so every service it starts is
    stopped on the way out: on success, on an error, on Ctrl-C (then the command ends with
    ``interrupted``, exit 130) and on SIGTERM (``abort`` is signalled, and the work is cancelled if it has
    not ended within :data:`TERM_GRACE` seconds: ``terminated``, exit 143).

    ``without_loop`` (see :func:`loopless`): the work starts with no event loop and no asyncio
    (:func:`opencode_cli.drive.drive`) and moves to a loop only if it has to wait; until then SIGTERM
    signals ``abort`` and ends the work at once (``terminated``, exit 143)."""
    import signal

    terminated = False

    def on_loop() -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def terminate() -> None:
            nonlocal terminated
            terminated = True
            if abort is not None:
                abort.abort("terminated")
            if task is not None:
                loop.call_later(0 if abort is None else TERM_GRACE, task.cancel)

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, terminate)

    async def main() -> T:
        async with project:
            return await work()

    def terminate_here(signum: int, frame: Any) -> None:
        nonlocal terminated
        terminated = True
        if abort is not None:
            abort.abort("terminated")
        raise _Terminated()

    collect_from_now_on()
    installed = False
    previous: Any = None

    def restore() -> None:
        nonlocal installed
        if installed:
            installed = False
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)

    try:
        if without_loop:
            from ..drive import drive

            with contextlib.suppress(ValueError):  # only the main thread can set a handler
                previous = signal.signal(signal.SIGTERM, terminate_here)
                installed = True

            def to_loop() -> None:
                restore()  # the loop's handler takes over
                on_loop()

            return drive(main(), on_loop=to_loop)
        import asyncio

        async def on_a_loop() -> T:
            on_loop()
            return await main()

        return asyncio.run(on_a_loop())
    except KeyboardInterrupt:
        err("interrupted")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except _Terminated:
        err("terminated")
        raise SystemExit(EXIT_TERMINATED) from None
    except BaseException as error:
        from ..loops import is_cancellation

        if not (terminated and is_cancellation(error)):
            raise
        err("terminated")
        raise SystemExit(EXIT_TERMINATED) from None
    finally:
        restore()


def first_line(text: str) -> str:
    """The first non-empty line of ``text``."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def print_rows(rows: list[tuple[str, str, str]]) -> None:
    """Three aligned columns (id, source, text) on stdout; ``no tools`` on stderr when empty."""
    if not rows:
        err("no tools")
        return
    id_width = max(len(row[0]) for row in rows)
    source_width = max(len(row[1]) for row in rows)
    for tool_id, source, text in rows:
        print(f"{tool_id:<{id_width}}  {source:<{source_width}}  {text}".rstrip())


def with_mcp(project: Any, work: Callable[[], T], servers: Any = None) -> T:
    """``work()`` with the project's MCP servers connected (every enabled one, or ``servers``), inside the
    project's lifetime; with no server configured it just runs (no event loop, no ``mcp`` import)."""
    if not project.generation.mcp_servers or servers == []:
        return work()

    async def connected() -> T:
        await project.open(servers)
        return work()

    return run_in_project(project, connected)
