"""The worker threads sync tools run in: a pool owned by a project, stopped when the project closes.

A sync tool (the default) runs in a worker thread so its blocking work never stalls the event loop. The
hop there and back is most of what such a call costs, and most of the hop is waking threads: the loop's
default executor wakes whichever of its idle threads the OS picks, often one gone cold on the other core.
Here the idle workers wait each on a lock of its own, and a new job goes to the one that went idle last
(a stack), so calls one after another keep landing on the same warm thread; calls at once get a thread
each, up to :data:`LIMIT`, then queue.

Interrupted calls: when the task waiting for a job is cancelled (the call's abort fired), the call's
abort is set, and the job's thread stops counting towards :data:`LIMIT` at once, so whatever it still
does never delays another call. The waiting task then waits up to :attr:`Workers.grace` seconds for the
function to return (a tool sees ``ctx.abort`` and stops between two steps): the interruption is reported
only once the thread has returned, or, when it has not by then, the thread is abandoned
(:class:`Abandoned` says so). A job cancelled before it started never runs.

Lifecycle: threads are started on demand; one idle for :data:`IDLE_SECONDS` ends itself; :meth:`close`
(``Project.close``, or the project's finalizer at exit) lets each finish the job it runs and ends them all
(abandoned threads, daemons, are not waited for: they already had their grace).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .context import AbortSignal

T = TypeVar("T")

#: At most this many worker threads at once; further jobs wait their turn.
LIMIT = 32

#: A worker idle this long ends (a new one starts when needed).
IDLE_SECONDS = 2.0

#: Seconds an interrupted job's function has to return before its thread is abandoned.
GRACE_SECONDS = 5.0


class Abandoned(Exception):
    """An interrupted job's function had not returned within the grace period: its thread was left
    running, and whatever it still does may happen after the interruption was reported."""


class _Slot:
    """An idle worker's place in the stack: its wake-up lock and the job handed to it."""

    __slots__ = ("job", "wake")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()  # held: the worker's next acquire waits for a hand-over
        self.job: _Job | None = None


class _Job:
    """One call of a function in a worker thread, and where it stands."""

    __slots__ = (
        "abort", "args", "context", "dropped", "ended", "finished", "function", "future", "loop",
        "returned", "thread",
    )  # fmt: skip

    def __init__(
        self, function: Callable[..., Any], args: tuple[Any, ...], loop: Any, future: Any, abort: Any
    ) -> None:
        self.function, self.args, self.loop, self.future, self.abort = function, args, loop, future, abort
        self.context = contextvars.copy_context()
        self.thread: threading.Thread | None = None  # set (under the pool's lock) when a thread takes it
        self.dropped = False  # cancelled or aborted before a thread took it: never run
        self.finished = False  # the function returned (seen in the worker thread, under the pool's lock)
        self.returned = False  # the function returned (seen on the loop's thread)
        self.ended: asyncio.Future[None] | None = None  # waited on after an interruption

    def run(self) -> Callable[[], None]:
        """Run the function (in the worker thread); returns what hands its outcome to the loop."""
        try:
            result = self.context.run(self.function, *self.args)
        except BaseException as error:  # handed to the waiting task, as the default executor does
            outcome: tuple[Any, BaseException | None] = (None, error)
        else:
            outcome = (result, None)

        def deliver() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                self.loop.call_soon_threadsafe(self.settle, *outcome)

        return deliver

    def skip(self) -> Callable[[], None]:
        """What a thread does with a job dropped before it started: the wait ends as interrupted."""
        from .errors import AbortedError

        def deliver() -> None:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.settle, None, AbortedError())

        return deliver

    def settle(self, result: Any, error: BaseException | None) -> None:
        """On the loop's thread: the function returned with ``result`` or raised ``error``."""
        self.returned = True
        if self.ended is not None and not self.ended.done():
            self.ended.set_result(None)
        future = self.future
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


