"""The sync façade's loop: one daemon thread running one event loop, owned by a project."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio
    import threading

T = TypeVar("T")


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

    def call(
        self,
        fn: Callable[..., Coroutine[Any, Any, T]],
        *args: Any,
        interrupt: Callable[[], None] | None = None,
    ) -> T:
        """Run ``fn(*args)`` on the portal's loop and wait for its result; its exceptions propagate.

        An interruption of the wait (KeyboardInterrupt) calls ``interrupt()`` (a call's abort) and waits
        for the coroutine to end, then is re-raised; without ``interrupt``, or on a second interruption,
        the coroutine is cancelled.
        """
        import asyncio

        self._check_thread("call")
        loop = self.loop
        if self._closed:
            raise RuntimeError("the portal is closed")
        future = asyncio.run_coroutine_threadsafe(fn(*args), loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            if interrupt is None:
                future.cancel()
                raise
            interrupt()
            try:
                future.exception()  # the call ends as interrupted: its outcome is not the caller's
            except BaseException:
                future.cancel()  # interrupted again (or the wait failed): cut it short
            raise
        except BaseException:
            future.cancel()  # a no-op when the coroutine itself raised
            raise

    def close(self, final: Callable[[], Coroutine[Any, Any, Any]] | None = None) -> None:
        """Run ``final()`` on the loop (e.g. ``services.aclose``), then stop the loop and join the thread.

        Idempotent and safe from ``atexit``. When the loop never started, ``final`` is not run: nothing
        was started through the portal. From the portal's own thread (a finalizer run there) and without
        ``final`` it only asks the loop to stop.
        """
        import asyncio
        import threading

        if final is None and self._thread is not None and threading.current_thread() is self._thread:
            with self._lock:
                self._closed = True
            assert self._loop is not None
            self._loop.call_soon(self._loop.stop)
            return
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
                asyncio.run_coroutine_threadsafe(final(), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(self.join_timeout)
