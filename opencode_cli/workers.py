"""The worker threads sync tools run in: a pool owned by a project, stopped when the project closes.

A sync tool (the default) runs in a worker thread so its blocking work never stalls the event loop. The
hop there and back is most of what such a call costs, and most of the hop is waking threads: the loop's
default executor wakes whichever of its idle threads the OS picks, often one gone cold on the other core.
Here the idle workers wait each on a lock of its own, and a new job goes to the one that went idle last
(a stack), so calls one after another keep landing on the same warm thread; calls at once get a thread
each, up to :data:`LIMIT`, then queue.

Lifecycle: threads are started on demand; one idle for :data:`IDLE_SECONDS` ends itself; :meth:`close`
(``Project.close``, or the project's finalizer at exit) lets each finish the job it runs and ends them all.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: A job runs the function and gives back what delivers its outcome to the waiting loop.
_Job = Callable[[], Callable[[], None]]

#: At most this many worker threads at once; further jobs wait their turn.
LIMIT = 32

#: A worker idle this long ends (a new one starts when needed).
IDLE_SECONDS = 2.0


class _Slot:
    """An idle worker's place in the stack: its wake-up lock and the job handed to it."""

    __slots__ = ("job", "wake")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()  # held: the worker's next acquire waits for a hand-over
        self.job: _Job | None = None


class Workers:
    """Worker threads for sync tools (see the module docstring); ``await workers.run(fn, *args)``."""

    def __init__(self, limit: int = LIMIT, idle_seconds: float = IDLE_SECONDS, name: str = "opencode-tool"):
        self._limit, self._idle_seconds, self._name = limit, idle_seconds, name
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
        self._backlog: collections.deque[_Job] = collections.deque()
        self._threads: set[threading.Thread] = set()
        self._closed = False

    @property
    def threads(self) -> int:
        """How many worker threads are alive now."""
        with self._lock:
            return len(self._threads)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker thread, in a copy of the caller's context variables; the
        caller's task waits for it (a cancelled wait leaves the function to finish on its own)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        context = contextvars.copy_context()

        def settle(result: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        def job() -> Callable[[], None]:
            try:
                result = context.run(function, *args)
            except BaseException as error:  # handed to the waiting task, as the default executor does
                outcome: tuple[Any, BaseException | None] = (None, error)
            else:
                outcome = (result, None)

            def deliver() -> None:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                    loop.call_soon_threadsafe(settle, *outcome)

            return deliver

        self._submit(job)
        return await future

    def _submit(self, job: _Job) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the project is closed: its worker threads are stopped")
            if self._idle:
                slot = self._idle.pop()
                slot.job = job
                slot.wake.release()
                return
            if len(self._threads) >= self._limit:
                self._backlog.append(job)
                return
            thread = threading.Thread(target=self._work, args=(job,), name=self._name, daemon=True)
            self._threads.add(thread)
        thread.start()

    def _work(self, job: _Job | None) -> None:
        slot = _Slot()
        try:
            while job is not None:
                job = self._next(slot, job())
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _next(self, slot: _Slot, deliver: Callable[[], None]) -> _Job | None:
        """Deliver the last job's outcome, then the worker's next job: one queued, or one handed over
        while it waited; ``None`` to end. The worker is back in the stack before the outcome reaches the
        loop, so a call made as soon as the last one returns finds it there (not a new thread)."""
        with self._lock:
            queued = self._backlog.popleft() if self._backlog else None
            if queued is None and not self._closed:
                self._idle.append(slot)
        deliver()
        if queued is not None or self._closed:
            return queued
        if not slot.wake.acquire(timeout=self._idle_seconds):
            with self._lock:
                if slot in self._idle:  # idle too long, and nothing was handed over meanwhile
                    self._idle.remove(slot)
                    return None
            slot.wake.acquire()  # a job was handed over just as the wait ended
        job, slot.job = slot.job, None
        return job

    def close(self) -> None:
        """End every worker: idle ones at once, busy ones once their job returns (waited for, so a
        write in progress is never cut off). Safe to call twice; later jobs are refused."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            threads = set(self._threads)
        for slot in idle:
            slot.job = None
            slot.wake.release()
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join()
