"""What a running tool receives: :class:`ToolContext`, its abort signal and permission requests."""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .permission import Request as PermissionRequest

if TYPE_CHECKING:
    import asyncio

    from .mcp.relay import Relay
    from .modelref import ModelRef
    from .project import Project
    from .session import Session
    from .truncate import Truncator


def _wake(future: asyncio.Future[None]) -> None:
    """Resolve a waiter's future (on its loop) unless it is done already (cancelled, say)."""
    if not future.done():
        future.set_result(None)


class AbortSignal:
    """Set when the turn is aborted; usable from async code and from worker threads."""

    def __init__(self) -> None:
        self._aborted = False
        self.reason: str | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._callbacks: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        self._event: threading.Event | None = None  # made by the first blocking wait (most calls have none)

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called."""
        return self._aborted

    def abort(self, reason: str = "aborted") -> None:
        """Signal every waiter; later calls do nothing."""
        with self._lock:
            if self._aborted:
                return
            self.reason = reason
            self._aborted = True
            if self._event is not None:
                self._event.set()
            waiters, self._waiters = self._waiters, []
            callbacks, self._callbacks = self._callbacks, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_wake, future)
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` (from the aborting thread) when aborted, at once if already aborted; returns
        the function that takes the callback back."""
        with self._lock:
            if not self._aborted:
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def wait(self, timeout: float | None = None) -> bool:
        """Block (in a worker thread) until aborted or ``timeout``; returns :attr:`aborted`."""
        with self._lock:
            if self._aborted:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    async def wait_async(self) -> None:
        """Return once aborted."""
        import asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._aborted:
                return
            self._waiters.append((loop, future))
        await future


