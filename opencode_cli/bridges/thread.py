"""A thread of one's own for an object that must be used where it was made (an llm toolbox holding a
``sqlite3`` connection, which refuses any other thread): :class:`OwnThread`."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_STOP = None


class OwnThread:
    """One daemon thread running the functions handed to it, one at a time, in order.

    Its owner stops it with :meth:`stop` (a finalizer of the object it serves, so it ends with that
    object's generation); a daemon, it never holds the interpreter's exit up."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not _STOP:
            function, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(function())
            except BaseException as error:  # handed to the caller, whatever it is
                future.set_exception(error)

    def submit(self, function: Callable[[], T]) -> Future[T]:
        """Run ``function`` in the thread; its future."""
        future: Future[T] = Future()
        self._jobs.put((function, future))
        return future

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` in the thread and wait for it (from any other thread)."""
        return self.submit(function).result()

    async def acall(self, function: Callable[[], T]) -> T:
        """Run ``function`` in the thread; await it on the caller's loop (a cancel leaves it to finish)."""
        return await asyncio.wrap_future(self.submit(function))

    def stop(self) -> None:
        """End the thread once the functions handed to it so far have run."""
        self._jobs.put(_STOP)
