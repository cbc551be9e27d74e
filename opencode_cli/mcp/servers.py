"""The MCP servers of a project: configured in its generation, connected as its services.

:meth:`McpServers.open` connects the enabled servers concurrently, each within its timeout; one that
fails (its command does not exist, it exits, it times out, it speaks garbage) is marked ``failed`` with
the reason and never stops the others or the built-ins. Connecting reports the server's source as
changed, so its tools join the registry. The ``mcp`` SDK is imported only here, and only when a server
is configured and opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .credentials import NEEDS_AUTHENTICATION, is_needs_authentication

if TYPE_CHECKING:
    from ..project import Project
    from ..sources import Source
    from .config import ServerConfig
    from .connection import McpConnection
    from .naming import Prefix


@dataclass
class ServerStatus:
    """One server as ``opencode mcp list`` shows it."""

    name: str
    type: str
    status: str
    """``connected``, ``failed``, ``needs authentication`` (run ``opencode mcp auth NAME``), ``disabled``
    or ``not connected``."""
    target: str
    tools: int = 0
    resources: int = 0
    error: str | None = None
    pid: int | None = None
    """A connected local server's process id."""
    notes: list[str] = field(default_factory=list)
    """One-line reports about the server (a line it printed that is not JSON-RPC, a renamed tool id)."""

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of ``opencode mcp list --json``."""
        return {
            "name": self.name,
            "type": self.type,
            "status": self.status,
            "target": self.target,
            "tools": self.tools,
            "resources": self.resources,
            "error": self.error,
            "pid": self.pid,
            "notes": list(self.notes),
        }


class McpServers:
    """The project's MCP servers: their sources, their connections, their status."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._sources: dict[str, tuple[ServerConfig, Source]] = {}
        self._resources: Source | None = None
        self._resource_counts: dict[str, int] = {}
        self._opened = False
        self._resourceful: dict[str, ServerConfig] = {}
        """The servers that declared the ``resources`` capability when they last connected."""
        self._prefixes: tuple[dict[str, ServerConfig], dict[str, Prefix]] | None = None

    @property
    def configured(self) -> dict[str, ServerConfig]:
        """Every server of the current config (disabled ones too), by name."""
        return self.project.generation.mcp_servers

    def sources(self, configured: dict[str, ServerConfig]) -> list[Source]:
        """The registry sources for ``configured``: the resource tools, then one per enabled server."""
        from .source import McpSource, ResourceSource

        if not any(server.enabled for server in configured.values()):
            return []
        if self._resources is None:
            self._resources = ResourceSource(self)
            self._resources.on_change = self.project.sources.changed
        self._resources.configured = configured  # type: ignore[attr-defined] # the generation being built
        found: list[Source] = [self._resources]
        for name, server in configured.items():
            if not server.enabled:
                continue
            known = self._sources.get(name)
            if known is None or known[0] != server:
                source = McpSource(server, self)
                source.on_change = self.project.sources.changed
                self._sources[name] = known = (server, source)
            found.append(known[1])
        return found

    def servers_for(self, tool_id: str) -> list[str]:
        """The servers a tool id may come from: the one whose sanitized name is the id's longest prefix
        (``NAME_tool``), or every enabled server for the resource tools (and for ``execute`` in code mode);
        ``[]`` for any other id."""
        enabled = [name for name, server in self.configured.items() if server.enabled]
        if tool_id in ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"):
            return enabled
        if tool_id == "execute" and self.project.flags.experimental_code_mode:
            return enabled  # code mode's scripts call the tools of every server
        from .naming import HASH_DIGITS, MAX_ID

        head = tool_id[: MAX_ID - HASH_DIGITS - 1] if len(tool_id) == MAX_ID else None  # a shortened id

        def owns(name: str) -> bool:
            prefix = self.prefix(name).prefix + "_"
            return tool_id.startswith(prefix) or (head is not None and prefix.startswith(head))

        matches = [name for name in enabled if owns(name)]
        return sorted(matches, key=lambda name: len(self.prefix(name).prefix), reverse=True)[:1]

    def prefix(self, name: str) -> Prefix:
        """The prefix of ``name``'s tool ids (with the server whose name sanitizes alike, when it is not
        ``name`` sanitized)."""
        from .naming import Prefix, prefixes, sanitize

        configured = self.configured
        if self._prefixes is None or self._prefixes[0] is not configured:
            self._prefixes = (configured, prefixes(configured))
        return self._prefixes[1].get(name) or Prefix(sanitize(name), name)

    # -- connections ---------------------------------------------------------------------------------

    def peek(self, name: str) -> McpConnection | None:
        """The live connection to ``name``, if there is one."""
        services = self.project.started_services
        found = services.peek(f"mcp:{name}") if services is not None else None
        connection = cast("McpConnection | None", found)  # the services under mcp: keys are connections
        return connection if connection is not None and not connection.ended else None

    async def connection(self, name: str) -> McpConnection:
        """The connection to ``name``, started (or, when it was lost, started again) now."""
        from .connection import McpConnection

        server = self.configured.get(name)
        if server is None or not server.enabled:
            from ..errors import ToolError

            raise ToolError(f'MCP server "{name}" is not configured')
        services = self.project.services
        current = services.peek(server.key)
        if current is not None and (current.ended or current.server != server):  # type: ignore[attr-defined]
            await current.settle()  # type: ignore[attr-defined] # its reason is known (an exit code)
            await services.stop(server.key)
        directory = str(self.project.directory)
        env = dict(self.project.env)
        source = self._sources.get(name)

        def factory() -> McpConnection:
            return McpConnection(
                server,
                directory,
                env,
                on_change=source[1].report_change if source else None,
                warn=self.project.warn,
            )

        return await services.get(server.key, factory)

    async def open(self, names: Iterable[str] | None = None) -> None:
        """Connect the enabled servers (or ``names``) concurrently; a failure is recorded, not raised.
        Returns once the project's builder installed (or prepared, while calls hold the generation) what
        they brought."""
        self._opened = True
        configured = self.configured
        wanted = [
            server
            for server in configured.values()
            if server.enabled and (names is None or server.name in names)
        ]
        if not wanted:
            return
        self.sources(configured)  # the sources exist, so their connections report changes to them
        await asyncio.gather(*(self._open_one(server) for server in wanted))
        builder = self.project.builder  # builds on its own thread: this loop serves on meanwhile
        if not builder.idle:
            await asyncio.to_thread(builder.wait)

    async def _open_one(self, server: ServerConfig) -> None:
        """Connect one server and report its tools (or its failure) as soon as it is done: a slow server
        never holds back the others' tools."""
        await self._connect_one(server)
        if self._resources is not None:
            self._resources.report_change()
        known = self._sources.get(server.name)
        if known is not None:
            known[1].report_change()

    async def ensure(self, tool_id: str | None = None) -> None:
        """Connect on first need: every enabled server (``tool_id`` ``None``: a session opens, and none
        was opened yet), or the servers ``tool_id`` may come from that are not connected, never tried or
        lost (their process exited, or they were stopped as hung). Cheap when there is nothing to do."""
        configured = self.configured
        if not configured:
            return
        if tool_id is None:
            if self._opened:  # the caller chose what to connect (the CLI connects only what it needs)
                return
            names = [name for name, server in configured.items() if server.enabled]
        elif tool_id in self.project.registry.entries and self.peek_for(tool_id):
            return
        else:
            names = self.servers_for(tool_id)
        services = self.project.services
        wanted = [
            name
            for name in names
            if self.peek(name) is None
            and (configured[name].key not in services or services.peek(configured[name].key) is not None)
        ]
        if wanted:
            await self.open(wanted)

    def peek_for(self, tool_id: str) -> bool:
        """Whether the servers ``tool_id`` may come from are connected (or it comes from none)."""
        return all(self.peek(name) is not None for name in self.servers_for(tool_id))

    async def follow(self, before: dict[str, ServerConfig], after: dict[str, ServerConfig]) -> list[str]:
        """After a config reload: stop the servers removed or disabled, (re)connect the new and changed
        ones. Their sources report the change, so a watcher reports their tools. Returns the names
        (re)connected."""
        for name, server in before.items():
            if server.enabled and not (name in after and after[name].enabled):
                self._sources.pop(name, None)
                await self.project.services.stop(server.key)
        changed = [name for name, server in after.items() if server.enabled and before.get(name) != server]
        if changed:
            await self.open(changed)
        return changed

    async def _connect_one(self, server: ServerConfig) -> None:
        try:
            connection = await self.connection(server.name)
        except Exception:
            return  # the service is marked failed, with the reason
        if connection.has_resources:
            self._resourceful[server.name] = server
            try:
                self._resource_counts[server.name] = len(await connection.list_resources())
            except Exception:
                self._resource_counts[server.name] = 0

    def resource_servers(self) -> list[str]:
        """Connected servers with the resources capability, sorted."""
        names = [name for name in self.configured if (c := self.peek(name)) is not None and c.has_resources]
        return sorted(names)

    def offers_resources(self, configured: dict[str, ServerConfig] | None = None) -> bool:
        """Whether the resource tools are offered: a server of ``configured`` (default: the current
        config) declared the ``resources`` capability when it connected (it may be restarting now)."""
        configured = self.configured if configured is None else configured
        return any(configured.get(name) == server for name, server in self._resourceful.items())

    def missing(self, tool_id: str) -> str | None:
        """Why ``tool_id`` is not a tool when it would come from an MCP server that is not connected: the
        server's status and error (its exit code and stderr line), or ``None``."""
        for name in self.servers_for(tool_id):
            if self.peek(name) is not None:
                continue
            error = self.error(name)
            if error is None:
                return f"MCP server \"{name}\" is not connected, so tool '{tool_id}' is not known yet."
            said = error if is_needs_authentication(error) else f"failed: {error}"
            return f"MCP server \"{name}\" {said}. Tool '{tool_id}' would come from it."
        return None

    def connected(self, server: str) -> bool:
        """Whether ``server`` is connected."""
        return self.peek(server) is not None

    async def list_resources(self, server: str) -> list[Any]:
        """The resources of a connected server."""
        return await (await self.connection(server)).list_resources()

    async def list_resource_templates(self, server: str) -> list[Any]:
        """The resource templates of a connected server."""
        return await (await self.connection(server)).list_resource_templates()

    async def read_resource(self, server: str, uri: str) -> Any:
        """Read a resource of a connected server."""
        return await (await self.connection(server)).read_resource(uri)

    # -- status --------------------------------------------------------------------------------------

    def error(self, name: str) -> str | None:
        """Why ``name`` is not connected (its start failed, or the connection was lost), if it tried."""
        services = self.project.started_services
        if services is None:
            return None
        key = f"mcp:{name}"
        for status in services.statuses():
            if status.name == key and status.state == "failed":
                return status.error
        return getattr(services.peek(key), "lost", None)

    def statuses(self) -> list[ServerStatus]:
        """Every configured server with its status, in config order."""
        found = []
        for name, server in self.configured.items():
            state = "disabled" if not server.enabled else "not connected"
            status = ServerStatus(name, server.type, state, server.describe())
            renamed = self.prefix(name).note
            connection = self.peek(name)
            if server.enabled and connection is not None:
                status.status = "connected"
                status.tools = len(connection.tools)
                status.resources = self._resource_counts.get(name, 0)
                status.pid = connection.pid
                status.notes = list(connection.notes)
            if renamed is not None:
                status.notes.insert(0, renamed)
            if server.enabled and (error := self.error(name)) is not None:
                status.status, status.error = "failed", error
                if is_needs_authentication(error):
                    status.status = NEEDS_AUTHENTICATION
            found.append(status)
        return found
