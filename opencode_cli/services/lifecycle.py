"""The owner of a project's services: lazy start on the caller's loop, reverse stop, status."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar, cast

from ..errors import message_of
from ..loops import running_loop
from .base import Service, ServiceError, ServiceStatus, State
from .processes import _OWNER, _kill_groups

S = TypeVar("S", bound=Service)

if TYPE_CHECKING:  # asyncio is imported on first use: listing tools never pays for it
    import asyncio


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

    async def get(self, key: str, factory: Callable[[], S]) -> S:
        """The running service for ``key``, started with ``factory()`` on first use. A key names one kind of
        service, the kind its factory makes: the service is returned as that kind."""
        import asyncio

        while True:
            if self._closed:
                raise RuntimeError("services are closed")
            loop = self._bind()
            entry = self._entries.get(key)
            if entry is not None and entry.state == "running" and entry.service is not None:
                return cast(S, entry.service)
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
                return cast(S, await asyncio.shield(entry.starting))
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
            entry.error = message_of(error) if isinstance(error, Exception) else None
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
                self._warn(f"service {entry.key} failed to stop: {message_of(error)}")
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
                    detail = f"detail failed: {message_of(error)}"
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
        entries = list(self._entries.values())
        alone = [e for e in entries if e.service is not None and type(e.service).independent]
        if alone:  # stopped concurrently: five servers cost one stop, not five
            await asyncio.shield(asyncio.gather(*(self._stopping(entry) for entry in alone)))
        for entry in reversed(entries):
            await asyncio.shield(self._stopping(entry))

    def close(self) -> None:
        """Stop every service from sync code, in any thread but the services' loop thread.

        When the services' loop is running (in another thread, e.g. a :class:`Portal`), :meth:`aclose` runs
        there and this waits for it. When it is idle but open, it is run here until ``aclose`` is done.
        When it is closed (``asyncio.run`` returned), the services cannot be stopped properly: the stop of
        those that allow it (``stop_on_any_loop``) runs on a fresh loop, the others are reported through
        ``warn``, and the process groups spawned for every service are SIGKILLed: nothing is orphaned.
        """
        loop = self._loop
        pending = [e for e in self._entries.values() if e.state not in ("stopped", "failed")]
        if loop is None or (self._closed and not pending):
            self._closed = True
            return
        import asyncio

        running = running_loop()
        if running is loop:
            raise RuntimeError("Services.close() called on the services' own loop; await aclose() instead")
        if loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self.aclose(), loop)
            try:
                future.result(timeout=self.stop_timeout * (2 * len(pending) + 1))
                return
            except Exception as error:
                future.cancel()
                self._warn(f"services did not close on their loop: {message_of(error)}")
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
                    self._warn(f"service {entry.key} failed to stop: {message_of(error)}")
            elif service is not None:
                self._warn(f"service {entry.key} was not stopped: its event loop is gone")
            _kill_groups(entry.children)
            entry.state = "stopped"
