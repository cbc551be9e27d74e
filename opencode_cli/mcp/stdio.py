"""A local MCP server's process and its stdio transport (the SDK's ``Transport`` protocol).

The SDK's ``stdio_client`` hides the process it starts: no pid, no exit code, no stderr, and every line
that is not JSON-RPC logs a traceback. :func:`stdio_transport` starts the server with
:func:`~opencode_cli.services.processes.spawn` (under the launcher, in its own process group: it and all it
starts are killed with us) and bridges its
pipes to the SDK's message streams; the messages are parsed and serialised by the SDK's own types
(``jsonrpc_message_adapter``), and the session on top is the SDK's ``ClientSession``. What it learns
about the process is kept in a :class:`ServerProcess`: the pid, the exit code once it exits, the last lines
of its stderr, and the first line of stdout that was not JSON-RPC.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import select
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..sandbox.landlock import Rules

#: Lines of a server's stderr kept for the reason it failed.
STDERR_LINES = 5
#: Lines that are not JSON-RPC, in a row before any message, after which a server is taken to speak no MCP.
GARBAGE_LIMIT = 10
#: Characters of a line that is not JSON-RPC quoted in a report.
QUOTED = 60
#: Seconds a server gets to exit by itself once its stdin is closed, before its group is terminated.
EXIT_GRACE = 1.0
#: Seconds between SIGTERM and SIGKILL of a server's group.
KILL_GRACE = 1.0
#: Seconds between two looks at whether the server process exited (``process.wait()`` also waits for its
#: pipes, which a child of the server may hold).
EXIT_POLL = 0.05
#: The same once its stdin is closed, during its :data:`EXIT_GRACE`.
CLOSING_POLL = 0.01


def quote(line: str) -> str:
    """The start of a line, for a one-line report."""
    line = line.strip()
    return repr(line if len(line) <= QUOTED else line[:QUOTED] + "…")


@dataclass
class ServerProcess:
    """What is known of a local server's process."""

    pid: int = 0
    returncode: int | None = None
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=STDERR_LINES))
    garbage: str | None = None
    """The first stdout line that was not JSON-RPC (stripped), if any."""
    garbage_count: int = 0
    exit_seen: bool = False
    """Whether the process exited by itself (not stopped by us)."""
    spoke: bool = False
    """Whether a JSON-RPC message came from the server."""
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the transport ends: the process exited, or it only printed garbage."""
    pidfd: int | None = None
    """A descriptor of the process (Linux): readable once it has exited, before anything reaped it."""

    def dead(self) -> bool:
        """Whether the process has exited, asked of the system now (the transport may not have seen its
        end yet): a call made just after a server died starts it again instead of failing."""
        if self.returncode is not None:
            return True
        if self.pidfd is None:
            return False
        try:
            return bool(select.select([self.pidfd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def forget_pidfd(self) -> None:
        """Close the process descriptor (the transport ended)."""
        pidfd, self.pidfd = self.pidfd, None
        if pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(pidfd)

    def exited(self) -> str:
        """``exited with code N``, with the last lines of stderr when there are some."""
        code = self.returncode
        if code is not None and code < 0:
            return f"killed by signal {-code}" + self.stderr_tail()
        text = f"exited with code {code}"
        return text + self.stderr_tail()

    def stderr_tail(self) -> str:
        """``; stderr: last | lines`` or ``""``."""
        lines = [line for line in self.stderr if line.strip()]
        return f"; stderr: {' | '.join(lines)}" if lines else ""

    def speaks_garbage(self) -> str:
        """The reason a server that printed no JSON-RPC fails."""
        return f"printed {quote(self.garbage or '')} on stdout, which is not JSON-RPC"


async def import_sdk() -> None:
    """Import the SDK's modules the transport needs. The first time (it takes longer than starting a
    server) this runs in a worker thread once the server was started, so that the loop goes on starting
    the other servers meanwhile, and they get ready while we import."""
    if "mcp.shared.message" not in sys.modules:
        import importlib

        await asyncio.to_thread(importlib.import_module, "mcp.shared.message")


@contextlib.asynccontextmanager
async def stdio_transport(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    process: ServerProcess,
    on_garbage: Callable[[str], None] | None = None,
    echo_stderr: bool = False,
    rules: Rules | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield the SDK's ``(read, write)`` streams to it.

    Leaving closes its stdin and gives it :data:`EXIT_GRACE` to exit, then terminates its process group;
    a cancelled caller (a start that timed out) skips the grace. ``process.exit_seen`` tells whether it
    ended by itself; ``rules`` sandbox the server (it runs under the launcher either way: nothing it
    starts outlives us). ``on_garbage`` is called with the first
    stdout line that is not JSON-RPC; :data:`GARBAGE_LIMIT` of them before any message end the transport.
    """
    from ..services.processes import spawn, terminate
    from ..services.proctree import command_pid

    child = await spawn(
        *argv,
        rules=rules,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
    )
    process.pid = child.pid
    with contextlib.suppress(AttributeError, OSError):  # Linux 5.3 and later
        process.pidfd = os.pidfd_open(child.pid)
    try:
        await import_sdk()
    except BaseException:
        await asyncio.shield(terminate(child, KILL_GRACE))
        process.forget_pidfd()
        raise
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    incoming, read = anyio.create_memory_object_stream[Any](0)
    write, outgoing = anyio.create_memory_object_stream[Any](0)

    def handle(raw: bytes) -> Any:
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            return None
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            process.garbage_count += 1
            if process.garbage is None:
                process.garbage = line.strip()
                if on_garbage is not None:
                    on_garbage(line)
            if not process.spoke and process.garbage_count >= GARBAGE_LIMIT:
                raise EOFError from None  # it speaks no MCP: end the transport
            return None

    async def read_stdout() -> None:
        assert child.stdout is not None
        buffer = b""
        try:
            async with incoming:
                while chunk := await child.stdout.read(1 << 16):
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for raw in lines:
                        message = handle(raw)
                        if message is not None:
                            if not process.spoke:  # it runs: the server's own pid, not its launcher's
                                process.pid = command_pid(child.pid) or child.pid
                            process.spoke = True
                            await incoming.send(message)
        except (EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass
        finally:
            process.closed.set()

    async def read_stderr() -> None:
        assert child.stderr is not None
        with contextlib.suppress(Exception):
            while raw := await child.stderr.readline():
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                process.stderr.append(line)
                if echo_stderr:
                    print(line, file=sys.stderr)

    async def write_stdin() -> None:
        assert child.stdin is not None
        try:
            async with outgoing:
                async for message in outgoing:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    child.stdin.write(data.encode())
                    await child.stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming.aclose()  # the requests waiting for an answer fail now

    async def watch_exit() -> None:
        while child.returncode is None:
            await asyncio.sleep(EXIT_POLL)
        process.returncode = child.returncode
        process.exit_seen = True
        process.closed.set()

    tasks = [asyncio.ensure_future(work()) for work in (read_stdout, read_stderr, write_stdin, watch_exit)]
    cancelled = False
    try:
        yield read, write
    except asyncio.CancelledError:
        cancelled = True
        raise
    finally:
        with contextlib.suppress(Exception):
            if child.stdin is not None:
                child.stdin.close()
        if not cancelled:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + EXIT_GRACE
            while child.returncode is None and loop.time() < deadline:
                await asyncio.sleep(CLOSING_POLL)
        if child.returncode is not None:
            process.exit_seen = True  # it ended by itself (at most, its stdin was closed)
        await asyncio.shield(terminate(child, KILL_GRACE))
        process.returncode = child.returncode
        process.forget_pidfd()
        for task in tasks:
            task.cancel()
        await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))
        for stream in (read, write, incoming, outgoing):
            with contextlib.suppress(Exception):
                await stream.aclose()
