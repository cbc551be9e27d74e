"""``[mcp.NAME]`` in ``opencode.toml``: the MCP servers to connect, in OpenCode's shape.

::

    [mcp.files]
    type = "local"
    command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
    environment = { DEBUG = "1" }
    timeout = 10000          # ms, for starting and for each request (default: experimental.mcp_timeout)
    maxTotalTimeout = 600000 # ms a call may run while the server keeps reporting progress (default 10 min)
    sandbox = true           # run it in the [sandbox] (workspace-write when that is off)
    writable = ["~/.cache/files-server"]   # its own writable roots, besides [sandbox]'s

    [mcp.docs]
    type = "remote"
    url = "https://example.com/mcp"
    headers = { Authorization = "Bearer …" }
    enabled = false

A misspelt key gets a warning naming the close match; a wrong type is a :class:`ConfigError` naming the
key path. Nothing here imports the ``mcp`` SDK.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from ..errors import ConfigError
from ..sandbox.settings import Settings, server_sandbox
from .credentials import OAuthConfig, oauth_table, parse_oauth

#: Keys of a server table, by type.
LOCAL_KEYS = frozenset(
    {"type", "command", "environment", "enabled", "timeout", "maxTotalTimeout", "sandbox", "writable"}
)
REMOTE_KEYS = frozenset({"type", "url", "headers", "enabled", "timeout", "maxTotalTimeout", "oauth"})

#: How long a server may take to start and list its tools when no timeout is configured (ms).
DEFAULT_CONNECT_TIMEOUT_MS = 30_000
#: How long a request may take when no timeout is configured (ms): the MCP client's default.
DEFAULT_REQUEST_TIMEOUT_MS = 60_000
#: How long a tool call may run in all while its server keeps reporting progress, unless configured (ms).
DEFAULT_MAX_TOTAL_TIMEOUT_MS = 600_000


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server."""

    name: str
    type: Literal["local", "remote"]
    command: tuple[str, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    enabled: bool = True
    timeout: int | None = None
    """Milliseconds, from the server's table or ``experimental.mcp_timeout``; ``None``: the defaults."""
    timeout_key: str = field(default="", compare=False)
    """The config key that sets :attr:`timeout` (``mcp.NAME.timeout`` unless it came from
    ``experimental.mcp_timeout``)."""
    max_total_timeout: int | None = None
    """Milliseconds a tool call may run in all while the server reports progress (each report restarts
    :attr:`timeout`); ``None``: :data:`DEFAULT_MAX_TOTAL_TIMEOUT_MS`."""
    oauth: OAuthConfig = field(default_factory=OAuthConfig)
    """A remote server's ``oauth`` (see :mod:`.credentials`)."""
    sandbox: Settings | None = None
    """A local server's sandbox (``sandbox = true``): ``[sandbox]`` (its mode, or workspace-write when
    that is off) plus the server's own ``writable`` roots; ``None``: not sandboxed."""
    writable: tuple[str, ...] = ()
    """The server's own ``writable`` roots (those beyond ``[sandbox]``'s)."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """The key of the server's service and registry source (``mcp:<name>``)."""
        return f"mcp:{self.name}"

    @property
    def connect_timeout(self) -> float:
        """Seconds to start, initialize and list tools."""
        return (self.timeout or DEFAULT_CONNECT_TIMEOUT_MS) / 1000

    @property
    def request_timeout(self) -> float:
        """Seconds one request may take (a tool call: between two progress reports)."""
        return (self.timeout or DEFAULT_REQUEST_TIMEOUT_MS) / 1000

    @property
    def total_timeout(self) -> float:
        """Seconds a tool call may take in all, however often its server reports progress (never less
        than :attr:`request_timeout`)."""
        total = (self.max_total_timeout or DEFAULT_MAX_TOTAL_TIMEOUT_MS) / 1000
        return max(total, self.request_timeout)

    @property
    def total_timeout_key(self) -> str:
        """The config key of :attr:`total_timeout` (``mcp.NAME.maxTotalTimeout``), or, when the request
        timeout is the larger, that one's key."""
        if self.total_timeout == self.request_timeout:
            return self.timeout_key
        return f"mcp.{self.name}.maxTotalTimeout"

    def __post_init__(self) -> None:
        if not self.timeout_key:
            object.__setattr__(self, "timeout_key", f"mcp.{self.name}.timeout")

    def describe(self) -> str:
        """``command args…`` or the URL, for ``opencode mcp list``."""
        return " ".join(self.command) if self.type == "local" else self.url

    def as_dict(self) -> dict[str, Any]:
        """The server as its TOML table (what ``opencode mcp add`` writes)."""
        data: dict[str, Any] = {"type": self.type}
        if self.type == "local":
            data["command"] = list(self.command)
            if self.environment:
                data["environment"] = dict(self.environment)
        else:
            data["url"] = self.url
            if self.headers:
                data["headers"] = dict(self.headers)
            if (oauth := oauth_table(self.oauth)) is not None:
                data["oauth"] = oauth
        if self.sandbox is not None:
            data["sandbox"] = True
            if self.writable:
                data["writable"] = list(self.writable)
        if not self.enabled:
            data["enabled"] = False
        if self.timeout is not None:
            data["timeout"] = self.timeout
        if self.max_total_timeout is not None:
            data["maxTotalTimeout"] = self.max_total_timeout
        return data


class _Common(TypedDict):
    """The fields every server's config has, local or remote."""

    name: str
    timeout_key: str
    enabled: bool
    timeout: int | None
    max_total_timeout: int | None


def servers(config: Mapping[str, Any]) -> tuple[dict[str, ServerConfig], list[str]]:
    """The servers of a merged config, in config order, and warnings for keys that look misspelt."""
    table = config.get("mcp")
    if table is None:
        return {}, []
    if not isinstance(table, Mapping):
        raise ConfigError("mcp must be a table of servers ([mcp.NAME])")
    default_timeout = _timeout(
        (config.get("experimental") or {}).get("mcp_timeout"), "experimental.mcp_timeout"
    )
    found: dict[str, ServerConfig] = {}
    warnings: list[str] = []
    for name, value in table.items():
        where = f"mcp.{name}"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a table")
        kind = value.get("type")
        if kind not in ("local", "remote"):
            raise ConfigError(f'{where}.type must be "local" or "remote", not {kind!r}')
        known = LOCAL_KEYS if kind == "local" else REMOTE_KEYS
        for key in value:
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
                hint = f" (did you mean '{where}.{close[0]}'?)" if close else ""
                warnings.append(f"unknown config key '{where}.{key}'{hint}; it is ignored")
        enabled = value.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{where}.enabled must be true or false, not {enabled!r}")
        timeout = _timeout(value.get("timeout"), f"{where}.timeout")
        common: _Common = {
            "name": str(name),
            "timeout_key": f"{where}.timeout"
            if timeout is not None or default_timeout is None
            else "experimental.mcp_timeout",
            "enabled": enabled,
            "timeout": timeout if timeout is not None else default_timeout,
            "max_total_timeout": _timeout(value.get("maxTotalTimeout"), f"{where}.maxTotalTimeout"),
        }
        if kind == "local":
            command = value.get("command")
            if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
                raise ConfigError(f"{where}.command must be a non-empty list of strings, not {command!r}")
            found[str(name)] = ServerConfig(
                type="local",
                command=tuple(command),
                environment=_strings(value.get("environment"), f"{where}.environment"),
                **server_sandbox(config, value, where),
                **common,
            )
        else:
            url = value.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ConfigError(f"{where}.url must be an http:// or https:// URL, not {url!r}")
            found[str(name)] = ServerConfig(
                type="remote",
                url=url,
                headers=_strings(value.get("headers"), f"{where}.headers"),
                oauth=parse_oauth(value.get("oauth"), f"{where}.oauth"),
                **common,
            )
    return found, warnings


def _timeout(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of milliseconds, not {value!r}")
    return value


def _strings(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must be a table of strings")
    return tuple((str(k), v) for k, v in value.items())
