"""Event-loop helpers shared by the rooms that cross between threads and loops, and the loop-optional
forms of what a call does on a loop (:func:`offload`, :func:`need_loop`), so that a call driven without
a loop (:mod:`opencode_cli.drive`) imports no asyncio until something really has to wait."""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

#: What a driven coroutine yields to say that the rest of it needs a running event loop.
NEED_LOOP = object()


class _Driving(threading.local):
    depth = 0


_driving = _Driving()


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None``. Without asyncio imported no loop can run, so
    the answer is then ``None`` at once (asyncio is not imported for it)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def driving() -> bool:
    """Whether this thread is stepping a coroutine by hand for :func:`opencode_cli.drive.drive` (outside
    of a function :func:`offload` runs inline): code that would await something then gets it awaited."""
    return _driving.depth > 0


class driven:
    """Context manager marking this thread as stepping a driven coroutine (see :func:`driving`)."""

    def __init__(self, on: bool = True) -> None:
        self._on = on
        self._saved = 0

    def __enter__(self) -> None:
        self._saved = _driving.depth
        _driving.depth = self._saved + 1 if self._on else 0

    def __exit__(self, *exc: object) -> None:
        _driving.depth = self._saved


async def offload(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await asyncio.to_thread(fn, *args, **kwargs)`` on a running loop; without one (a call driven by
    hand, which has nothing else to run meanwhile) ``fn`` is called inline."""
    if running_loop() is None:
        with driven(False):
            return fn(*args, **kwargs)
    import asyncio

    return await asyncio.to_thread(fn, *args, **kwargs)


async def offload_to_end(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """:func:`offload` for work that must not be left half done (a write under a file lock): a
    cancellation that comes while ``fn`` runs waits for its end and is raised after. Without a loop
    ``fn`` is called inline."""
    if running_loop() is None:
        with driven(False):
            return fn(*args, **kwargs)
    import asyncio

    future = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:
            break  # ``fn`` failed: ``future.result()`` raises it below
    if cancelled:
        raise asyncio.CancelledError
    return future.result()


@types.coroutine
def need_loop() -> Generator[Any, Any, None]:
    """Awaited before code that needs a running event loop (a future, a task, a subprocess): on a loop it
    returns at once; in a coroutine driven by hand it hands the rest of the coroutine to a loop."""
    if running_loop() is None:
        yield NEED_LOOP


def is_cancellation(error: BaseException) -> bool:
    """Whether ``error`` is an ``asyncio.CancelledError`` (without importing asyncio to name the class:
    nothing can have been cancelled before it is imported)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(error, asyncio.CancelledError)