class Workers:
    """Worker threads for sync tools (see the module docstring); ``await workers.run(fn, *args)``."""

    def __init__(
        self,
        limit: int = LIMIT,
        idle_seconds: float = IDLE_SECONDS,
        name: str = "opencode-tool",
        grace: float = GRACE_SECONDS,
    ):
        self._limit, self._idle_seconds, self._name = limit, idle_seconds, name
        self.grace = grace
        """Seconds an interrupted job's function has to return before its thread is abandoned."""
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
        self._backlog: collections.deque[_Job] = collections.deque()
        self._threads: set[threading.Thread] = set()  # the ones counted towards the limit
        self._leaving: set[threading.Thread] = set()  # running an interrupted job: not counted
        self._abandoned = 0
        self._closed = False

    @property
    def threads(self) -> int:
        """How many worker threads count towards the limit now (busy or idle, not interrupted ones)."""
        with self._lock:
            return len(self._threads)

    @property
    def leaving(self) -> int:
        """How many threads still run an interrupted job (in its grace period, or abandoned)."""
        with self._lock:
            return len(self._leaving)

    @property
    def abandoned(self) -> int:
        """How many interrupted jobs were abandoned so far (their function had not returned in time)."""
        return self._abandoned

    async def run(self, function: Callable[..., T], *args: Any, abort: AbortSignal | None = None) -> T:
        """``function(*args)`` in a worker thread, in a copy of the caller's context variables; the
        caller's task waits for it. When that wait is cancelled, ``abort`` is set, and the cancellation
        is raised once the function has returned (up to :attr:`grace` seconds); if it has not by then,
        :class:`Abandoned` is raised instead."""
        loop = asyncio.get_running_loop()
        job = _Job(function, args, loop, loop.create_future(), abort)
        self._submit(job)
        try:
            return await job.future
        except asyncio.CancelledError:
            if abort is not None:
                abort.abort("cancelled")  # no-op when the abort is what cancelled the wait
            if not job.returned and self._detach(job):
                await self._grace(job, loop)
            raise

    def _detach(self, job: _Job) -> bool:
        """Take an interrupted job's thread out of the count (a queued job is dropped); whether a thread
        runs it now."""
        spawn: list[threading.Thread] = []
        with self._lock:
            thread = job.thread
            if thread is None:
                job.dropped = True
                return False
            if not job.finished and thread in self._threads:
                self._threads.discard(thread)
                self._leaving.add(thread)
            while self._backlog and len(self._threads) + len(spawn) < self._limit and not self._closed:
                queued = self._backlog.popleft()
                if not queued.dropped:
                    spawn.append(self._thread_for(queued))
        for each in spawn:
            each.start()
        return True

    async def _grace(self, job: _Job, loop: asyncio.AbstractEventLoop) -> None:
        """Wait for an interrupted job's function to return, up to :attr:`grace` seconds (a second
        cancellation ends the wait); raise :class:`Abandoned` when it has not."""
        job.ended = loop.create_future()
        with contextlib.suppress(asyncio.CancelledError):  # interrupted again: stop waiting
            await asyncio.wait({job.ended}, timeout=self.grace)
        if job.returned:
            return
        self._abandoned += 1
        raise Abandoned(
            f"The tool had not stopped {self.grace:g} s after the interruption: it was left running "
            "in the background, and may still change files."
        )

    def _thread_for(self, job: _Job) -> threading.Thread:
        """A new counted worker thread that starts with ``job`` (call under the lock; start it after)."""
        thread = threading.Thread(target=self._work, args=(job,), name=self._name, daemon=True)
        self._threads.add(thread)
        return thread

    def _submit(self, job: _Job) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the project is closed: its worker threads are stopped")
            slot: _Slot | None = None
            if self._idle:
                slot = self._idle.pop()
                slot.job = job
            elif len(self._threads) >= self._limit:
                self._backlog.append(job)
                return
            else:
                thread = self._thread_for(job)
        if slot is not None:
            slot.wake.release()  # after the lock: the worker's first step takes it
        else:
            thread.start()

    def _work(self, job: _Job | None) -> None:
        slot = _Slot()
        me = threading.current_thread()
        try:
            while job is not None:
                with self._lock:
                    taken = not job.dropped and not (job.abort is not None and job.abort.aborted)
                    if taken:
                        job.thread = me
                    else:
                        job.dropped = True
                deliver = job.run() if taken else job.skip()
                job = self._next(slot, job, deliver, me)
        finally:
            with self._lock:
                self._threads.discard(me)
                self._leaving.discard(me)

    def _next(
        self, slot: _Slot, done: _Job, deliver: Callable[[], None], me: threading.Thread
    ) -> _Job | None:
        """Deliver the last job's outcome, then the worker's next job: one queued, or one handed over
        while it waited; ``None`` to end (also when the job was interrupted while it ran: the thread no
        longer counts, and ends). The worker is back in the stack before the outcome reaches the loop, so
        a call made as soon as the last one returns finds it there (not a new thread)."""
        with self._lock:
            done.finished = True
            if me in self._leaving:
                queued, leaving = None, True
            else:
                queued, leaving = self._backlog.popleft() if self._backlog else None, False
                if queued is None and not self._closed:
                    self._idle.append(slot)
        deliver()
        if leaving:
            return None
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
        write in progress is never cut off). Safe to call twice; later jobs are refused. Threads still
        running an interrupted job are not waited for (they had their grace)."""
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