class ShellEnvOutput:
    """The mutable ``output`` of the ``shell_env`` hook: ``env`` is the environment the process gets
    (change, add or remove variables in place, or assign a new dict). Compared by identity."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def __repr__(self) -> str:
        return f"ShellEnvOutput(env={self.env!r})"


Asker = Callable[[PermissionRequest], Awaitable[None]]
MetadataSink = Callable[[str | None, dict[str, Any] | None], None]


@dataclass(eq=False)  # compared by identity
class ToolContext:
    """Everything a tool's ``execute`` receives besides its arguments; it comes from a session
    (:meth:`~opencode_cli.Session.context`, one per call), and names it: ``session`` is required.

    ``ask`` and ``metadata`` are the two ways a tool talks to its host; ``project``, ``session`` and
    ``model`` are typed ways to reach what it runs in (a service: ``await
    ctx.project.services.get(key, factory)``). An async tool asks with ``await ctx.ask(...)``; a sync
    tool (run in a worker thread) with ``ctx.ask_blocking(...)``, which waits for the answer there. A
    denied or rejected ask raises a :class:`~opencode_cli.errors.ToolError` whose message the model sees.
    A field left unset is the session's (its id, agent, model, transcript, permission asks) or its
    project's (directory, worktree, truncator, environment).
    """

    session: Session = field(kw_only=True, repr=False)
    """The session making the call (its transcript, its agent, :meth:`~opencode_cli.Session.child`)."""
    session_id: str = ""
    message_id: str = ""
    agent: str = ""
    abort: AbortSignal = field(default_factory=AbortSignal)
    call_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    messages: list[Any] = None  # type: ignore[assignment]  # the session's transcript when unset
    directory: Path = None  # type: ignore[assignment]  # the project's when unset
    worktree: Path | None = None
    tool: str | None = None
    asker: Asker = field(default=None, repr=False)  # type: ignore[assignment]  # the session's ask
    on_metadata: MetadataSink | None = field(default=None, repr=False)
    task_capable: bool = False
    truncator: Truncator = field(default=None, repr=False)  # type: ignore[assignment]
    # the project's when unset (the code is arg-type: mypy checks the None as field()'s argument)
    env: Mapping[str, str] = field(default=None, repr=False)  # type: ignore[arg-type]
    loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    project: Project = field(default=None, repr=False)  # type: ignore[assignment]
    """The project the call runs in (its services, store, config): the session's."""
    model: ModelRef | None = None
    """The model the session serves (``ctx.extra["model"]`` carries it too, as in OpenCode)."""
    relay: Relay | None = field(default=None, repr=False)
    """What the host relays of a call of an MCP server's tool (:class:`~opencode_cli.mcp.relay.Relay`):
    the session's."""

    def __post_init__(self) -> None:
        session = self.session
        if session is None:
            raise TypeError("a ToolContext comes from a session: ToolContext(session=...)")
        project = self.project = self.project or session.project
        self.session_id = self.session_id or session.id
        self.message_id = self.message_id or session.assistant().id
        self.agent = self.agent or session.agent.name
        if self.messages is None:
            self.messages = session.messages
        if self.directory is None:
            self.directory = project.directory
            self.worktree = self.worktree or project.worktree
        if self.asker is None:
            self.asker = session.asks.ask
        if self.truncator is None:
            self.truncator = project.generation.truncator
        if self.env is None:
            self.env = project.env
        if self.model is None:
            self.model = session.model
        if self.relay is None:
            self.relay = session.relay

    def metadata(self, title: str | None = None, metadata: dict[str, Any] | None = None) -> None:
        """Report live progress of the running call (a title and/or metadata); returns at once."""
        if self.on_metadata is not None:
            self.on_metadata(title, metadata)

    async def ask(
        self,
        permission: str,
        patterns: list[str],
        always: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Ask for ``permission`` on ``patterns`` (see the permission rules); returns once allowed.

        For async tools: ``await ctx.ask(...)``. A sync tool uses :meth:`ask_blocking`.
        """
        await self.asker(self._request(permission, patterns, always, metadata))

    def ask_blocking(
        self,
        permission: str,
        patterns: list[str],
        always: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """:meth:`ask` for a sync tool, which runs in a worker thread: the request is judged on the
        call's event loop and this thread waits for the answer. Never call it from async code (on the
        call's loop it would wait for itself: it raises ``RuntimeError`` instead)."""
        import asyncio

        from .loops import running_loop

        loop = self.loop
        request = self._request(permission, patterns, always, metadata)
        if loop is None:  # outside any call (a sync tool's function called with a context directly)
            asyncio.run(self.asker(request))  # type: ignore[arg-type]
            return
        if running_loop() is loop:
            raise RuntimeError("ctx.ask_blocking() was called on the call's event loop: await ctx.ask()")
        asyncio.run_coroutine_threadsafe(self.asker(request), loop).result()  # type: ignore[arg-type]

    def _request(
        self,
        permission: str,
        patterns: list[str],
        always: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> PermissionRequest:
        return PermissionRequest(
            id="",
            session_id=self.session_id,
            permission=permission,
            patterns=list(patterns),
            always=list(always or []),
            metadata=dict(metadata or {}),
            tool={"messageID": self.message_id, "callID": self.call_id},
        )

    async def process_env(self, cwd: str | Path | None = None) -> dict[str, str]:
        """The environment of a process the tool starts for the model (bash's shell, say): the call's
        :attr:`env` as the ``shell_env`` hooks leave it, for a process started in ``cwd`` (default: the
        project directory)."""
        env = dict(self.env)
        project = self.project
        if not project.plugins.has_hook("shell_env"):
            return env
        output = ShellEnvOutput(env)
        await project.plugins.acall(
            "shell_env",
            cwd=str(cwd if cwd is not None else self.directory),
            session_id=self.session_id,
            call_id=self.call_id,
            output=output,
        )
        return {str(key): str(value) for key, value in output.env.items()}

    def resolve(self, path: str | Path) -> Path:
        """An absolute path: ``path`` itself, or resolved against the project directory.

        A path the system would refuse (:func:`too_long`) is refused here, before anything walks it,
        with the tool's invalid-arguments text: resolving a path costs time that grows with the square
        of its components, and a call must not spend it on a path no system call would take.

        A name that is not UTF-8 is listed (by ``glob``, ``read`` of a directory) with U+FFFD in place
        of each byte that is not; such a name, given back as listed, resolves to the entry it was listed
        for, when nothing is named so literally and exactly one entry of its directory reads so."""
        joined = os.path.normpath(os.path.join(self.directory, path))
        problem = too_long(joined)
        if problem is not None:
            from .errors import InvalidArgumentsError

            raise InvalidArgumentsError(self.tool or "unknown", problem)
        if REPLACEMENT in joined:
            joined = as_listed(joined)
        return Path(joined)


#: What a byte that is not UTF-8 becomes in a listed name.
REPLACEMENT = "\ufffd"

#: The longest path a system call takes, in bytes, its terminating NUL included (Linux's ``PATH_MAX``),
#: and the longest name of one entry (``NAME_MAX``).
PATH_MAX = 4096
NAME_MAX = 255


def too_long(path: str) -> str | None:
    """Why the system would refuse ``path`` for its length (``ENAMETOOLONG``), or ``None``: over
    :data:`PATH_MAX` bytes in all, or a name over :data:`NAME_MAX` bytes."""
    if len(path) < PATH_MAX // 4 and not any(len(name) > NAME_MAX // 4 for name in path.split(os.sep)):
        return None  # at most four bytes a character: short enough without encoding it
    encoded = path.encode("utf-8", "surrogatepass")
    if len(encoded) >= PATH_MAX:
        return f"the path is {len(encoded)} bytes long; the system takes at most {PATH_MAX - 1}"
    longest = max(len(name) for name in encoded.split(b"/"))
    if longest > NAME_MAX:
        return f"a name in the path is {longest} bytes long; the system takes at most {NAME_MAX}"
    return None


def as_listed(path: str) -> str:
    """``path`` (absolute, normalised) with each component that holds U+FFFD and does not exist as it
    is replaced by the one entry of its directory whose name, decoded with replacement, is that
    component (that entry's name as the OS takes it); a component matching none or several stays."""
    if os.path.lexists(path):
        return path
    parts = path.split(os.sep)
    done = parts[0] or os.sep
    for part in parts[1:]:
        candidate = os.path.join(done, part)
        if REPLACEMENT in part and not os.path.lexists(candidate):
            try:
                names = os.listdir(os.fsencode(done))
            except OSError:
                names = []
            found = [name for name in names if name.decode("utf-8", "replace") == part]
            if len(found) == 1:
                candidate = os.path.join(done, os.fsdecode(found[0]))
        done = candidate
    return done
