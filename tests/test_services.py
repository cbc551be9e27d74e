"""The lifecycle of project services (opencode_cli/services.py), with real loops, threads and processes."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from opencode_cli.errors import ToolError
from opencode_cli.services import Portal, ProcessService, Service, ServiceError, Services, spawn

T = TypeVar("T")
LIMIT = 60.0  # a generous bound for waiting on an event; nothing waits for it to pass


def run(coroutine: Awaitable[T], limit: float = LIMIT) -> T:
    """Run a test body on a fresh loop, bounded in time."""
    return asyncio.run(asyncio.wait_for(coroutine, limit))  # type: ignore[arg-type]


def bounded(portal: Portal, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``portal.call``, bounded in time."""
    return portal.call(lambda: asyncio.wait_for(fn(*args), LIMIT))


class Recorded(Service):
    """A service that logs its starts and stops, and can be told to fail or hang."""

    def __init__(
        self, name: str, log: list[tuple[str, str]], *, start_error: str = "", stop: str = ""
    ) -> None:
        self.name = name
        self.log = log
        self.start_error = start_error
        self.stop_mode = stop

    async def start(self) -> None:
        self.log.append(("start", self.name))
        await asyncio.sleep(0.01)  # a real suspension: concurrent callers arrive while it starts
        if self.start_error:
            raise ValueError(self.start_error)

    async def stop(self) -> None:
        self.log.append(("stop", self.name))
        if self.stop_mode == "raise":
            raise OSError("disk on fire")
        if self.stop_mode == "hang":
            await asyncio.sleep(3600)


