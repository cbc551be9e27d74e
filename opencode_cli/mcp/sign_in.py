"""The sign-in of ``opencode mcp auth NAME``: the ``mcp`` SDK's authorization-code flow with PKCE.

:func:`sign_in` announces the authorization URL (and opens it in a browser when asked), receives the code
on a ``127.0.0.1`` callback server that lives as long as the sign-in, and stores the client and the tokens
through the provider :mod:`.oauth` makes (the same provider a connection uses, handed this sign-in's
redirect and callback). A failure is one :class:`SignInFailed` with the reason.

This module imports the SDK; only ``opencode mcp auth`` imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING

from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import AuthorizationCodeResult

from ..errors import message_of
from . import credentials, oauth

if TYPE_CHECKING:
    from .config import ServerConfig

#: Seconds a sign-in waits for the browser to come back.
SIGN_IN_WINDOW = 300.0


class SignInFailed(Exception):
    """The authorization server refused, or nobody came back within the window."""


@dataclasses.dataclass
class SignIn:
    """One ``opencode mcp auth NAME`` in progress: where the browser comes back, and what it brought."""

    server: str
    port: int
    open_browser: bool
    announce: Callable[[str], None]
    result: asyncio.Future[AuthorizationCodeResult] | None = None

    async def redirect(self, url: str) -> None:
        self.announce(url)
        if self.open_browser:
            import webbrowser

            with contextlib.suppress(Exception):
                await asyncio.to_thread(webbrowser.open, url)

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self.result), SIGN_IN_WINDOW)
        except TimeoutError:
            raise SignInFailed(f"nobody came back from the browser within {SIGN_IN_WINDOW:g} s") from None


@contextlib.asynccontextmanager
async def _callback_server(sign_in: SignIn) -> AsyncIterator[None]:
    """Listen on ``127.0.0.1:<port>`` for the authorization server's redirect while the block runs."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    loop = asyncio.get_running_loop()
    sign_in.result = loop.create_future()

    async def came_back(request: Request) -> HTMLResponse:
        query = request.query_params
        assert sign_in.result is not None
        if sign_in.result.done():
            return HTMLResponse("<p>This sign-in is already complete.</p>", status_code=409)
        if "error" in query:
            reason = query["error"] + (
                f": {query['error_description']}" if "error_description" in query else ""
            )
            sign_in.result.set_exception(SignInFailed(f"the authorization server refused: {reason}"))
            return HTMLResponse(f"<p>Sign-in to {sign_in.server} failed ({reason}).</p>", status_code=400)
        sign_in.result.set_result(
            AuthorizationCodeResult(
                code=query.get("code", ""), state=query.get("state"), iss=query.get("iss")
            )
        )
        return HTMLResponse(f"<p>Signed in to {sign_in.server}. You can close this window.</p>")

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", sign_in.port))
    except OSError as error:
        listener.close()
        raise SignInFailed(
            f"cannot listen on 127.0.0.1:{sign_in.port} for the callback ({error.strerror}); "
            "another sign-in may be running, or pass --callback-port"
        ) from None
    app = Starlette(routes=[Route(oauth.CALLBACK_PATH, came_back, methods=["GET"])])
    server = uvicorn.Server(
        uvicorn.Config(app, log_config=None, log_level="error", access_log=False, lifespan="off")
    )
    serving = asyncio.create_task(server.serve(sockets=[listener]), name=f"oauth callback {sign_in.server}")
    try:
        yield
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(serving), 5)
        except (TimeoutError, Exception):
            serving.cancel()
            with contextlib.suppress(BaseException):
                await serving
        listener.close()
        if not sign_in.result.done():
            sign_in.result.cancel()


async def sign_in(
    server: ServerConfig,
    env: Mapping[str, str],
    *,
    port: int = oauth.CALLBACK_PORT,
    open_browser: bool = False,
    announce: Callable[[str], None] = print,
) -> None:
    """Run the authorization-code flow (PKCE) with ``server`` over streamable HTTP: register the client
    when no ``clientId`` is configured, ``announce`` the authorization URL (and open a browser when
    ``open_browser``), take the code on the callback, store the client and the tokens. Raises
    :class:`SignInFailed` (also for a server that cannot be reached). The credentials go to ``env``'s data
    directory."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if server.type != "remote":
        raise SignInFailed(f'MCP server "{server.name}" is local: only remote servers sign in')
    if not server.oauth.enabled:
        raise SignInFailed(f'MCP server "{server.name}" has oauth = false')
    flow = SignIn(server.name, port, open_browser, announce)
    async with _callback_server(flow):
        provider = oauth.provider(server, credentials.credentials_path(env), flow)
        try:
            async with (
                create_mcp_http_client(headers=dict(server.headers), auth=provider) as client,
                streamable_http_client(server.url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.list_tools()  # a server may take initialize without a token
        except Exception as error:
            raise _sign_in_error(error) from None
    stored = provider.context.storage
    if isinstance(stored, oauth.StoredCredentials) and stored.fresh:  # no tokens came: nothing asked for them
        raise SignInFailed(f"{server.url} did not ask to sign in (it answers without OAuth)")
    if credentials.entry_for(server.name, server.url, credentials.credentials_path(env)).get("scopeRequired"):
        # asked for and granted: nothing is owed any more
        credentials.update(
            server.name, server.url, {"scopeRequired": None}, credentials.credentials_path(env)
        )


def _sign_in_error(error: BaseException) -> Exception:
    """The one error a failed sign-in reports: the innermost of ours or of the SDK's OAuth flow."""
    pending = [error]
    while pending:
        current = pending.pop()
        if isinstance(current, SignInFailed | OAuthFlowError):
            return current if isinstance(current, SignInFailed) else SignInFailed(str(current))
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        elif current.__cause__ is not None:
            pending.append(current.__cause__)
    return SignInFailed(message_of(error))
