"""One door for change (issue 33): every report goes through the project's serialized builder, which
coalesces what arrives while it works and never drops a change."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable

from opencode_cli import tool
from opencode_cli.sources import Contribution, Source


class Versioned(Source):
    """A source whose one tool is named after its version; building it takes a moment (a thread switch)."""

    kind = "mcp"

    def __init__(self, name: str, gate: threading.Event | None = None) -> None:
        self.key = f"demo:{name}"
        self.name = name
        self.version = 0
        self.gate = gate
        self.entered = threading.Event()

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(5)
        made = tool(lambda: "ok", id=f"{self.name}_v{self.version}", description="A versioned tool.")
        return Contribution(self, [(made, None)])


def _expected(sources: list[Versioned]) -> set[str]:
    return {f"{source.name}_v{source.version}" for source in sources}


def _present(project, sources: list[Versioned]) -> set[str]:
    ids = set(project.registry.entries)
    return {tool_id for tool_id in ids if tool_id.split("_v")[0] in {s.name for s in sources}}


def test_reports_from_many_threads_at_once_are_never_lost(make_project) -> None:
    project = make_project()
    project.registry  # noqa: B018 - built before the sources come
    sources = [Versioned(f"s{n}") for n in range(12)]
    for source in sources:
        project.sources.add(source)
    start = threading.Barrier(len(sources))

    def bump(source: Versioned) -> None:
        start.wait()
        for _ in range(5):
            source.version += 1
            source.report_change()

    threads = [threading.Thread(target=bump, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()  # a quiet point: the thread that builds leaves only once no request is left

    assert _present(project, sources) == _expected(sources)


def test_a_report_made_while_a_build_runs_joins_the_next_build(make_project) -> None:
    project = make_project()
    project.registry  # noqa: B018
    gate = threading.Event()
    slow, quick = Versioned("slow", gate), Versioned("quick")
    project.sources.add(quick)
    gate.set()
    project.sources.add(slow)
    gate.clear()
    slow.entered.clear()
    built: list[int] = []
    project.builder.observe(lambda change: built.append(change.ticket))
    slow.version = 1
    worker = threading.Thread(target=slow.report_change)  # waits for the builder, held by the gate
    worker.start()
    assert slow.entered.wait(60)  # the build has begun (a bound for the failure, not a measure)
    quick.version = 1
    project.builder.request({quick.key}, wait=False)  # returns at once: the next build takes it
    quick.version = 2
    project.builder.request({quick.key}, wait=False)
    gate.set()
    worker.join()
    project.builder.wait()

    assert _present(project, [slow, quick]) == {"slow_v1", "quick_v2"}
    assert len(built) == 2  # the slow build, then one build carrying both of quick's reports


def test_reports_under_a_watcher_on_its_loop_are_never_lost(make_project) -> None:
    project = make_project()
    sources = [Versioned(f"w{n}") for n in range(10)]

    async def main() -> None:
        async with project.watch() as watcher:
            for source in sources:
                project.sources.add(source)
            for round_ in range(4):
                for source in sources:
                    source.version = round_ + 1
                    source.report_change()
                await asyncio.sleep(0)
            async with asyncio.timeout(20):  # a bound for the failure, not a measure
                while _present(project, sources) != _expected(sources):
                    await anext(watcher)

    asyncio.run(main())

    assert _present(project, sources) == _expected(sources)


def test_a_held_generation_is_replaced_by_one_that_carries_it(make_project) -> None:
    project = make_project()
    project.registry  # noqa: B018
    first, second = Versioned("first"), Versioned("second")
    project.sources.add(first)
    project.sources.add(second)
    reports: list[set[str]] = []
    project.builder.observe(lambda change: reports.append(change.keys))
    with project.generations.hold():
        first.version = 1
        first.report_change()
        second.version = 1
        second.report_change()
        assert (
            project.generations.pending and "first_v0" in project.registry.entries
        )  # nothing swapped during a hold
    project.builder.wait()  # the builder's thread tells of the install the closing hold made
    assert _present(project, [first, second]) == {"first_v1", "second_v1"}
    assert reports == [{"demo:first", "demo:second"}]  # one install, told once, carrying both


class Interleaving:
    """A lock for the builder that, at the ``point``-th release by any thread, starts a request (``ask``,
    which waits for its build) in a thread of its own and goes on only once that request is made (its
    thread left the lock): every place where the builder leaves its lock becomes, in turn, the place a
    request arrives."""

    def __init__(self, point: int, ask: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._point = point
        self._ask = ask
        self._releases = 0
        self.made = threading.Event()
        self.asker: threading.Thread | None = None

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()
        asker = self.asker
        if asker is not None:
            if asker.ident == threading.get_ident():
                self.made.set()  # the request is recorded (or built): the interleaving is made
            return
        self._releases += 1
        if self._releases == self._point:
            self.asker = threading.Thread(target=self._ask, daemon=True)
            self.asker.start()
            self.made.wait()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def test_a_request_at_any_point_where_the_builder_leaves_its_lock_is_built(make_project) -> None:
    """Issue 42 item 1: a request that arrived after the builder found nothing left, but before it said
    it was no longer building, was never built, and its asker waited forever."""
    for point in range(1, 60):
        project = make_project()
        builder = project.builder
        source = Versioned("late")
        lock = Interleaving(point, functools.partial(builder.request, {source.key}))
        builder._lock, builder._changed = lock, threading.Condition(lock)  # type: ignore[assignment]
        project.registry  # noqa: B018
        project.sources.add(source)
        source.version = 1
        builder.request({source.key})
        asker = lock.asker
        if asker is None:  # the builder left its lock fewer than `point` times: every point was tried
            break
        assert lock.made.wait(60)  # bounds for the failure (the lost request waits forever), not measures
        asker.join(60)
        assert not asker.is_alive(), f"a request made at release {point} was never built"
        assert _present(project, [source]) == {"late_v1"}
        project.close()
    else:
        raise AssertionError("more release points than expected")
