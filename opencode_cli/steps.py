"""Each operation written once: a core that says which hooks to call, and two drivers that call them.

Building a registry, describing a tool, making an offer and resolving it call plugin hooks
(``register_tools``, ``tool_definition``) that may be ``async def``. Each of these operations is one
generator, its *steps* (sans-IO, as h11 and h2 are written): it yields a :class:`HookStep` wherever it
needs a hook called and is sent back the results. :func:`drive` runs the steps from sync code
(:meth:`~opencode_cli.hookcalls.HookCalls.call_each`: with no loop running, ``async def`` implementations
are awaited on the project's portal), :func:`adrive` on the caller's loop
(:meth:`~opencode_cli.hookcalls.HookCalls.acall_each`). A sync entry point (``Registry.build``,
``Generation.offer``, ``Session.resolve``) and its async twin are each one line: the driver of the same
steps. Nothing here imports asyncio, so ``tools list`` stays without it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .hookcalls import HookCalls

T = TypeVar("T")


class HookStep:
    """A hook called plugin by plugin (one that raises loses its own contribution): what a core asks.

    A plain class with slots rather than a frozen dataclass: making a dataclass costs a third of a
    millisecond at every start (its methods are compiled from source), and a step is only read."""

    __slots__ = ("checkpoint", "kwargs", "name", "only", "plugins")

    def __init__(
        self,
        plugins: HookCalls,
        name: str,
        kwargs: dict[str, Any] | None = None,
        only: str | None = None,
        checkpoint: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        self.plugins = plugins
        self.name = name
        self.kwargs: dict[str, Any] = {} if kwargs is None else kwargs
        self.only = only
        self.checkpoint = checkpoint

    def __repr__(self) -> str:
        return f"HookStep({self.name!r}, only={self.only!r}, kwargs={sorted(self.kwargs)!r})"


#: An operation's steps: it yields hook calls, is sent their results, and returns its value.
Steps = Generator[HookStep, Any, T]


def call_each(
    plugins: HookCalls,
    name: str,
    *,
    only: str | None = None,
    checkpoint: Callable[[], Callable[[], None]] | None = None,
    **kwargs: Any,
) -> Steps[list[Any]]:
    """The step of calling ``name`` plugin by plugin (see ``HookCalls.call_each``); returns the results."""
    results: list[Any] = yield HookStep(plugins, name, kwargs, only, checkpoint)
    return results


def nothing(value: T) -> Steps[T]:
    """Steps that call no hook and return ``value``."""
    yield from ()
    return value


class _Run:
    """Where a driver is in ``steps``: what to send next (a hook's results, or its error thrown)."""

    def __init__(self, steps: Steps[Any]) -> None:
        self._steps = steps
        self._advance: Callable[[Any], HookStep] = steps.send
        self._value: Any = None
        self.result: Any = None

    def next(self) -> HookStep | None:
        """The next hook to call, or ``None`` once the steps returned (:attr:`result`)."""
        try:
            return self._advance(self._value)
        except StopIteration as stop:
            self.result = stop.value
            return None

    def sent(self, value: Any) -> None:
        self._advance, self._value = self._steps.send, value

    def raised(self, error: Exception) -> None:
        self._advance, self._value = self._steps.throw, error


def drive(steps: Steps[T]) -> T:
    """Run ``steps`` from sync code: each hook called with ``call_each``."""
    run = _Run(steps)
    while (step := run.next()) is not None:
        try:
            run.sent(
                step.plugins.call_each(step.name, only=step.only, checkpoint=step.checkpoint, **step.kwargs)
            )
        except Exception as error:
            run.raised(error)
    return run.result


async def adrive(steps: Steps[T]) -> T:
    """Run ``steps`` on the caller's loop: each hook called with ``acall_each`` (``async def`` ones
    awaited here)."""
    run = _Run(steps)
    while (step := run.next()) is not None:
        try:
            run.sent(
                await step.plugins.acall_each(
                    step.name, only=step.only, checkpoint=step.checkpoint, **step.kwargs
                )
            )
        except Exception as error:
            run.raised(error)
    return run.result
