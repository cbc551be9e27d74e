"""The watcher: file events and source reports in, new generations and :class:`ChangeReport` out."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..loops import running_loop
from .plan import WatchPlan, watch_plan
from .reports import ChangeReport, ToolChange, ToolInfo

if TYPE_CHECKING:
    from ..builder import Built
    from ..generation import Generation as ProjectGeneration
    from ..modelref import ModelRef
    from ..project import Project
    from ..registry import Registry

#: Reports kept for the async iterator when nobody reads them.
_KEEP_REPORTS = 256


@dataclass
class GenerationView:
    """A project generation as the watcher reports it: what the model is offered, and what failed."""

    generation: ProjectGeneration
    tools: dict[str, ToolInfo]
    """What the model is offered (the watcher's model and agent), by id, in order."""
    failures: dict[str, str]
    """File path (or plugin name) -> error, for everything that failed to load."""

    @property
    def number(self) -> int:
        """The generation's number (1 for the first)."""
        return self.generation.number

    @property
    def registry(self) -> Registry:
        """This generation's registry."""
        return self.generation.registry

    def entry_point_plugins(self) -> list[str]:
        """The entry-point plugins loaded (``name version``): they are not reloaded."""
        plugins = self.generation.project.plugins
        return [
            f"{r.name} {r.version}" if r.version else r.name
            for r in plugins.records
            if r.kind == "entrypoint" and r.status == "loaded"
        ]


#: The name hosts used before generations moved into the project.
Generation = GenerationView


class Watcher:
    """Hot reload for one project (see the module docstring); made by :meth:`Project.watch`.

    ``model`` (a :class:`ModelRef` or ``provider/model`` text; default: the config's ``model`` of each
    generation) and ``agent`` (default ``build``) choose whose tool list reports compare. ``on_change``
    is called with every :class:`ChangeReport`. ``step`` (ms of quiet that ends a batch of file events),
    ``debounce`` (ms, the longest a batch may grow) and ``force_polling`` go to watchfiles; polling is
    also used, with a warning, when the system's file notifications cannot be set up.
    """

    def __init__(
        self,
        project: Project,
        *,
        model: ModelRef | str | None = None,
        agent: str | None = None,
        on_change: Callable[[ChangeReport], Any] | None = None,
        step: int = 50,
        debounce: int = 1600,
        force_polling: bool | None = None,
    ) -> None:
        self.project = project
        self.agent = agent
        self._model = model
        self._on_change = on_change
        self._step = step
        self._debounce = debounce
        self.polling = bool(force_polling)
        self._force_polling = force_polling
        self._lock = threading.RLock()
        self._views: dict[int, GenerationView] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._follows: set[asyncio.Task[Any]] = set()
        self._reported: tuple[int, ChangeReport] | None = None
        self._seen_warnings: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[ChangeReport] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.plan: WatchPlan | None = None
        """What is being watched (set by :meth:`start`)."""

    def __repr__(self) -> str:
        return f"<Watcher {self.project!r} generation {self.project.generation.number}>"

    # -- generations ---------------------------------------------------------------------------------------

    @property
    def current(self) -> GenerationView:
        """The generation in use (the first is the project as it is when first asked)."""
        return self._view(self.project.generation)

    @property
    def model(self) -> ModelRef | None:
        """The model whose offer reports compare (``None``: no per-model rule applies)."""
        return self.project.generation.model(self._model)

    @property
    def pending(self) -> bool:
        """Whether a built generation waits for the calls in flight to finish."""
        return self.project.generations.pending

    @property
    def in_flight(self) -> int:
        """How many holds are open."""
        return self.project.generations.in_flight

    @property
    def notice(self) -> str:
        """What hot reload does not cover (shown once when watching starts): the entry-point plugins
        loaded; empty when there is none, so nothing is said."""
        loaded = self.current.entry_point_plugins()
        if not loaded:
            return ""
        listed = ", ".join(loaded)
        return f"entry-point plugins are not reloaded: {listed}; restart after changing an installed package"

    @contextlib.contextmanager
    def hold(self) -> Iterator[GenerationView]:
        """Keep the current generation for a call or a turn (:meth:`Generations.hold
        <opencode_cli.generations.Generations.hold>`): no swap happens until every hold closes. Usable from
        async code and from threads; it never blocks."""
        with self.project.generations.hold() as generation:
            yield self._view(generation)

    def reload(self, paths: Iterable[str | Path] = ()) -> ChangeReport | None:
        """Ask the project's builder for a new generation now (``paths``: what changed, if known).

        Returns the report, or ``None`` when calls are in flight: the generation is then installed when
        the last hold closes (and reported to ``on_change`` and the async iterator).
        """
        self._observe()
        ticket = self.project.builder.request((), {str(p) for p in paths})
        reported = self._reported
        return reported[1] if reported is not None and reported[0] >= ticket else None

    def _observe(self) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = self.project.builder.observe(self._observed)

    def _view(self, generation: ProjectGeneration) -> GenerationView:
        with self._lock:
            view = self._views.get(id(generation))
            if view is None or view.generation is not generation:
                generation.registry  # noqa: B018 - import the tool files
                tools, failures = self._snapshot(generation)
                view = GenerationView(generation, tools, {**_failures(generation), **failures})
                self._remember(view)
            return view

    def _remember(self, view: GenerationView) -> None:
        """Keep the views of the last few generations (the current one, one waiting, the one before)."""
        self._views[id(view.generation)] = view
        while len(self._views) > 4:
            self._views.pop(next(iter(self._views)))

    def _snapshot(self, generation: ProjectGeneration) -> tuple[dict[str, ToolInfo], dict[str, str]]:
        from ..plugins import describe_exception

        offer = generation.offer(generation.model(self._model), self.agent, schemas=True)
        tools: dict[str, ToolInfo] = {}
        failures: dict[str, str] = {}
        for definition in offer.tools:
            try:
                parameters = definition.parameters
                description = definition.description
            except Exception as error:
                failures[f"tool {definition.id}"] = f"tool {definition.id}: {describe_exception(error)}"
                continue
            tools[definition.id] = ToolInfo(definition.id, definition.entry.source, description, parameters)
        return tools, failures

    def _observed(self, built: Built) -> None:
        """The builder installed a generation (or a build failed): report it (in the installing thread)."""
        if built.generation is None or built.before is None:
            current = self.current
            report = ChangeReport(current.number, sorted(built.files), errors=[built.error or ""], ok=False)
        else:
            report = self._report(built, self._view(built.before))
            before, after = built.before.mcp_servers, built.generation.mcp_servers
            if before != after:
                self._follow(before, after)
        self._reported = (built.ticket, report)
        self._deliver(report)

    def _follow(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        """Servers are services: a changed ``[mcp.NAME]`` reconnects that server (on the watcher's loop;
        its tools follow through the builder)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def start() -> None:
            task = asyncio.ensure_future(self.project.mcp.follow(before, after))
            self._follows.add(task)
            task.add_done_callback(self._follows.discard)

        with contextlib.suppress(RuntimeError):  # the loop is closing
            loop.call_soon_threadsafe(start)

    def _report(self, built: Built, current: GenerationView) -> ChangeReport:
        """What installing ``built`` over ``current`` changed."""
        assert built.generation is not None
        new = self._view(built.generation)
        before, after = current.tools, new.tools
        kept = {
            str(c.source.path): c.kept  # type: ignore[attr-defined]
            for c in built.generation.registry.contributions.values()
            if c.kept and c.source.kind == "file"
        }
        texts = list(new.failures.values())
        warnings = [w for w in built.warnings if not any(text in w for text in texts)]
        report = ChangeReport(
            new.number,
            sorted(built.files),
            added=[tool for key, tool in after.items() if key not in before],
            removed=[tool for key, tool in before.items() if key not in after],
            changed=[
                ToolChange(before[key], tool)
                for key, tool in after.items()
                if key in before and before[key] != tool
            ],
            errors=[
                text
                for key, text in new.failures.items()
                if current.failures.get(key) != text or key in built.files
            ],
            kept=kept,
            resolved=[key for key in current.failures if key not in new.failures and not _deleted(key)],
            gone=[key for key in current.failures if key not in new.failures and _deleted(key)],
            config=_config_changes(current, new),
            warnings=[w for w in warnings if w not in self._seen_warnings],
        )
        self._seen_warnings.update(warnings)
        return report

    def _deliver(self, report: ChangeReport) -> None:
        if self._on_change is not None:
            try:
                self._on_change(report)
            except Exception as error:
                from ..plugins import describe_exception

                self.project.warn(f"watch: on_change failed: {describe_exception(error)}")
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(self._enqueue, report)

    def _enqueue(self, report: ChangeReport) -> None:
        queue = self._queue
        if queue is None:
            return
        while queue.qsize() >= _KEEP_REPORTS:  # nobody reads them (an on_change host): keep the latest
            queue.get_nowait()
        queue.put_nowait(report)

    # -- watching ------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start watching (the first generation is taken now); returns once the files are watched."""
        if self._task is not None:
            return
        self.current  # noqa: B018 - a broken config raises here, before anything is watched
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        self._stop = asyncio.Event()
        self._observe()
        armed = asyncio.Event()
        self._task = asyncio.create_task(self._run(armed))
        waiter = asyncio.ensure_future(armed.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done() and not armed.is_set():
            task, self._task = self._task, None
            task.result()  # raises what stopped it

    def close(self) -> None:
        """Ask the watching to stop (from any thread, or a signal handler); see :meth:`stop`."""
        loop, stop = self._loop, self._stop
        if loop is None or stop is None or loop.is_closed():
            return
        if running_loop() is loop:
            stop.set()
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)

    async def stop(self) -> None:
        """Stop watching and wait for the watcher to finish (a reload in progress completes)."""
        task = self._task
        if task is None:
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for follow in list(self._follows):
            follow.cancel()
        self.close()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except Exception:
            pass
        self._task = None

    async def __aenter__(self) -> Watcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> ChangeReport:
        """The next report (starting the watching if needed); ends once :meth:`close` is called."""
        if self._task is None:
            await self.start()
        assert self._queue is not None and self._task is not None
        if not self._queue.empty():
            return self._queue.get_nowait()
        if self._task.done():
            self._raise_from_task()
        getter = asyncio.ensure_future(self._queue.get())
        await asyncio.wait({getter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            return getter.result()
        getter.cancel()
        if not self._queue.empty():
            return self._queue.get_nowait()
        self._raise_from_task()

    def _raise_from_task(self) -> NoReturn:
        assert self._task is not None
        error = None if self._task.cancelled() else self._task.exception()
        if error is not None:
            raise error
        raise StopAsyncIteration

    async def _run(self, armed: asyncio.Event) -> None:
        plan = watch_plan(self.project)
        carried: set[str] = set()
        assert self._stop is not None
        while not self._stop.is_set():
            self.plan = plan
            stream = self._stream(plan)
            waiting = asyncio.ensure_future(anext(stream))
            await asyncio.sleep(0)  # the first step of anext() sets up the OS watch before it waits
            if waiting.done() and waiting.exception() is not None and not self.polling:
                self.polling = True
                self.project.warn(
                    f"watch: file notifications are unavailable ({waiting.exception()}); polling instead"
                )
                continue
            armed.set()
            try:
                if carried:
                    await self._rebuild(carried)
                    carried = set()
                while True:
                    try:
                        changes = await waiting
                    except StopAsyncIteration:
                        return
                    paths = {path for _, path in changes}
                    new_plan = watch_plan(self.project)
                    if new_plan.roots != plan.roots:
                        plan, carried = new_plan, paths
                        break
                    await self._rebuild(paths)
                    waiting = asyncio.ensure_future(anext(stream))
            finally:
                if not waiting.done():
                    self._stop.set()
                    with contextlib.suppress(BaseException):
                        await waiting
                with contextlib.suppress(BaseException):
                    await stream.aclose()

    def _stream(self, plan: WatchPlan) -> Any:
        import watchfiles

        return watchfiles.awatch(
            *plan.roots,
            watch_filter=plan.relevant,
            debounce=self._debounce,
            step=self._step,
            stop_event=self._stop,
            recursive=False,
            force_polling=True if self.polling else self._force_polling,
            ignore_permission_denied=True,
        )

    async def _rebuild(self, paths: set[str]) -> None:
        """Files changed: a request to the project's builder (which runs off the loop, here)."""
        await asyncio.to_thread(self.project.builder.request, (), paths)


def _config_changes(before: GenerationView, after: GenerationView) -> list[str]:
    from ..schema import describe_changes

    return describe_changes(before.generation.config.data, after.generation.config.data)


def _failures(generation: ProjectGeneration) -> dict[str, str]:
    found = {}
    records = [*generation.project.plugins.records, *generation.registry.records("file")]
    for record in records:
        if record.status != "failed" or not record.error:
            continue
        if record.kind == "file":
            found[record.location or record.name] = record.error
        else:
            found[record.name] = f"plugin {record.name}: {record.error}"
    return found


def _deleted(key: str) -> bool:
    """Whether a failure's key (a tool file's path, or a plugin's name) is a file that no longer exists."""
    path = Path(key)
    return path.is_absolute() and not path.exists()
