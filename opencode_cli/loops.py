"""Event-loop helpers shared by the rooms that cross between threads and loops."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or ``None`` (asyncio is imported only when called)."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
