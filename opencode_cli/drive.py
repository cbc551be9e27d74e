"""Run a coroutine without an event loop for as long as it never has to wait (issue 19).

A one-shot CLI call of a built-in that never waits (a read, a glob) does not need asyncio at all:
:func:`drive` steps the coroutine by hand. If it suspends on something that really waits (a future of a
permission prompt, after :func:`~opencode_cli.loops.need_loop`), the rest of it is handed to a new loop
(``asyncio.run``): what ran before the suspension ran without a loop, what follows runs in the loop.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

from .loops import NEED_LOOP, driven

T = TypeVar("T")


def drive(coro: Coroutine[Any, Any, T], *, on_loop: Callable[[], None] | None = None) -> T:
    """Run ``coro`` to its end and return its value (or raise its error).

    It is stepped in this thread with no loop while it does not suspend (a bare ``yield``, as
    ``asyncio.sleep(0)``'s, just steps it again). Once it yields anything else, the rest of it runs on a
    new event loop by ``asyncio.run``; ``on_loop()`` is called first, in that loop's task (to install
    what needs a loop, such as a signal handler). If the driving ends early (Ctrl-C between two steps,
    ``on_loop`` failing), the coroutine is closed, so its ``finally`` blocks run. Not for a thread that
    runs a loop already: there, await the coroutine.
    """
    yielded: Any = None
    try:
        with driven():
            while yielded is None:
                yielded = coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    except BaseException:
        coro.close()
        raise
    handed = False
    try:
        import asyncio

        async def rest() -> T:
            nonlocal handed
            if on_loop is not None:
                on_loop()
            handed = True
            return await _resume(coro, yielded)  # type: ignore[no-any-return]

        return asyncio.run(rest())
    finally:
        if not handed:
            coro.close()


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], value: Any) -> Generator[Any, Any, T]:
    """The rest of ``coro``, whose last step yielded ``value``, as a ``yield from`` would forward it: what
    it yields goes to the loop's task, what the task sends or throws goes back to it."""
    while True:
        try:
            if value is NEED_LOOP:  # the loop it asked for is running now: go on at once
                value = coro.send(None)
                continue
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as error:
                value = coro.throw(error)
            else:
                value = coro.send(sent)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
