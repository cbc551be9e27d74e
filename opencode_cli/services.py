"""Long-lived things a project owns: MCP connections, language servers, model clients, child processes.

Lifecycle (the model is Starlette's lifespan, or one :class:`contextlib.AsyncExitStack` per project):

* A :class:`Service` is started lazily, by the first :meth:`Services.get` for its key, on the caller's
  running event loop; concurrent first callers share one start. Every session of the project shares it.
* A service whose start raised is ``failed``: every waiter gets :class:`ServiceError` (a
  :class:`~opencode_cli.errors.ToolError`, so a tool needing it reports the text to the model), its
  ``stop()`` is still called to release what the start got, and the next ``get`` tries again.
* :meth:`Services.aclose` stops the services in reverse start order, each stop bounded by ``stop_timeout``;
  a stop that raises or hangs is reported through ``warn`` and the others are stopped anyway.

The loop rule: all services of one :class:`Services` live on one event loop, the loop of the first ``get``.
A ``get`` from another loop raises :class:`RuntimeError`. Sync code reaches that loop through a
:class:`Portal` (one daemon thread running one loop, owned by the project), never through a throwaway
``asyncio.run``: a connection opened on a loop dies with it.

No orphans: :func:`spawn` starts every child in its own process group (so :func:`terminate` reaches the
grandchildren too) and, on Linux, asks the kernel to SIGKILL it when we die (``PR_SET_PDEATHSIG``), which
covers SIGKILL and crashes where no Python code runs. Children spawned while a service starts (by its
``start()`` or the tasks it creates) are recorded for that service, and their groups are SIGKILLed after its
``stop()``, whatever the stop did. Ctrl-C, SIGTERM and errors are the caller's to route to ``aclose`` (a
``finally``, or :meth:`Portal.close` from ``atexit``); :meth:`Services.close` does it from sync code.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from .errors import ToolError

if TYPE_CHECKING:  # asyncio and threading are imported on first use: listing tools never pays for them
    import asyncio
    import threading

State = Literal["starting", "running", "failed", "stopping", "stopped"]
T = TypeVar("T")

#: The process groups :func:`spawn` started and :func:`terminate` has not finished yet.
_LIVE_GROUPS: set[int] = set()
#: The children spawned on behalf of the service being started, by pid (set by :class:`Services`).
_OWNER: contextvars.ContextVar[dict[int, asyncio.subprocess.Process] | None] = contextvars.ContextVar(
    "opencode_service", default=None
)


class ServiceError(ToolError):
    """A service could not start; the message is what the model sees."""


class Service:
    """A long-lived thing, started and stopped by :class:`Services`, which also tracks its state.

    ``stop()`` must be idempotent and safe after a partial or failed ``start()``.
    """

    name: str = "service"
    #: True when ``stop()`` works on any loop (not only the one ``start()`` ran on): :meth:`Services.close`
    #: may then call it on a fresh loop when the services' own loop is gone.
    stop_on_any_loop: ClassVar[bool] = False

    async def start(self) -> None:
        """Acquire the resource (connect, spawn, ...)."""

    async def stop(self) -> None:
        """Release the resource; idempotent."""

    def detail(self) -> str | None:
        """Extra status text for ``list`` commands, e.g. ``"pid 1234"``."""
        return None


@dataclass
class ServiceStatus:
    """One service as a ``list`` command shows it; ``name`` is its key in :class:`Services`."""

    name: str
    state: State
    detail: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The status as a JSON-ready dict."""
        return asdict(self)


@dataclass(eq=False)
class _Entry:
    key: str
    state: State = "starting"
    service: Service | None = None
    error: str | None = None
    starting: asyncio.Task[Service] | None = None
    stopping: asyncio.Task[None] | None = None
    children: dict[int, asyncio.subprocess.Process] = field(default_factory=dict)


def _stderr_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