def gone(pid: int) -> bool:
    """The process no longer runs: reaped, or a zombie waiting for init (orphans here are init's)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] == b"Z"


async def until_gone(pid: int) -> None:
    while not gone(pid):
        await asyncio.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not gone(pid)


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


def test_started_lazily_and_once() -> None:
    async def body() -> None:
        log: list[tuple[str, str]] = []
        made: list[Recorded] = []

        def factory() -> Recorded:
            made.append(Recorded("a", log))
            return made[-1]

        services = Services()
        assert made == [] and "a" not in services and services.peek("a") is None
        first, second = await asyncio.gather(services.get("a", factory), services.get("a", factory))
        assert first is second is made[0] and len(made) == 1
        many = await asyncio.gather(*(services.get("a", factory) for _ in range(100)))
        assert all(service is first for service in many)
        assert log == [("start", "a")] and services.peek("a") is first and "a" in services

        hundred: list[Recorded] = []
        results = await asyncio.gather(
            *(
                services.get("b", lambda: hundred.append(Recorded("b", log)) or hundred[-1])
                for _ in range(100)
            )
        )
        assert len(hundred) == 1 and {id(r) for r in results} == {id(hundred[0])}
        assert [s.as_dict() for s in services.statuses()] == [
            {"name": "a", "state": "running", "detail": None, "error": None},
            {"name": "b", "state": "running", "detail": None, "error": None},
        ]
        await services.aclose()

    run(body())


def test_stopped_in_reverse_order_and_bad_stops_are_bounded() -> None:
    async def body() -> None:
        log: list[tuple[str, str]] = []
        warnings: list[str] = []
        services = Services(warn=warnings.append, stop_timeout=0.2)
        for name, mode in [("a", ""), ("b", "raise"), ("c", "hang"), ("d", "")]:
            await services.get(name, lambda name=name, mode=mode: Recorded(name, log, stop=mode))
        await services.aclose()
        assert [entry for entry in log if entry[0] == "stop"] == [("stop", n) for n in "dcba"]
        assert warnings == ["service c did not stop within 0.2s", "service b failed to stop: disk on fire"]
        assert [(s.name, s.state) for s in services.statuses()] == [(n, "stopped") for n in "abcd"]
        with pytest.raises(RuntimeError, match="services are closed"):
            await services.get("e", lambda: Recorded("e", log))
        await services.aclose()  # idempotent: nothing is stopped twice
        assert len([entry for entry in log if entry[0] == "stop"]) == 4

    run(body())


def test_failed_start_is_reported_and_retried() -> None:
    async def body() -> None:
        log: list[tuple[str, str]] = []
        services = Services()
        errors = ["boom"]

        def factory() -> Recorded:
            return Recorded("x", log, start_error=errors.pop() if errors else "")

        results = await asyncio.gather(
            *(services.get("x", factory) for _ in range(3)), return_exceptions=True
        )
        assert all(isinstance(r, ServiceError) and isinstance(r, ToolError) for r in results)
        assert {str(r) for r in results} == {"service x failed to start: boom"}
        assert [s.as_dict() for s in services.statuses()] == [
            {"name": "x", "state": "failed", "detail": None, "error": "boom"}
        ]
        assert log == [("start", "x"), ("stop", "x")]  # its stop released what the start got
        assert services.peek("x") is None

        service = await services.get("x", factory)
        assert services.peek("x") is service and services.statuses()[0].state == "running"
        await services.aclose()
        assert log[-1] == ("stop", "x")

    run(body())


def test_restart_after_stop_and_close_during_start() -> None:
    async def body() -> None:
        log: list[tuple[str, str]] = []
        services = Services()
        a1 = await services.get("a", lambda: Recorded("a", log))
        await services.get("b", lambda: Recorded("b", log))
        await services.stop("a")
        assert services.statuses()[0].state == "stopped"
        a2 = await services.get("a", lambda: Recorded("a", log))
        assert a2 is not a1 and [s.name for s in services.statuses()] == ["b", "a"]  # a restart goes last

        class Slow(Recorded):
            async def start(self) -> None:
                self.log.append(("start", self.name))
                await asyncio.sleep(3600)

        waiter = asyncio.ensure_future(services.get("slow", lambda: Slow("slow", log)))
        while ("start", "slow") not in log:
            await asyncio.sleep(0.01)
        await services.aclose()
        with pytest.raises(RuntimeError, match="services are closed"):
            await waiter
        assert log[-3:] == [("stop", "slow"), ("stop", "a"), ("stop", "b")]

    run(body())


def test_get_from_another_loop_raises() -> None:
    log: list[tuple[str, str]] = []
    services = Services()
    run(services.get("a", lambda: Recorded("a", log)))
    with pytest.raises(RuntimeError, match="another event loop"):
        run(services.get("a", lambda: Recorded("a", log)))


def test_portal_runs_services_and_closes_them() -> None:
    log: list[tuple[str, str]] = []
    services = Services()
    portal = Portal()
    service = bounded(portal, services.get, "a", lambda: Recorded("a", log))
    assert bounded(portal, services.get, "a", lambda: Recorded("a", log)) is service
    assert portal.loop is services.loop  # bound to the portal's loop, not a throwaway one

    async def fails() -> None:
        raise KeyError("nope")

    with pytest.raises(KeyError, match="nope"):
        portal.call(fails)

    async def reentrant() -> str:
        try:
            portal.call(asyncio.sleep, 0)
        except RuntimeError as error:
            return str(error)
        return "no error"

    assert "deadlock" in bounded(portal, reentrant)
    thread = next(t for t in threading.enumerate() if t.name == "opencode-portal")
    portal.close(final=services.aclose)
    assert log == [("start", "a"), ("stop", "a")] and not thread.is_alive()
    portal.close(final=services.aclose)  # idempotent
    assert portal.closed and services.closed and portal.loop is services.loop and portal.loop.is_closed()
    with pytest.raises(RuntimeError, match="closed"):
        portal.call(asyncio.sleep, 0)


def test_services_close_from_another_thread_uses_their_loop() -> None:
    log: list[tuple[str, str]] = []
    services = Services()
    portal = Portal()
    bounded(portal, services.get, "a", lambda: Recorded("a", log))
    services.close()
    assert log == [("start", "a"), ("stop", "a")] and services.statuses()[0].state == "stopped"
    portal.close(final=services.aclose)
    assert log == [("start", "a"), ("stop", "a")]


def blocked_in_wait(thread: threading.Thread, limit: float) -> bool:
    """Wait until ``thread`` blocks on a lock inside a future's ``result()`` (the portal's wait)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident or 0)
        names = []
        while frame is not None:
            names.append(frame.f_code.co_name)
            frame = frame.f_back
        if names[:2] == ["wait", "result"]:  # threading.Condition.wait under Future.result
            return True
        time.sleep(0.001)
    return False


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
def test_portal_call_interrupted_cancels_the_coroutine() -> None:
    portal = Portal()
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def interrupt() -> None:
        if started.wait(LIMIT) and blocked_in_wait(threading.main_thread(), LIMIT):
            os.kill(os.getpid(), signal.SIGINT)  # conftest's deliverable_sigint: it arrives, even under `&`

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        portal.call(forever)
    assert cancelled.wait(LIMIT)
    portal.close()


