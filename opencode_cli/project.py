"""``Project(directory)``: the one object that owns a project's plugins, services, store, permissions and
its current generation of config, agents and tools.

Everything is computed lazily on first use, so ``Project(...)`` itself is free. Tests and hosts build
their own; there are no globals.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import paths
from .config import Config, find_worktree
from .generation import Generation
from .generations import Generations
from .loops import running_loop

if TYPE_CHECKING:
    from .builder import Builder
    from .flags import Flags
    from .mcp.servers import McpServers
    from .modelref import ModelRef
    from .permission import PermissionService
    from .plugins import Plugins
    from .registry import Registry, ToolDefinition
    from .results import ToolResult
    from .services import Portal, Services
    from .services.launch import Launcher
    from .session import Prompt, Session
    from .sources import Sources
    from .store import Store
    from .watch import Watcher
    from .workers import Workers


def _stderr_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


class _WarnOnce:
    """``warn``, called once per message."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._warned: set[str] = set()

    def __call__(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)


class Project(contextlib.AbstractContextManager, contextlib.AbstractAsyncContextManager):
    """A project rooted at ``directory`` (default: the current directory).

    The project owns everything long-lived: the plugin manager, the permission service, the store, the
    services (started on first use, stopped by :meth:`aclose`) and the current :class:`Generation` of
    the parts built from files (config, agents, tools). Use it as a context manager so that whatever it
    started is stopped::

        async with Project(".") as project:
            async with project.session() as session:
                ...

    or, from sync code, ``with Project(".") as project: project.run_tool("read", {...})``.

    ``plugins`` are ``(name, plugin)`` pairs registered after the built-ins; ``disabled_plugins`` names
    plugins (built-in or installed) not to load, besides those of ``[plugins] disabled`` (a mapping gives,
    for each, how it was disabled, as messages say it: ``-p no:web`` for the command line's).

    ``trusted`` is the host's choice about what the project's own files supply (tool files, MCP and
    language-server commands, provider URLs, rules that widen: :mod:`opencode_cli.trust`): ``True`` trusts
    it, ``False`` holds all of it back, ``None`` (the default) follows the user's trust record,
    ``OPENCODE_TRUST`` and the ``[trust] directories`` patterns of the user's config.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        plugins: Iterable[tuple[str, object]] = (),
        autoload_plugins: bool | None = None,
        disabled_plugins: Iterable[str] | Mapping[str, str] = (),
        warn: Any = None,
        trusted: bool | None = None,
    ) -> None:
        self.trusted = trusted
        """The host's choice about trusting the project (``None``: the user's record decides)."""
        self.directory = Path(os.path.abspath(directory or os.getcwd()))
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.worktree: Path | None = find_worktree(self.directory)
        self._extra_plugins = list(plugins)
        self._autoload = autoload_plugins
        self.disabled_plugins = disabled_plugins
        """The plugins the host disables (besides ``[plugins] disabled``; see the class docstring)."""
        self.warn: Callable[[str], None] = _WarnOnce(warn or _stderr_warning)
        """Report a problem once per project."""
        self._lock = threading.RLock()
        self.generations = Generations(self, self.warn)
        """The current generation, the one prepared to replace it and the holds that delay the swap."""
        self._closed = False
        self._permissions: PermissionService | None = None
        self._services: Services | None = None
        self._launcher: Launcher | None = None
        self._portal: Portal | None = None
        self._workers: Workers | None = None

    def __repr__(self) -> str:
        return f"Project({str(self.directory)!r})"

    @property
    def root(self) -> Path:
        """The git worktree root, or the directory itself outside git."""
        return self.worktree or self.directory

    # -- what lives as long as the project -------------------------------------------------------------

    @cached_property
    def flags(self) -> Flags:
        """The ``OPENCODE_*`` flags of this project's environment."""
        from .flags import Flags

        return Flags.from_env(self.env)

    @cached_property
    def plugins(self) -> Plugins:
        """The plugin manager, with built-ins, entry-point plugins and records of each. The plugins named
        by ``[plugins] disabled`` and by ``disabled_plugins`` (built-in or installed) are not loaded."""
        from .plugins import Plugins

        disabled = self.generation.disabled_plugins
        autoload = self._autoload
        if autoload is None:
            autoload = not (self.flags.disable_plugin_autoload or self.flags.pure)
        cache = None if self.env.get("OPENCODE_DISABLE_ENTRY_POINT_CACHE") else paths.cache_dir(self.env)
        from .entrypoints import search_path

        return Plugins(
            autoload=autoload,
            disabled=disabled,
            extra=self._extra_plugins,
            warn=self.warn,
            cache_dir=cache,
            loop=lambda: self.portal.loop,
            search_path=search_path(self.env),
        )

    @cached_property
    def store(self) -> Store:
        """The sqlite store under the data directory (``<data>/opencode.db``)."""
        from .store import Store

        return Store(paths.data_dir(self.env) / "opencode.db")

    @property
    def permissions(self) -> PermissionService:
        """Pending permission requests and "always" approvals of this project."""
        if self._permissions is None:
            from .permission import PermissionService

            with self._lock:
                if self._permissions is None:
                    self._permissions = PermissionService(store=lambda: self.store)
        return self._permissions

    @property
    def services(self) -> Services:
        """The long-lived services of this project (MCP connections, language servers…): each started on
        first use and stopped, in reverse order, when the project closes."""
        if self._services is None:
            from .services import Services

            with self._lock:
                if self._services is None:
                    self._services = Services(warn=self.warn)
        return self._services

    @property
    def launcher(self) -> Launcher:
        """The project's long-lived launcher (:class:`~opencode_cli.services.launch.Launcher`): bash's
        commands start through it; it starts on first use, again if it died, and stops with the project."""
        if self._launcher is None:
            from .services.launch import Launcher

            with self._lock:
                if self._launcher is None:
                    self._launcher = Launcher()
        return self._launcher

    @property
    def started_services(self) -> Services | None:
        """:attr:`services` if anything asked for them already, else ``None`` (nothing is created to
        look at them)."""
        return self._services

    @cached_property
    def mcp(self) -> McpServers:
        """The MCP servers of ``[mcp.NAME]``: their connections (services) and status."""
        from .mcp.servers import McpServers

        return McpServers(self)

    async def open(self, mcp: Iterable[str] | None = None) -> None:
        """Connect the configured MCP servers (all enabled ones, or the ``mcp`` names), concurrently, each
        within its timeout; a server that fails is marked failed and the others go on. Their tools join
        the registry. Nothing happens (and nothing is imported) when no server is configured."""
        if self.generation.mcp_servers:
            await self.mcp.open(mcp)

    @property
    def portal(self) -> Portal:
        """The project's own event loop, in a thread of its own: the one way sync code reaches the call
        path (:meth:`run_tool`, the test kit, hooks called from sync code)."""
        if self._portal is None:
            from .services import Portal

            with self._lock:
                if self._portal is None:
                    portal = Portal()
                    weakref.finalize(self, portal.close)
                    self._portal = portal
        return self._portal

    @property
    def workers(self) -> Workers:
        """The worker threads sync tools run in (:mod:`opencode_cli.workers`), started on first use and
        stopped when the project closes."""
        if self._workers is None:
            from .workers import Workers

            with self._lock:
                if self._workers is None:
                    workers = Workers()
                    weakref.finalize(self, workers.close)
                    self._workers = workers
        return self._workers

    # -- the current generation (config, agents, tools) ------------------------------------------------

    @property
    def generation(self) -> Generation:
        """The generation in use (``project.generations`` swaps them); the first is built lazily, part by
        part, as it is asked for."""
        return self.generations.current

    @property
    def config(self) -> Config:
        """The merged configuration; unknown keys are warned about once."""
        return self.generation.config

    @property
    def registry(self) -> Registry:
        """Every tool of the project, in OpenCode's order."""
        return self.generation.registry

    @cached_property
    def sources(self) -> Sources:
        """The sources of the registry (:class:`~opencode_cli.sources.Sources`), kept across generations;
        ``project.sources.add(source)`` adds one."""
        from .sources import Sources

        return Sources(self)

    @cached_property
    def builder(self) -> Builder:
        """The one door for change (:mod:`opencode_cli.builder`): every source's report, every saved file
        and config edit becomes a request to it; hosts observe the generations it installs."""
        from .builder import Builder

        return Builder(self)

    # -- what is offered -------------------------------------------------------------------------------

    async def ready(self) -> Generation:
        """The current generation, its registry built on the caller's loop (a plugin's ``async def
        register_tools`` is awaited there). Async hosts await it before reading tools from sync code."""
        generation = self.generation
        await generation.aregistry()
        return generation

    def tools(self, model: ModelRef | str | None = None, agent: str | None = None) -> list[ToolDefinition]:
        """What ``model`` is offered when talking to ``agent`` (minus tools the agent denies wholly)."""
        return self.generation.offer(model, agent).tools

    # -- sessions and calls --------------------------------------------------------------------------

    def session(self, agent: str | None = None, *, prompt: Prompt | None = None, **options: Any) -> Session:
        """A new :class:`Session` for ``agent`` (use it as a context manager). A remembered session whose
        ``id`` the store keeps goes on with the agent and model it recorded, unless ``agent`` or
        ``model`` say otherwise (:func:`~opencode_cli.session.recorded`)."""
        from .session import Session, recorded, refuse_without_terminal

        if options.get("remember") and options.get("id"):
            agent, options["model"] = recorded(self, options["id"], agent, options.get("model"))
        return Session(
            self, self.generation.agent(agent), prompt=prompt or refuse_without_terminal, **options
        )

    def resume(self, session_id: str, *, prompt: Prompt | None = None, **options: Any) -> Session:
        """Open a session kept in the store again, with its agent, rules, parent and transcript."""
        from .session import Session

        return Session.resume(self, session_id, prompt=prompt, **options)

    def watch(self, **options: Any) -> Watcher:
        """Hot reload: a :class:`~opencode_cli.watch.Watcher` that rebuilds this project's tools when tool
        files or ``opencode.toml`` change and swaps them in between calls (``async with`` it, iterate it
        for change reports, and hold it around each call; see :mod:`opencode_cli.watch`)."""
        from .watch import Watcher

        return Watcher(self, **options)

    def run_tool(
        self, tool_id: str, args: dict[str, Any], *, agent: str | None = None, **options: Any
    ) -> ToolResult:
        """A convenience for scripts and tests: one call in a fresh session, closed afterwards.

        The project runs no calls itself: this opens :meth:`session` (``options`` are
        :class:`~opencode_cli.session.Session`'s, such as ``prompt`` and ``model``) and runs the call with
        :meth:`Session.run_tool <opencode_cli.session.Session.run_tool>`, the sync façade, on the project's
        loop, so services a tool starts stay up for the next call (:meth:`close` stops them). Inside a
        running event loop: :meth:`arun_tool`.
        """
        if running_loop() is not None:
            raise RuntimeError(
                "Project.run_tool() blocks, and this thread runs an event loop: "
                "use `await project.arun_tool(...)` here"
            )
        with self.session(agent, **options) as session:
            return session.run_tool(tool_id, args)

    async def arun_tool(
        self, tool_id: str, args: dict[str, Any], *, agent: str | None = None, **options: Any
    ) -> ToolResult:
        """The async form of :meth:`run_tool`: ``await session.execute(...)`` in a fresh session."""
        async with self.session(agent, **options) as session:
            return await session.execute(tool_id, dict(args))

    # -- lifecycle -----------------------------------------------------------------------------------

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def aclose(self) -> None:
        """Close the project: reject pending permission requests, stop every service (reverse order), stop
        the sync façade's loop. Safe to call twice."""
        if self._permissions is not None:
            self._permissions.dispose()
        if self._closed:
            return
        self._closed = True
        services = self._services
        if services is not None and services.loop is not None and services.loop is running_loop():
            await services.aclose()
        builder = self.__dict__.get("builder")
        if services is not None or self._portal or self._workers or self._launcher or builder:
            import asyncio

            await asyncio.to_thread(
                _close_keepers, services, self._portal, self._workers, self._launcher, builder
            )

    def close(self) -> None:
        """Close the project from sync code (see :meth:`aclose`); safe to call twice. From code running on
        the loop the services live on, ``await project.aclose()`` instead."""
        if self._permissions is not None:
            self._permissions.dispose()
        if self._closed:
            return
        services = self._services
        if services is not None and services.loop is not None and services.loop is running_loop():
            raise RuntimeError("close() was called on the services' own loop: await project.aclose()")
        self._closed = True
        _close_keepers(services, self._portal, self._workers, self._launcher, self.__dict__.get("builder"))


def _close_keepers(
    services: Services | None,
    portal: Portal | None,
    workers: Workers | None,
    launcher: Launcher | None,
    builder: Builder | None = None,
) -> None:
    """Stop a project's builder (a build in progress may still need the portal), its services living on
    another loop than the caller's (the portal's, or a loop of another thread), then the portal, then the
    worker threads and the launcher."""
    if builder is not None:
        builder.close()
    try:
        if portal is not None and services is not None and portal.runs(services.loop):
            portal.close(final=services.aclose)
        else:
            if services is not None:
                services.close()
            if portal is not None:
                portal.close()
    finally:
        if workers is not None:
            workers.close()
        if launcher is not None:
            launcher.stop()
