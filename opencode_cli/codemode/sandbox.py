"""The sandbox: a pool of ``monty`` worker processes (a project service) and the drive of one script.

A script runs in a worker of its own, checked out of the pool for the run: the pool is ``pydantic-monty``'s
(``Monty``), its workers are child processes the pool starts and stops, and :class:`Sandbox` is the project
service that owns it (stopped when the project closes; a worker also ends when we die, as its pipe closes).

The script is driven step by step (``feed_start`` and snapshots), each blocking step in a worker thread,
so that the tool calls run on the caller's loop: a call to a host function suspends the script, the call
starts as a task, the script goes on with a future for it, and when it awaits the future it is resumed
with the result or the exception. ``asyncio.gather`` in the script therefore runs calls concurrently;
``asyncio.sleep`` and ``time.sleep`` wait on the host.

Limits: the time (wall clock, tool calls included), the memory of the interpreter, the number of tool
calls and the size of the printed output; each ends the script with its own :class:`LimitExceeded`. An
abort ends it with :class:`Cancelled`. Whatever ends a script early, its worker is killed (the pool starts
another), so nothing of it goes on running.

(pydantic-monty's async pool and its watchdog timers are not used: in 1.4 a timer or future that settles
while the interpreter shuts down aborts the process.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ConfigError, ToolError
from ..services import Service

if TYPE_CHECKING:
    from ..config import Config
    from ..context import AbortSignal
    from .catalog import Binding

#: The service key of the sandbox pool.
SERVICE_KEY = "codemode:sandbox"
#: What the script has imported before its first line.
PRELUDE = "import asyncio\nimport tools"


@dataclass(frozen=True)
class Limits:
    """What one script may use (``[experimental] code_mode_limits`` overrides each)."""

    seconds: float = 60.0
    """Wall-clock time of the whole run, tool calls included."""
    memory_mb: int = 256
    """Heap of the interpreter."""
    tool_calls: int = 100
    """Tool calls in one run."""
    output_kb: int = 1024
    """Printed output, and the result's text."""

    KEYS: ClassVar[tuple[str, ...]] = ("seconds", "memory_mb", "tool_calls", "output_kb")

    @classmethod
    def from_config(cls, config: Config) -> Limits:
        """The limits of ``[experimental] code_mode_limits = {seconds = 30, …}``; a bad value is a
        :class:`ConfigError` naming the key."""
        table = config.get("experimental.code_mode_limits")
        if table is None:
            return cls()
        if not isinstance(table, dict):
            raise ConfigError("experimental.code_mode_limits must be a table (seconds, memory_mb, …)")
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in cls.KEYS:
                raise ConfigError(
                    f"experimental.code_mode_limits.{key} is not a limit (use {', '.join(cls.KEYS)})"
                )
            number_ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
            if not number_ok or (key != "seconds" and not isinstance(value, int)):
                kind = "a positive number" if key == "seconds" else "a positive integer"
                raise ConfigError(f"experimental.code_mode_limits.{key} must be {kind}, not {value!r}")
            values[key] = value
        return cls(**values)


class ScriptFailure(ToolError):
    """A script that did not finish; :attr:`logs` is what it printed before it stopped."""

    logs: str = ""


