"""One door for change (issue 33): every report goes through the project's serialized builder, which
coalesces what arrives while it works and never drops a change."""

from __future__ import annotations

import asyncio
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

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
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
    built: list[int] = []
    project.builder.observe(lambda change: built.append(change.ticket))
    slow.version = 1
    worker = threading.Thread(target=slow.report_change)  # the builder runs in that thread, held by the gate
    worker.start()
    while project.builder.idle:  # the worker's build has begun
        threading.Event().wait(0.001)
    quick.version = 1
    quick.report_change()  # returns at once: the running build's thread takes it
    quick.version = 2
    quick.report_change()
    gate.set()
    worker.join()

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
    assert _present(project, [first, second]) == {"first_v1", "second_v1"}
    assert reports == [{"demo:first", "demo:second"}]  # one install, told once, carrying both
