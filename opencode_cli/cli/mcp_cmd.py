"""``opencode mcp list | add``: the MCP servers of ``[mcp.NAME]``."""

from __future__ import annotations

from typing import Any

from .common import err, fail, friendly_errors, make_project, print_json, run_in_project


def list_servers(as_json: bool) -> None:
    """Connect every enabled server and print each one's status, tool and resource counts."""
    with friendly_errors():
        project = make_project()
        configured = project.generation.mcp_servers

    async def look() -> list[Any]:
        await project.open()
        return project.mcp.statuses()

    statuses = run_in_project(project, look) if configured else []
    if as_json:
        print_json({"servers": [status.as_dict() for status in statuses]})
        return
    if not statuses:
        err("no MCP servers configured (add one with: opencode mcp add NAME -- COMMAND ARGS…)")
        return
    width = max(len(status.name) for status in statuses)
    for status in statuses:
        counts = f"{status.tools} tools, {status.resources} resources" if status.status == "connected" else ""
        print(f"{status.name.ljust(width)}  {status.type:<6}  {status.status:<13}  {counts}".rstrip())
        print(f"{' ' * width}  {status.target}")
        if status.error:
            print(f"{' ' * width}  error: {status.error}")


def add_server(
    name: str, command: list[str], url: str | None, headers: list[str], timeout: int | None, global_: bool
) -> None:
    """Write ``[mcp.NAME]`` into the project's (or the global) ``opencode.toml``; other keys are kept."""
    from ..config import set_key
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
        backup = set_key(target, f"mcp.{name}", server.as_dict())
    print(f"added MCP server {name} to {target}")
    if backup is not None:
        err(f"note: {target} had comments; tomli-w drops them, so a copy is kept at {backup}")