class LimitExceeded(ScriptFailure):
    """The script went over one of its limits; the message names which."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Cancelled(ScriptFailure):
    """The script was ended by an abort."""

    def __init__(self) -> None:
        super().__init__("Execution cancelled.")


@dataclass(eq=False)
class ScriptError(ScriptFailure):
    """The script did not compile, or raised: the Python error, where, and the source line."""

    kind: str
    """``syntax`` or ``runtime``."""
    type_name: str
    message: str
    line: int | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        super().__init__(f"{self.type_name}: {self.message}")


Call = Callable[[str, tuple[Any, ...], dict[str, Any]], Awaitable[Any]]
"""What a call of a host function runs: ``call(dotted_name, args, kwargs)``; its exception is raised in the
script."""


@dataclass
class Run:
    """What a finished script gives: its value and what it printed."""

    value: Any
    logs: str


@dataclass
class _State:
    limits: Limits
    pid: int | None = None
    logs: list[str] = field(default_factory=list)
    printed: int = 0
    stopped: LimitExceeded | Cancelled | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    loop: asyncio.AbstractEventLoop | None = None

    def stop(self, reason: LimitExceeded | Cancelled) -> LimitExceeded | Cancelled:
        """End the run: remember why, kill the worker (whatever it was doing), wake the supervisor. Returns
        the reason the run stopped for (the first one given)."""
        if self.stopped is None:
            self.stopped = reason
        stopped = self.stopped
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.wake.set)
        return stopped

    def on_print(self, stream: str, text: str) -> None:
        """A print of the script (called in the worker thread): kept, up to the output limit."""
        self.printed += len(text.encode("utf-8", "replace"))
        if self.printed > self.limits.output_kb * 1024:
            self.stop(
                LimitExceeded(
                    "output",
                    f"Execution stopped: the script printed more than {self.limits.output_kb} KB "
                    "(the output limit).",
                )
            )
            return
        self.logs.append(text)


class Sandbox(Service):
    """The project's pool of sandbox workers; :meth:`run` runs one script."""

    name = "sandbox"
    stop_on_any_loop: ClassVar[bool] = True

    def __init__(self, max_workers: int = 2) -> None:
        self.max_workers = max_workers
        self._pool: Any = None

    def detail(self) -> str | None:
        """The pool size."""
        return f"monty pool, up to {self.max_workers} workers" if self._pool is not None else None

    async def start(self) -> None:
        """Start the pool (one warm worker); a missing ``pydantic-monty`` is a clear error."""
        try:
            from pydantic_monty import Monty
        except ImportError as error:
            raise ToolError(f"code mode needs the pydantic-monty package ({error})") from None
        pool = Monty(
            min_processes=1,
            max_processes=self.max_workers,
            feed_duration_limit_grace=None,
            turn_duration_limit_grace=None,
        )
        await asyncio.to_thread(pool.__enter__)
        self._pool = pool

    async def stop(self) -> None:
        """Stop every worker of the pool."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.__exit__, None, None, None)

    async def run(
        self,
        code: str,
        modules: dict[str, Any],
        call: Call,
        limits: Limits,
        abort: AbortSignal | None = None,
    ) -> Run:
        """Run ``code`` with ``modules`` importable (``ExternalModule`` values; ``tools`` is imported
        before the first line), each host call through ``call``. Raises :class:`ScriptError`,
        :class:`LimitExceeded` or :class:`Cancelled`."""
        if self._pool is None:
            raise ToolError("the sandbox is not running")
        state = _State(limits, loop=asyncio.get_running_loop())
        session = self._pool.checkout(
            limits={
                "max_feed_duration_secs": float(limits.seconds),
                "max_memory": limits.memory_mb * 1024 * 1024,
                "max_suspensions": limits.tool_calls * 4 + 1000,
            },
            external_modules=modules,
        )
        await asyncio.to_thread(session.__enter__)
        state.pid = session.worker_pid
        driver = _Driver(session, state, call)
        drive = asyncio.ensure_future(driver.run(code))
        watchers: list[asyncio.Future[Any]] = [asyncio.ensure_future(state.wake.wait())]
        if abort is not None:
            watchers.append(asyncio.ensure_future(abort.wait_async()))
        try:
            try:
                async with asyncio.timeout(limits.seconds):
                    await asyncio.wait([drive, *watchers], return_when=asyncio.FIRST_COMPLETED)
            except TimeoutError:
                state.stop(_timed_out(limits))
            if abort is not None and abort.aborted:
                state.stop(Cancelled())
            if not drive.done():  # stopped: its worker is killed, so the step in flight ends at once
                state.stop(state.stopped or Cancelled())
                drive.cancel()
            with contextlib.suppress(BaseException):
                await drive
            if state.stopped is not None:
                raise state.stopped
            return drive.result()
        except ScriptFailure as error:
            error.logs = "".join(state.logs)
            raise
        finally:  # also when the caller is cancelled: nothing of the script goes on
            for watcher in watchers:
                watcher.cancel()
            if not drive.done():
                state.stop(state.stopped or Cancelled())
                drive.cancel()
            driver.cancel_calls()
            await driver.settle()
            await asyncio.to_thread(_leave, session)


def tools_module(bindings: Iterable[Binding]) -> dict[str, Any]:
    """The ``tools`` module of a script: one submodule per namespace, one host function per tool (the
    functions are never called here: each call suspends the script and is answered by :class:`_Driver`)."""
    from pydantic_monty import ExternalModule

    namespaces: dict[str, dict[str, Any]] = {}
    for binding in bindings:
        namespaces.setdefault(binding.namespace, {})[binding.name] = _host_function
    return {"tools": ExternalModule({name: ExternalModule(funcs) for name, funcs in namespaces.items()})}


def _host_function(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - stands for a tool, never run
    raise RuntimeError("tool calls are answered by the driver")


def _leave(session: Any) -> None:
    """Return the worker to the pool (a killed one is replaced by the pool)."""
    with contextlib.suppress(Exception):
        session.__exit__(None, None, None)


def _timed_out(limits: Limits) -> LimitExceeded:
    return LimitExceeded("time", f"Execution timed out after {limits.seconds:g} s (the time limit).")


def _out_of_memory(limits: Limits) -> LimitExceeded:
    return LimitExceeded(
        "memory",
        f"Execution stopped: the script used more than {limits.memory_mb} MB of memory (the memory limit).",
    )


#: The OS calls that wait: answered on the host, the async one as a future (so gathered sleeps overlap).
_SLEEPS = {"system.sleep": False, "system.async_sleep": True}


class _Driver:
    """Drives one script from snapshot to snapshot; each blocking step runs in a worker thread."""

    def __init__(self, session: Any, state: _State, call: Call) -> None:
        self.session = session
        self.state = state
        self.call = call
        self.calls: dict[int, asyncio.Future[Any]] = {}
        self.count = 0
        self._step: asyncio.Future[Any] | None = None

    async def _blocking(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        self._step = loop.run_in_executor(None, lambda: function(*args, **kwargs))
        try:
            return await asyncio.shield(self._step)
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            _translate(error, self.state)
            raise

    async def settle(self) -> None:
        """Wait for the step in flight (after the worker was killed, it fails at once)."""
        if self._step is not None:
            with contextlib.suppress(BaseException):
                await self._step

    def cancel_calls(self) -> None:
        """Cancel the host calls still running."""
        for task in self.calls.values():
            task.cancel()

    async def run(self, code: str) -> Run:
        await self._feed(PRELUDE)
        value = await self._feed(code)
        self.cancel_calls()  # calls the script started and never awaited
        self.calls.clear()
        return Run(value, "".join(self.state.logs))

    async def _feed(self, code: str) -> Any:
        from pydantic_monty import FunctionSnapshot, FutureSnapshot, MontyComplete, NameLookupSnapshot

        snapshot = await self._blocking(self.session.feed_start, code, print_callback=self.state.on_print)
        while not isinstance(snapshot, MontyComplete):
            if isinstance(snapshot, FunctionSnapshot):
                snapshot = await self._function(snapshot)
            elif isinstance(snapshot, FutureSnapshot):
                snapshot = await self._future(snapshot)
            elif isinstance(snapshot, NameLookupSnapshot):
                snapshot = await self._blocking(snapshot.resume)  # an undefined name: NameError
            else:  # pragma: no cover - a snapshot kind of a newer pydantic-monty
                raise ToolError(f"the sandbox stopped at an unknown step: {type(snapshot).__name__}")
        return snapshot.output

    async def _function(self, snapshot: Any) -> Any:
        name = snapshot.function_name
        if snapshot.is_os_function:
            if name in _SLEEPS:
                seconds = _seconds(snapshot.args)
                if _SLEEPS[name]:
                    self.calls[snapshot.call_id] = asyncio.ensure_future(asyncio.sleep(seconds))
                    return await self._blocking(snapshot.resume, {"future": ...})
                await asyncio.sleep(seconds)
                return await self._blocking(snapshot.resume, {"return_value": None})
            return await self._blocking(snapshot.resume_auto)  # imports of our modules; the rest refused
        if not name.startswith("tools."):  # a name the script never defined, called
            error = NameError(f"name '{name}' is not defined")
            return await self._blocking(snapshot.resume, {"exception": error})
        self.count += 1
        if self.count > self.state.limits.tool_calls:
            raise self.state.stop(
                LimitExceeded(
                    "tool_calls",
                    f"Execution stopped: the script made more than {self.state.limits.tool_calls} tool calls "
                    "(the tool-call limit).",
                )
            )
        self.calls[snapshot.call_id] = asyncio.ensure_future(
            self.call(name, tuple(snapshot.args), dict(snapshot.kwargs))
        )
        return await self._blocking(snapshot.resume, {"future": ...})

    async def _future(self, snapshot: Any) -> Any:
        waiting = [self.calls[i] for i in snapshot.pending_call_ids if i in self.calls]
        if not waiting:
            raise ToolError("the script waits for a call the sandbox does not know")
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        results: dict[int, Any] = {}
        for call_id in snapshot.pending_call_ids:
            task = self.calls.get(call_id)
            if task is None or not task.done():
                continue
            del self.calls[call_id]
            error = RuntimeError("the call was cancelled") if task.cancelled() else task.exception()
            results[call_id] = {"exception": error} if error is not None else {"return_value": task.result()}
        return await self._blocking(snapshot.resume, results)


def _seconds(args: Any) -> float:
    try:
        return max(0.0, float(args[0]))
    except (IndexError, TypeError, ValueError):
        return 0.0


def _translate(error: BaseException, state: _State) -> None:
    """Raise what a failed step means: the run's stop reason, a limit, or the script's own error."""
    from pydantic_monty import MontyCrashedError, MontyRuntimeError, MontySyntaxError

    if state.stopped is not None:
        raise state.stopped from None
    if isinstance(error, MontySyntaxError | MontyRuntimeError):
        inner = error.exception()
        type_name, message = type(inner).__name__, str(inner)
        if type_name == "TimeoutError" and message.startswith("feed time limit exceeded"):
            raise _timed_out(state.limits) from None
        if type_name == "MemoryError" and message.startswith("memory limit exceeded"):
            raise _out_of_memory(state.limits) from None
        frames = error.traceback()
        last = frames[-1] if frames else None
        raise ScriptError(
            "syntax" if isinstance(error, MontySyntaxError) else "runtime",
            type_name,
            message,
            last.line if last is not None else None,
            last.source_line if last is not None else None,
        ) from None
    if isinstance(error, MontyCrashedError):
        raise ToolError(f"the sandbox worker died: {error}") from None
