"""``opencode mcp auth NAME | --list`` and ``opencode mcp logout NAME``: signing in to remote MCP servers
behind OAuth, and forgetting the credentials."""

from __future__ import annotations

import os
import sys
from typing import Any

from .common import EXIT_TOOL_ERROR, err, fail, friendly_errors, make_project, print_json, run_in_project

#: Set (to anything) to never open a browser; CI and tests set it. ``--no-browser`` does the same.
NO_BROWSER_ENV = "OPENCODE_NO_BROWSER"


def _remote_servers(project: Any) -> dict[str, Any]:
    return {
        name: server
        for name, server in project.generation.mcp_servers.items()
        if server.type == "remote" and server.oauth.enabled
    }


def _should_open_browser(no_browser: bool) -> bool:
    """Whether to open a browser: never with ``--no-browser``, ``$OPENCODE_NO_BROWSER`` or ``$CI``, and
    only when stdout is a terminal (someone is there to use it)."""
    if no_browser or os.environ.get(NO_BROWSER_ENV) or os.environ.get("CI"):
        return False
    return sys.stdout.isatty()


def sign_in(
    name: str | None, list_: bool, no_browser: bool, callback_port: int | None, as_json: bool
) -> None:
    """Sign in to ``name`` (the authorization-code flow), or with ``list_`` show who is signed in."""
    from ..mcp import credentials

    with friendly_errors():
        project = make_project()
        remote = _remote_servers(project)
    if list_:
        if name is not None:
            fail("error: give either NAME or --list")
        rows = credentials.sign_ins(project.generation.mcp_servers, credentials.credentials_path(project.env))
        if as_json:
            print_json({"servers": rows})
            return
        if not rows:
            err("no remote MCP servers use OAuth (add one with: opencode mcp add NAME --url URL)")
            return
        width = max(len(row["name"]) for row in rows)
        for row in rows:
            note = (
                ""
                if row["configured"]
                else "  (no longer configured: opencode mcp logout " + row["name"] + ")"
            )
            print(f"{row['name'].ljust(width)}  {row['state']}  {row['url']}{note}")
        return
    if name is None:
        fail("error: give the server to sign in to (opencode mcp auth NAME), or --list")
    configured = project.generation.mcp_servers.get(name)
    if configured is None:
        known = ", ".join(sorted(remote)) or "none"
        fail(f"error: no MCP server {name!r} is configured (remote servers with OAuth: {known})")
    if configured.type != "remote":
        fail(f"error: MCP server {name!r} is local; only remote servers sign in")
    if not configured.oauth.enabled:
        fail(f"error: MCP server {name!r} has oauth = false in its config")
    if configured.oauth.machine:
        _machine_sign_in(project, name)
        return
    port = 19876 if callback_port is None else callback_port
    if not 0 < port <= 65535:
        fail(f"error: --callback-port must be between 1 and 65535, not {port}")
    browser = _should_open_browser(no_browser)

    def announce(url: str) -> None:
        print(f"Open this URL to sign in to {name}:\n{url}", flush=True)
        err("waiting for the browser to come back…" if browser else "waiting for the sign-in to complete…")

    async def work() -> int:
        from ..mcp.sign_in import SignInFailed, sign_in

        try:
            await sign_in(configured, project.env, port=port, open_browser=browser, announce=announce)
        except SignInFailed as error:
            fail(f"error: sign-in to {name} failed: {error}", EXIT_TOOL_ERROR)
        connection = await project.mcp.connection(name)  # the stored tokens, as every command uses them
        return len(connection.tools)

    with friendly_errors():
        tools = run_in_project(project, work)
    print(f"signed in to {name} ({tools} tool{'' if tools == 1 else 's'})")


def _machine_sign_in(project: Any, name: str) -> None:
    """The client-credentials grant needs no person: connecting gets (and stores) the tokens."""

    async def work() -> int:
        await project.mcp.open([name])
        connection = project.mcp.peek(name)
        if connection is None:
            error = project.mcp.error(name) or "not connected"
            fail(f"error: sign-in to {name} failed: {error}", EXIT_TOOL_ERROR)
        return len(connection.tools)

    with friendly_errors():
        tools = run_in_project(project, work)
    print(f"signed in to {name} with its client credentials ({tools} tool{'' if tools == 1 else 's'})")


def sign_out(name: str) -> None:
    """Forget ``name``'s stored client registration and tokens (of this environment's data directory:
    no config is read, so a broken one does not stand in the way)."""
    from ..mcp import credentials

    if credentials.remove(name):
        print(f"signed out of {name} (its credentials are removed)")
        return
    err(f"not signed in to {name}: nothing to remove")