class Services:
    """The services of one project, keyed by name (see the module docstring for the lifecycle)."""

    def __init__(self, warn: Callable[[str], None] | None = None, stop_timeout: float = 5.0) -> None:
        self._warn = warn or _stderr_warning
        self.stop_timeout = stop_timeout
        self._entries: dict[str, _Entry] = {}  # in start order
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the services live on (``None`` until the first :meth:`get`)."""
        return self._loop

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` (or :meth:`close`) was called."""
        return self._closed

    def _bind(self) -> asyncio.AbstractEventLoop:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError(
                "these services live on another event loop (the one of their first get()); "
                "call them from that loop, e.g. through the project's Portal"
            )
        return loop

    async def get(self, key: str, factory: Callable[[], Service]) -> Service:
        """The running service for ``key``, started with ``factory()`` on first use."""
        import asyncio

        while True:
            if self._closed:
                raise RuntimeError("services are closed")
            loop = self._bind()
            entry = self._entries.get(key)
            if entry is not None and entry.state == "running" and entry.service is not None:
                return entry.service
            if entry is not None and entry.stopping is not None and not entry.stopping.done():
                await asyncio.shield(entry.stopping)  # a restart waits for the old one to be gone
                continue
            if entry is None or entry.state in ("failed", "stopped") or entry.stopping is not None:
                self._entries.pop(key, None)
                entry = self._entries[key] = _Entry(key)  # a (re)start goes last in start order
                entry.starting = loop.create_task(self._start(entry, factory), name=f"start {key}")
                entry.starting.add_done_callback(lambda t: t.cancelled() or t.exception())
            assert entry.starting is not None
            try:
                return await asyncio.shield(entry.starting)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if entry.starting.cancelled() and not (task and task.cancelling()):
                    if self._closed:
                        raise RuntimeError("services are closed") from None
                    raise ServiceError(f"service {key} failed to start: it was stopped") from None
                raise

    async def _start(self, entry: _Entry, factory: Callable[[], Service]) -> Service:
        _OWNER.set(entry.children)  # this task's own context: children spawned by start() are the entry's
        try:
            entry.service = factory()
            await entry.service.start()
        except BaseException as error:
            entry.state = "failed" if isinstance(error, Exception) else "stopped"
            entry.error = _describe(error) if isinstance(error, Exception) else None
            await self._release(entry)
            if isinstance(error, Exception):
                raise ServiceError(f"service {entry.key} failed to start: {entry.error}") from error
            raise
        entry.state = "running"
        return entry.service

    async def _release(self, entry: _Entry) -> None:
        """Stop the entry's service (bounded, never raises), then kill and reap the groups it spawned."""
        import asyncio

        if entry.service is not None:
            try:
                await asyncio.wait_for(entry.service.stop(), self.stop_timeout)
            except TimeoutError:
                self._warn(f"service {entry.key} did not stop within {self.stop_timeout:g}s")
            except Exception as error:
                self._warn(f"service {entry.key} failed to stop: {_describe(error)}")
        children = list(entry.children.values())
        _kill_groups(entry.children)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(child.wait() for child in children)), self.stop_timeout)

    async def _shutdown(self, entry: _Entry) -> None:
        import asyncio

        if entry.starting is not None and not entry.starting.done():
            entry.starting.cancel()  # the start task releases what it got
            await asyncio.wait({entry.starting}, timeout=self.stop_timeout * 2)
            if not entry.starting.done():
                self._warn(f"service {entry.key} did not stop within {self.stop_timeout:g}s")
                _kill_groups(entry.children)
                entry.state = "stopped"
                return
        if entry.state == "running":  # also a start that swallowed the cancellation
            entry.state = "stopping"
            await self._release(entry)
        if entry.state != "failed":
            entry.state = "stopped"

    def _stopping(self, entry: _Entry) -> asyncio.Task[None]:
        if entry.stopping is None:
            assert self._loop is not None
            entry.stopping = self._loop.create_task(self._shutdown(entry), name=f"stop {entry.key}")
        return entry.stopping

    def peek(self, key: str) -> Service | None:
        """The service for ``key`` if it is running (never starts it)."""
        entry = self._entries.get(key)
        return entry.service if entry is not None and entry.state == "running" else None

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` was ever asked for (in any state; see :meth:`peek` for running ones)."""
        return key in self._entries

    def statuses(self) -> list[ServiceStatus]:
        """Every known service, in start order."""
        result = []
        for entry in list(self._entries.values()):  # may be called from another thread
            detail = None
            if entry.service is not None and entry.state in ("running", "stopping"):
                try:
                    detail = entry.service.detail()
                except Exception as error:
                    detail = f"detail failed: {_describe(error)}"
            result.append(ServiceStatus(entry.key, entry.state, detail, entry.error))
        return result

    async def stop(self, key: str) -> None:
        """Stop the service for ``key`` (its configuration changed); the next ``get`` starts a new one."""
        import asyncio

        entry = self._entries.get(key)
        if entry is not None:
            self._bind()
            await asyncio.shield(self._stopping(entry))

    async def aclose(self) -> None:
        """Stop every service, in reverse start order; later ``get`` calls raise. Idempotent."""
        import asyncio

        if self._loop is not None:
            self._bind()
        self._closed = True
        for entry in reversed(list(self._entries.values())):
            await asyncio.shield(self._stopping(entry))

    def close(self) -> None:
        """Stop every service from sync code, in any thread but the services' loop thread.

        When the services' loop is running (in another thread, e.g. a :class:`Portal`), :meth:`aclose` runs
        there and this waits for it. When it is idle but open, it is run here until ``aclose`` is done.
        When it is closed (``asyncio.run`` returned), the services cannot be stopped properly: the stop of
        those that allow it (``stop_on_any_loop``) runs on a fresh loop, the others are reported through
        ``warn``, and the process groups spawned for every service are SIGKILLed: nothing is orphaned.
        """
        import asyncio

        loop = self._loop
        pending = [e for e in self._entries.values() if e.state not in ("stopped", "failed")]
        if loop is None or (self._closed and not pending):
            self._closed = True
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("Services.close() called on the services' own loop; await aclose() instead")
        if loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self.aclose(), loop)
            try:
                future.result(timeout=self.stop_timeout * (2 * len(pending) + 1))
                return
            except Exception as error:
                future.cancel()
                self._warn(f"services did not close on their loop: {_describe(error)}")
        elif not loop.is_closed() and running is None:
            loop.run_until_complete(self.aclose())
            return
        self._closed = True
        for entry in reversed(pending):
            service = entry.service
            if service is not None and service.stop_on_any_loop and running is None:
                try:
                    asyncio.run(asyncio.wait_for(service.stop(), self.stop_timeout))
                except Exception as error:
                    self._warn(f"service {entry.key} failed to stop: {_describe(error)}")
            elif service is not None:
                self._warn(f"service {entry.key} was not stopped: its event loop is gone")
            _kill_groups(entry.children)
            entry.state = "stopped"


class Portal:
    """The loop of a project's sync façade: one daemon thread running one event loop, started lazily."""

    def __init__(self, name: str = "opencode-portal", join_timeout: float = 10.0) -> None:
        import threading

        self.name = name
        self.join_timeout = join_timeout
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The portal's loop, its thread started if needed (after :meth:`close`, the closed loop)."""
        import asyncio
        import threading

        with self._lock:
            if self._loop is None:
                if self._closed:
                    raise RuntimeError("the portal is closed")
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(target=self._run, args=(loop, ready), name=self.name, daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        import asyncio

        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks, timeout=5.0))
            loop.run_until_complete(loop.shutdown_asyncgens())
            with contextlib.suppress(RuntimeError):  # no thread may start at interpreter shutdown (3.12+)
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    def runs(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """Whether ``loop`` is this portal's loop (without starting the portal)."""
        return loop is not None and loop is self._loop

    def _check_thread(self, what: str) -> None:
        import threading

        if self._thread is not None and threading.current_thread() is self._thread:
            raise RuntimeError(
                f"Portal.{what}() called from the portal's own thread would deadlock; await instead"
            )

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``fn(*args)`` on the portal's loop and wait for its result; its exceptions propagate.

        An interruption of the wait (KeyboardInterrupt) cancels the coroutine and is re-raised.
        """
        import asyncio

        self._check_thread("call")
        loop = self.loop
        if self._closed:
            raise RuntimeError("the portal is closed")
        future = asyncio.run_coroutine_threadsafe(fn(*args), loop)  # type: ignore[arg-type]
        try:
            return future.result()
        except BaseException:
            future.cancel()  # a no-op when the coroutine itself raised
            raise

    def close(self, final: Callable[[], Awaitable[Any]] | None = None) -> None:
        """Run ``final()`` on the loop (e.g. ``services.aclose``), then stop the loop and join the thread.

        Idempotent and safe from ``atexit``. When the loop never started, ``final`` is not run: nothing
        was started through the portal.
        """
        import asyncio

        self._check_thread("close")
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            if final is not None:
                asyncio.run_coroutine_threadsafe(final(), loop).result()  # type: ignore[arg-type]
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(self.join_timeout)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # resolved before the fork: the child only calls it
    except (OSError, AttributeError):
        return None


def _pdeathsig() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when its parent thread dies (Linux only)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl: the signal will never come
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


async def spawn(*argv: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` for children that must never outlive us.

    The child gets its own process group (``start_new_session``) and, on Linux, ``PR_SET_PDEATHSIG`` =
    SIGKILL. That signal fires when the *thread* that spawned the child exits, so spawn long-lived
    children from the thread running their loop (as :class:`Services` does). It needs a ``preexec_fn``,
    which Python warns is unsafe with threads (a lock held by another thread at fork time); ours only calls
    ``prctl`` and ``getppid``, resolved before the fork, which is safe. It also rules out ``posix_spawn``
    (a plain fork is used), which costs little for long-lived children. The signal reaches the direct
    child only (a fork clears it): when we are SIGKILLed, the child's own children are its business.
    Stop it with :func:`terminate`.
    """
    import asyncio

    kwargs["start_new_session"] = True
    ours, theirs = _pdeathsig(), kwargs.pop("preexec_fn", None)
    if ours is not None and theirs is not None:

        def both() -> None:
            ours()
            theirs()

        kwargs["preexec_fn"] = both
    elif ours is not None or theirs is not None:
        kwargs["preexec_fn"] = ours or theirs
    process = await asyncio.create_subprocess_exec(*argv, **kwargs)
    _LIVE_GROUPS.add(process.pid)
    owner = _OWNER.get()
    if owner is not None:
        owner[process.pid] = process
    return process


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:  # not a group leader (not from spawn), or the whole group is gone
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
    except PermissionError:
        pass


def _kill_groups(children: dict[int, asyncio.subprocess.Process]) -> None:
    """SIGKILL the children's process groups still live (those :func:`terminate` did not finish)."""
    for pgid in list(children):
        if pgid in _LIVE_GROUPS:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            _LIVE_GROUPS.discard(pgid)
        del children[pgid]


