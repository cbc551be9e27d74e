"""``opencode mcp list | add | remove | serve``: the servers of ``[mcp.NAME]``, and serving our tools."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .common import (
    EXIT_TOOL_ERROR,
    err,
    exit_if_signalled,
    fail,
    friendly_errors,
    make_project,
    print_json,
    run_in_project,
)


def list_servers(as_json: bool) -> None:
    """Connect every enabled server and print each one's status, tool and resource counts."""
    from ..mcp.connection import plural

    with friendly_errors():
        project = make_project()
        configured = project.generation.mcp_servers
        held = [record for record in project.generation.held_back if record.kind == "mcp"]

    async def look() -> list[Any]:
        await project.open()
        return project.mcp.statuses()

    statuses = run_in_project(project, look) if configured else []
    if as_json:
        print_json(
            {
                "servers": [status.as_dict() for status in statuses],
                "not_trusted": [
                    {"name": record.name, "target": record.location, "reason": record.error}
                    for record in held
                ],
            }
        )
        return
    if not statuses and not held:
        err("no MCP servers configured (add one with: opencode mcp add NAME -- COMMAND ARGS…)")
        return
    width = max(len(name) for name in [*(status.name for status in statuses), *(r.name for r in held)])
    for status in statuses:
        counts = (
            f"{plural(status.tools, 'tool')}, {plural(status.resources, 'resource')}"
            + (f", pid {status.pid}" if status.pid else "")
            if status.status == "connected"
            else ""
        )
        print(f"{status.name.ljust(width)}  {status.type:<6}  {status.status:<13}  {counts}".rstrip())
        print(f"{' ' * width}  {status.target}")
        if status.error:
            print(f"{' ' * width}  error: {status.error}")
        for note in status.notes:
            print(f"{' ' * width}  note: {note}")
    for record in held:
        print(f"{record.name.ljust(width)}  {'-':<6}  not trusted")
        print(f"{' ' * width}  {record.location}")
        print(f"{' ' * width}  reason: {record.error}")


def add_server(
    name: str,
    command: list[str],
    url: str | None,
    headers: list[str],
    timeout: int | None,
    global_: bool,
    *,
    force: bool = False,
) -> None:
    """Write ``[mcp.NAME]`` into the project's (or the global) ``opencode.toml``, keeping the file's
    comments and layout; a server of that name already there is replaced only with ``--force``."""
    from ..config import read_toml, set_key
    from ..mcp.config import ServerConfig
    from .config_cmd import write_target

    if bool(command) == bool(url):
        fail("error: give either -- COMMAND ARGS… (a local server) or --url URL (a remote one)")
    if url is not None and not url.startswith(("http://", "https://")):
        fail(f"error: --url must start with http:// or https://, not {url!r}")
    parsed: dict[str, str] = {}
    for header in headers:
        key, sep, value = header.partition("=")
        if not sep or not key:
            fail(f"error: --header takes KEY=VALUE, not {header!r}")
        parsed[key] = value
    if timeout is not None and timeout <= 0:
        fail("error: --timeout is a positive number of milliseconds")
    if command:
        server = ServerConfig(name, "local", command=tuple(command), timeout=timeout)
    else:
        server = ServerConfig(name, "remote", url=url or "", headers=tuple(parsed.items()), timeout=timeout)
    with friendly_errors():
        project = make_project()
        target = write_target(project, global_)
        existing = (read_toml(target) if target.is_file() else {}).get("mcp") or {}
        if name in existing and not force:
            fail(f"error: {target} already has an MCP server {name}; give --force to replace it")
        set_key(target, f"mcp.{name}", server.as_dict())
    print(
        f"replaced MCP server {name} in {target}"
        if name in existing
        else f"added MCP server {name} to {target}"
    )


def remove_server(name: str, global_: bool) -> None:
    """Remove ``[mcp.NAME]`` (with its sub-tables) from the project's (or the global) ``opencode.toml``,
    keeping the file's comments and layout. A server configured only in another file is named there;
    stored OAuth credentials stay until ``opencode mcp logout NAME``."""
    from ..config import remove_key
    from ..mcp import credentials
    from .config_cmd import write_target

    with friendly_errors():
        project = make_project()
        target = write_target(project, global_)
        if not remove_key(target, f"mcp.{name}"):
            where = [
                str(path)
                for _, path in _config_files(project)
                if path != target and name in (_read_any(path, project.env).get("mcp") or {})
            ]
            if where:
                fail(f"error: MCP server {name} is configured in {', '.join(where)}, not in {target}")
            known = ", ".join(sorted(project.generation.mcp_servers)) or "none"
            fail(f"error: {target} has no MCP server {name} (configured: {known})")
    print(f"removed MCP server {name} from {target}")
    if name in credentials.load_all(credentials.credentials_path(project.env)):
        err(f"note: its OAuth credentials are kept; opencode mcp logout {name} removes them")


