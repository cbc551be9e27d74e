"""What a service is: :class:`Service`, its :class:`ServiceStatus`, and :class:`ServiceError`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from ..errors import ToolError

State = Literal["starting", "running", "failed", "stopping", "stopped"]


class ServiceError(ToolError):
    """A service could not start; the message is what the model sees."""


class Service:
    """A long-lived thing, started and stopped by :class:`Services`, which also tracks its state.

    ``stop()`` must be idempotent and safe after a partial or failed ``start()``.
    """

    name: str = "service"
    #: True when ``stop()`` works on any loop (not only the one ``start()`` ran on): :meth:`Services.close`
    #: may then call it on a fresh loop when the services' own loop is gone.
    stop_on_any_loop: ClassVar[bool] = False
    #: True when no other service depends on this one (an MCP connection): :meth:`Services.aclose` stops
    #: such services all at once, each within its bound, before the others in reverse start order.
    independent: ClassVar[bool] = False

    async def start(self) -> None:
        """Acquire the resource (connect, spawn, ...)."""

    async def stop(self) -> None:
        """Release the resource; idempotent."""

    def detail(self) -> str | None:
        """Extra status text for ``list`` commands, e.g. ``"pid 1234"``."""
        return None


@dataclass
class ServiceStatus:
    """One service as a ``list`` command shows it; ``name`` is its key in :class:`Services`."""

    name: str
    state: State
    detail: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The status as a JSON-ready dict."""
        return asdict(self)