def _group_alive(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie (orphans' zombies wait for init to reap them)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        state, _parent, group = stat[stat.rfind(b")") + 2 :].split()[:3]
        if int(group) == pgid and state != b"Z":
            return True
    return False


async def terminate(process: asyncio.subprocess.Process, timeout: float = 3.0) -> None:
    """Stop a child from :func:`spawn` and its process group: SIGTERM, up to ``timeout`` seconds for
    the group to leave, then SIGKILL. Never raises for a process already gone."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    _signal_group(process, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout)
        while loop.time() < deadline and _group_alive(process.pid):  # the same grace for its children
            await asyncio.sleep(0.02)
    _signal_group(process, signal.SIGKILL)
    _LIVE_GROUPS.discard(process.pid)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout)


class ProcessService(Service):
    """A service that runs one long-lived child (stdin and stdout are pipes) in its own process group.

    ``process`` is the running :class:`asyncio.subprocess.Process`, for talking to it; extra keyword
    arguments go to :func:`spawn` (``cwd``, ``env``, ``stderr``...).
    """

    def __init__(self, argv: Sequence[str], *, name: str | None = None, timeout: float = 3.0, **kwargs: Any):
        self.argv = list(argv)
        self.name = name or os.path.basename(self.argv[0])
        self.timeout = timeout
        self.kwargs = kwargs
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Spawn the child."""
        import subprocess

        options = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, **self.kwargs}
        self.process = await spawn(*self.argv, **options)

    async def stop(self) -> None:
        """Terminate the child's process group (idempotent)."""
        if self.process is not None:
            await terminate(self.process, self.timeout)

    def detail(self) -> str | None:
        """``pid N`` while the child runs."""
        if self.process is None or self.process.returncode is not None:
            return None
        return f"pid {self.process.pid}"