def _config_files(project: Any) -> list[tuple[str, Any]]:
    from ..config import config_files

    return config_files(project.directory, project.worktree, project.env)


def _read_any(path: Any, env: Any) -> dict[str, Any]:
    """A config file's data as written (TOML or OpenCode's JSON, its ``{env:}``/``{file:}`` references not
    filled in: only its keys are looked at, and a project's file names nothing that is then read); an
    unreadable one is empty."""
    from ..config import read_file

    try:
        return read_file(path, env, filled=False)
    except Exception:
        return {}


#: The HTTP port when --port is not given.
DEFAULT_PORT = 4097


def serve(
    *,
    model_text: str | None,
    agent: str | None,
    transport: str,
    host: str | None,
    port: int | None,
    allow: list[str],
    deny: list[str],
    yes: bool,
    session_id: str | None,
    allow_hosts: list[str] | None = None,
    token: str | None = None,
    directory: Path | None = None,
    roots_within: list[Path] | None = None,
) -> None:
    """Serve the tools ``agent`` and the model are offered to MCP clients, until the client goes (stdio)
    or Ctrl-C / SIGTERM (HTTP). Nothing but the protocol is written to stdout."""
    from .tools_cmd import flag_rules

    if transport not in ("stdio", "http"):
        fail(f"error: --transport is stdio or http, not {transport!r}")
    if transport == "stdio" and (host is not None or port is not None):
        fail("error: --host and --port are for --transport http")
    if transport == "http" and session_id:
        fail("error: --session is for --transport stdio (over HTTP each client has a session of its own)")
    port = DEFAULT_PORT if port is None else port
    if not 0 <= port <= 65535:
        fail(f"error: --port must be between 0 and 65535, not {port}")
    bind = host or "127.0.0.1"
    import os

    from_env = token is not None and token == os.environ.get("OPENCODE_SERVE_TOKEN")
    if transport == "stdio" and (allow_hosts or (token and not from_env)):
        fail("error: --allow-host and --token are for --transport http")
    roots_within = list(roots_within or [])
    if roots_within and transport == "stdio":
        fail("error: --roots-within is for --transport http (the stdio client's roots are followed anywhere)")
    if roots_within and directory is not None:
        fail("error: --roots-within is for clients' roots, not -C/--directory (which ignores them)")
    for place in roots_within:
        if not place.is_dir():
            fail(f"error: --roots-within {place}: not a directory")
    token = token.strip() if token else None
    rules = flag_rules(allow, "allow") + flag_rules(deny, "deny")
    if transport == "stdio":  # the protocol has stdout to itself before any tool or plugin is loaded
        from ..machine_output import claim

        claim()
    with friendly_errors():
        from ..mcp.serve import ServeHost, ServeOptions

        if directory is not None and not directory.is_dir():
            fail(f"error: --directory {directory}: not a directory")
        project = make_project(directory)
        options = ServeOptions(
            model=model_text,
            agent=agent,
            rules=rules,
            yes=yes,
            session_id=session_id,
            follow_roots=directory is None,  # an explicit directory wins over the client's roots
            roots_within=[place.resolve() for place in roots_within],
        )
        served = ServeHost(project, options)
        project.tools(served.model, served.agent)  # a broken config or tool is an error before serving
    from ..mcp.serve.transports import LOOPBACK, HttpAccess, ListenError, needs_token, run

    if transport == "http" and needs_token(bind) and not token:
        fail(
            f"error: serving on {bind} needs a bearer token: pass --token or set OPENCODE_SERVE_TOKEN "
            "(clients send it as 'Authorization: Bearer TOKEN')"
        )
    if transport == "http" and bind not in LOOPBACK:
        err(
            f"warning: serving on {bind}: anyone who can reach this address and holds the token can run the "
            "tools (with the permissions this server was given); the default is 127.0.0.1"
        )

    def announce(text: str) -> None:
        err(f"opencode mcp serve: {text} (agent {served.agent}, model {served.model or 'none'})")

    async def work() -> None:
        try:
            access = HttpAccess(list(allow_hosts or []), token)
            await run(served, transport, bind=bind, port=port, announce=announce, access=access)
        except ListenError as error:
            fail(f"error: {error}", EXIT_TOOL_ERROR)

    run_in_project(project, work)
    if transport == "stdio":  # the calls in flight were answered: now the signal's exit code
        exit_if_signalled(SimpleNamespace(reason=served.stopped))
