"""Helpers shared by the CLI commands: building the project, printing, and turning errors into exit codes."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from ..errors import ConfigError, OpencodeError, UnknownToolError

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
#: ``opencode run`` stopped at a permission ask that was refused (no answer from the model)
EXIT_REJECTED = 3
#: ``opencode plugins install/uninstall``: the environment belongs to another tool (pipx, uv tool, the
#: system); nothing was run, the command that works there was printed
EXIT_ELSEWHERE = 3
#: ``opencode plugins install/uninstall``: the installer (pip, uv) failed; its messages are on stderr
EXIT_INSTALL_FAILED = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

T = TypeVar("T")


def unasked_in(project: Any, permission: str) -> str | None:
    """Why a rule for ``permission`` never applies in ``project``: no registered tool (nor the core) asks
    it, with the close matches (:func:`~opencode_cli.permission.unasked`); ``None`` when one does. A
    configured MCP server's ``NAME_`` counts, as do its resource tools."""
    from ..permission import unasked

    tool_ids = list(project.registry.entries)
    prefixes = [f"{project.mcp.prefix(name).prefix}_" for name in project.generation.mcp_servers]
    if prefixes:
        from ..mcp.resources import LIST_RESOURCE_TEMPLATES, LIST_RESOURCES, READ_RESOURCE

        tool_ids += [LIST_RESOURCES, LIST_RESOURCE_TEMPLATES, READ_RESOURCE]
    return unasked(permission, tool_ids, prefixes)


def terminal_attached(stdin: Any = None, stderr: Any = None) -> bool:
    """Whether there is a terminal to ask someone on: standard input and standard error (or ``stdin`` and
    ``stderr``) both are one."""
    try:
        return bool((stdin or sys.stdin).isatty() and (stderr or sys.stderr).isatty())
    except (AttributeError, ValueError):
        return False


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
    from ..machine_output import stream

    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if not _encodable(text):
        text = json.dumps(value, indent=2, default=str)
    out = stream()
    out.write(text + "\n")
    out.flush()


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


def use_sandbox(mode: str) -> None:
    """``--sandbox MODE``: every bash command of this command runs in that sandbox (``OPENCODE_SANDBOX``,
    which the project's environment and so :func:`opencode_cli.sandbox.settings` read); exit 2 when
    ``mode`` is not one."""
    from ..sandbox.settings import MODE_ENV, MODES

    if mode not in MODES:
        fail(f"error: --sandbox must be one of {', '.join(MODES)}, not {mode!r}")
    os.environ[MODE_ENV] = mode


#: The plugins this command disables (``opencode -p no:NAME`` / ``--disable-plugin NAME``), each with how
#: messages name it; set by the root command for each invocation, read by :func:`make_project`.
DISABLED_PLUGINS: dict[str, str] = {}
#: ``opencode --trust``: this command trusts the project (set by the root command, read by
#: :func:`make_project`).
TRUST_PROJECT = False


def make_project(
    directory: Path | None = None, warn: Callable[[str], None] | None = None, *, quiet: bool = True
) -> Any:
    """The :class:`~opencode_cli.project.Project` for the current directory (or ``directory``), without the
    plugins the command line disables; it is closed when the command ends (whatever it started is
    stopped), also when the command fails. Its warnings go to stderr, each once per change of the files it
    is about (:mod:`.quiet`), or every time when not ``quiet`` (``config …``, ``tools watch``; ``plugins
    list`` shows each file's warnings in its listing)."""
    import atexit

    from ..project import Project

    def loud(message: str) -> None:
        err(f"warning: {message}")

    once: Any = None
    made: list[Any] = []

    def warn_once(message: str) -> None:
        """:class:`.quiet.OncePerChange`, made on the first warning (most commands have none to give)."""
        nonlocal once
        if once is None:
            from .. import paths
            from .quiet import FILE_NAME, OncePerChange

            once = OncePerChange(paths.data_dir() / FILE_NAME, loud)
            once.context = lambda: _config_paths(made[0]) if made else ()
        once(message)

    project = Project(
        directory,
        warn=warn or (warn_once if quiet else loud),
        disabled_plugins=dict(DISABLED_PLUGINS),
        trusted=True if TRUST_PROJECT else None,
    )
    made.append(project)
    atexit.register(project.close)
    return project


def _config_paths(project: Any) -> list[Path]:
    """The project's config files (what a warning naming no file is about)."""
    from ..config import config_files

    return [path for _, path in config_files(project.directory, project.worktree, project.env)]


def model_of(project: Any, text: str | None) -> Any:
    """The model ``text`` names (or the config's ``model``), as
    :meth:`Generation.model <opencode_cli.generation.Generation.model>` reads it; a warning on stderr, with
    the close matches, when no rule recognises it (see :meth:`ModelRef.unrecognised`)."""
    model = project.generation.model(text)
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


#: What each signal ends a command with: the abort reason, then the exit code.
SIGNAL_EXITS = {"interrupted": EXIT_INTERRUPTED, "terminated": EXIT_TERMINATED}


def run_in_project(project: Any, work: Callable[[], Awaitable[T]], abort: Any = None) -> T:
    """Run ``work()`` on a new event loop inside ``async with project``, so every service it starts is
    stopped on the way out: on success, on an error, and on a signal.

    SIGINT and SIGTERM are an abort: ``abort`` (the call's signal) is set with the reason
    ``interrupted`` or ``terminated``; the tool sees ``ctx.abort`` and stops between two steps, so no
    write is cut in half. If the work has not ended within :data:`TERM_GRACE` seconds (at once without
    an ``abort``, or on a second signal), it is cancelled: the command then says ``interrupted`` (exit
    130) or ``terminated`` (exit 143). When the work ends by itself after a signal, its result or error
    is returned or raised as usual: the caller shows it, then ends with :func:`exit_if_signalled`."""
    import asyncio
    import signal

    reasons: list[str] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(reason: str) -> None:
            first = not reasons
            reasons.append(reason)
            if abort is not None:
                abort.abort(reason)
            loop.call_later(TERM_GRACE if abort is not None and first else 0, task.cancel)

        for signum, reason in ((signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, stop, reason)
        async with project:
            return await work()

    collect_from_now_on()
    before = signal.getsignal(signal.SIGTERM)
    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        err("interrupted")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except asyncio.CancelledError:
        if not reasons:
            raise
        err(reasons[0])
        raise SystemExit(SIGNAL_EXITS[reasons[0]]) from None
    finally:
        with contextlib.suppress(ValueError, TypeError):  # the loop's handler is gone with the loop
            signal.signal(signal.SIGTERM, before)


def exit_if_signalled(abort: Any) -> None:
    """End the command with the exit code of the signal that aborted its call (130 or 143), if one did
    (see :func:`run_in_project`); the call's own outcome was shown already."""
    reason = getattr(abort, "reason", None)
    if reason in SIGNAL_EXITS:
        err(reason)
        raise typer.Exit(SIGNAL_EXITS[reason])


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
