"""Event-loop helpers shared by the rooms that cross between threads and loops."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None`` (for code that must know which loop it is on,
    such as a service that lives on one). Without asyncio imported no loop can run, so the answer is then
    ``None`` at once (asyncio is not imported for it)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def to_end(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await asyncio.to_thread(fn, *args, **kwargs)`` for work that must not be left half done (a
    commit under a file lock): a cancellation that comes while ``fn`` runs waits for its end and is
    raised after."""
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


def is_cancellation(error: BaseException) -> bool:
    """Whether ``error`` is an ``asyncio.CancelledError`` (without importing asyncio to name the class:
    nothing can have been cancelled before it is imported)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(error, asyncio.CancelledError)