@needs_proc
def test_process_service_stops_its_whole_group() -> None:
    async def body() -> None:
        services = Services()
        service = await services.get("sh", lambda: ProcessService(["sh", "-c", "sleep 1000 & echo $!; wait"]))
        assert isinstance(service, ProcessService) and service.process is not None
        child = service.process.pid
        assert service.process.stdout is not None
        grandchild = int(await service.process.stdout.readline())
        assert alive(child) and alive(grandchild)
        assert services.statuses()[0].detail == f"pid {child}"
        await services.aclose()
        assert not os.path.exists(f"/proc/{child}")  # reaped
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)
        await until_gone(grandchild)
        assert services.statuses()[0].detail is None

    run(body())


@needs_proc
def test_process_ignoring_sigterm_is_killed() -> None:
    async def body() -> None:
        services = Services()
        argv = ["sh", "-c", 'trap "" TERM; sleep 1000 & echo $!; wait']
        service = await services.get("stubborn", lambda: ProcessService(argv, timeout=0.3))
        assert isinstance(service, ProcessService) and service.process and service.process.stdout
        grandchild = int(await service.process.stdout.readline())
        await services.aclose()
        assert service.process.returncode == -signal.SIGKILL
        await until_gone(grandchild)

    run(body())


@needs_proc
def test_children_spawned_by_a_start_are_killed_even_if_stop_forgets() -> None:
    pids: list[int] = []

    class Careless(Service):
        async def start(self) -> None:
            pids.append((await spawn("sleep", "1000")).pid)

        async def stop(self) -> None:
            pass

    async def body() -> None:
        services = Services()
        await services.get("careless", Careless)
        assert alive(pids[0])
        await services.aclose()
        await until_gone(pids[0])

    run(body())


@needs_proc
# the scenario itself leaves the child's transport to a closed loop: its finalizer complains when collected
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_close_after_the_loop_is_gone_kills_the_children() -> None:
    warnings: list[str] = []
    services = Services(warn=warnings.append)

    async def body(services: Services) -> int:
        service = await services.get("p", lambda: ProcessService(["sleep", "1000"]))
        assert isinstance(service, ProcessService) and service.process is not None
        return service.process.pid

    pid = run(body(services))  # asyncio.run returned without aclose: the loop is closed
    assert alive(pid)
    services.close()
    assert warnings == ["service p was not stopped: its event loop is gone"]
    run(until_gone(pid))
    assert services.statuses()[0].state == "stopped"
    for thread in threading.enumerate():  # asyncio's child watcher holds the transport until it reaps
        if "waitpid-" in thread.name and pid in getattr(thread, "_args", ()):  # this child's, not others'
            thread.join(LIMIT)
    # The transport outlived its loop (the scenario): its finalizer fails; collect it here, not later.
    unraisable: list[str] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda info: unraisable.append(str(info.exc_value))
    try:
        del services
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert set(unraisable) <= {"Event loop is closed"}


EXITING = """
import asyncio, atexit, sys
from opencode_cli.services import Portal, ProcessService, Services

services, portal = Services(), Portal()
atexit.register(portal.close, services.aclose)
service = portal.call(services.get, "sh", lambda: ProcessService(["sh", "-c", "sleep 1000 & echo $!; wait"]))

async def grandchild():
    return int(await service.process.stdout.readline())

print(service.process.pid, portal.call(grandchild), flush=True)
sys.exit("leaving with an error")
"""


@needs_proc
def test_a_project_exiting_through_atexit_stops_its_services() -> None:
    async def body() -> None:
        script = await asyncio.create_subprocess_exec(
            sys.executable, "-c", EXITING, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await script.communicate()
        assert script.returncode == 1 and err.decode().strip() == "leaving with an error"
        child, grandchild = map(int, out.split())
        await until_gone(child)
        await until_gone(grandchild)

    run(body())


PARENT = """
import asyncio
from opencode_cli.services import spawn

async def main():
    child = await spawn("sleep", "1000")
    print(child.pid, flush=True)
    await asyncio.sleep(1000)

asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_children_die_with_a_killed_parent() -> None:
    async def body() -> None:
        parent = await asyncio.create_subprocess_exec(sys.executable, "-c", PARENT, stdout=subprocess.PIPE)
        assert parent.stdout is not None
        child = int(await parent.stdout.readline())
        try:
            assert alive(child)
            parent.kill()
            await parent.wait()
            await until_gone(child)
        finally:
            if not gone(child):
                os.kill(child, signal.SIGKILL)

    run(body(), limit=10.0)
