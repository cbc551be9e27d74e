"""Event-loop helpers shared by the rooms that cross between threads and loops."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import AbortedError

if TYPE_CHECKING:
    import asyncio

    from .context import AbortSignal

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


async def cancelled_by(
    work: Awaitable[T],
    subscribe: Callable[[Callable[[], None]], Callable[[], None]],
    interrupted: Callable[[], BaseException],
) -> T:
    """Await ``work`` in the calling task, and end it early when a trigger fires: the task is cancelled
    and ``interrupted()`` is raised in place of that cancellation.

    ``subscribe(cancel)`` arranges for ``cancel`` to be called on the loop's thread when the trigger
    fires, and returns what undoes that. ``work`` gets no task of its own (no extra turns of the loop).
    The one cancellation the trigger caused is taken back (``Task.uncancel``), so a cancellation from
    anywhere else still propagates as it is; when ``work`` turns the trigger's cancellation into an error
    of its own, that error too becomes ``interrupted()``, unless it is of that type already (it then
    keeps its own details, such as a worker thread that was abandoned). Used for a call's abort and for
    an MCP server lost under a request.
    """
    import asyncio

    task = asyncio.current_task()
    if task is None:  # not in a task: nothing to cancel
        return await work
    active, fired = True, False

    def cancel() -> None:  # on the loop's thread, like the ``finally`` below: no race between them
        nonlocal fired
        if active and not task.done():
            fired = True
            task.cancel()

    undo = subscribe(cancel)
    try:
        return await work
    except (asyncio.CancelledError, Exception) as error:
        if fired and task.uncancel() == 0:  # the trigger's cancellation alone
            replacement = interrupted()
            if type(error) is type(replacement):  # already the interruption, with details of its own
                raise
            raise replacement from None
        raise
    finally:
        active = False
        undo()


async def until_aborted(work: Awaitable[T], abort: AbortSignal) -> T:
    """Await ``work`` in the calling task; when ``abort`` is set first (from any thread), ``work`` is
    cancelled and :class:`~opencode_cli.errors.AbortedError` raised (see :func:`cancelled_by`). The one
    way a call's abort ends what waits for it: a tool's execution and the run loop's steps."""
    import asyncio

    loop = asyncio.get_running_loop()
    return await cancelled_by(
        work, lambda cancel: abort.on_abort(lambda: loop.call_soon_threadsafe(cancel)), AbortedError
    )


async def abort_on_cancel(work: Awaitable[T], abort: AbortSignal) -> T:
    """Await ``work``, a call made with ``abort`` (``session.execute(..., abort=abort)``), so that a
    cancellation of the calling task is the call's abort: for a host whose requests are cancelled as
    tasks (an MCP client's ``notifications/cancelled``, a web framework's disconnect). ``work`` runs in a
    task of its own; a cancellation sets ``abort`` (the tool sees ``ctx.abort``, a sync tool's thread
    is waited for), waits for the call to end as interrupted, then propagates."""
    import asyncio

    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        abort.abort("cancelled")
        while not task.done():  # bounded: an aborted call ends (a sync tool's thread within its grace)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: the call's own outcome (interrupted) is not the caller's
        raise
