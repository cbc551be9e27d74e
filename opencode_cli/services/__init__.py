"""Long-lived things a project owns: MCP connections, language servers, model clients, child processes.

Lifecycle (the model is Starlette's lifespan, or one :class:`contextlib.AsyncExitStack` per project):

* A :class:`Service` is started lazily, by the first :meth:`Services.get` for its key, on the caller's
  running event loop; concurrent first callers share one start. Every session of the project shares it.
* A service whose start raised is ``failed``: every waiter gets :class:`ServiceError` (a
  :class:`~opencode_cli.errors.ToolError`, so a tool needing it reports the text to the model), its
  ``stop()`` is still called to release what the start got, and the next ``get`` tries again.
* :meth:`Services.aclose` stops the services in reverse start order (those marked ``independent``, such as
  MCP connections, first and all at once), each stop bounded by ``stop_timeout``;
  a stop that raises or hangs is reported through ``warn`` and the others are stopped anyway.

The loop rule: all services of one :class:`Services` live on one event loop, the loop of the first ``get``.
A ``get`` from another loop raises :class:`RuntimeError`. Sync code reaches that loop through a
:class:`Portal` (one daemon thread running one loop, owned by the project), never through a throwaway
``asyncio.run``: a connection opened on a loop dies with it.

No orphans: :func:`spawn` starts every child in its own process group (so :func:`terminate` reaches the
grandchildren too) and, on Linux, asks the kernel to SIGKILL it when we die (``PR_SET_PDEATHSIG``), which
covers SIGKILL and crashes where no Python code runs. Children spawned while a service starts (by its
``start()`` or the tasks it creates) are recorded for that service, and their groups are SIGKILLed after its
``stop()``, whatever the stop did. Ctrl-C, SIGTERM and errors are the caller's to route to ``aclose`` (a
``finally``, or :meth:`Portal.close` from ``atexit``); :meth:`Services.close` does it from sync code.
"""

from __future__ import annotations

from .base import Service, ServiceError, ServiceStatus, State
from .lifecycle import Services
from .portal import Portal
from .processes import ProcessService, spawn, terminate

__all__ = [
    "Portal",
    "ProcessService",
    "Service",
    "ServiceError",
    "ServiceStatus",
    "Services",
    "State",
    "spawn",
    "terminate",
]
