"""OAuth 2.1 for remote MCP servers, the flow: the ``mcp`` SDK's :class:`OAuthClientProvider` over our
credential file (:mod:`.credentials`).

A remote connection gets its ``httpx`` auth from :func:`auth_for`, a :class:`Guard`: with stored tokens
the SDK provider sends them and refreshes them when they expire (also in a later process: the expiry and
the authorization server's metadata are stored with them); a 401 (no tokens, or tokens refused and no
refresh helps) is recorded, and the connection fails with
:class:`~.credentials.AuthenticationNeeded`: the server shows ``needs authentication`` and its tools are
absent. Nothing is registered and no one is asked on the way.

:func:`sign_in` (``opencode mcp auth NAME``) runs the SDK provider's authorization-code flow with PKCE:
the URL announced (and opened in a browser when asked), the code received on a ``127.0.0.1`` callback
server that lives as long as the sign-in.

This module imports the SDK; it is imported only when a remote server connects or someone signs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, PrivateAttr

from . import credentials

if TYPE_CHECKING:
    from pathlib import Path

    from .config import ServerConfig

#: OpenCode's callback: a client registered by hand lists this redirect URI.
CALLBACK_PORT = 19876
CALLBACK_PATH = "/mcp/oauth/callback"
#: Seconds a sign-in waits for the browser to come back.
SIGN_IN_WINDOW = 300.0
#: How the client names itself when it registers.
CLIENT_NAME = "opencode-tools"

if not os.environ.get("OPENCODE_DEBUG"):
    # The SDK logs a failed flow with its traceback; ours reports it in one line.
    _sdk_log = logging.getLogger("mcp.client.auth")
    _sdk_log.addHandler(logging.NullHandler())
    _sdk_log.propagate = False


def redirect_uri(port: int = CALLBACK_PORT) -> str:
    """The callback URL a sign-in listens on."""
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


class SignInFailed(Exception):
    """The authorization server refused, or nobody came back within the window."""


# -- storage -----------------------------------------------------------------------------------------


class _StoredCredentials:
    """The SDK's ``TokenStorage`` over one server's entry of the credential file.

    Besides the tokens it records when the access token expires and the authorization server's metadata,
    so that a later process refreshes an expired token at the right endpoint before using it.
    ``fresh`` (a sign-in, until it gets its tokens) ignores the stored tokens; a registration made for
    another redirect URI is not offered, so the client registers again.
    """

    def __init__(self, server: ServerConfig, path: Path, redirect: str, fresh: bool = False) -> None:
        self.server = server
        self.path = path
        self.redirect = redirect
        self.fresh = fresh
        self.provider: OAuthClientProvider | None = None

    def _entry(self) -> dict[str, Any]:
        return credentials.entry_for(self.server.name, self.server.url, self.path)

    def _update(self, changes: Mapping[str, Any]) -> None:
        credentials.update(self.server.name, self.server.url, changes, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = None if self.fresh else self._entry().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.fresh = False
        changes: dict[str, Any] = {
            "tokens": tokens.model_dump(mode="json", exclude_none=True),
            "expiresAt": credentials.expires_at(tokens.expires_in),
        }
        metadata = self.provider.context.oauth_metadata if self.provider is not None else None
        if metadata is not None:
            changes["authorizationServer"] = metadata.model_dump(mode="json", exclude_none=True)
        self._update(changes)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        oauth = self.server.oauth
        if oauth.client_id:
            return OAuthClientInformationFull(
                client_id=oauth.client_id,
                client_secret=oauth.client_secret,
                redirect_uris=[AnyUrl(self.redirect)],
                token_endpoint_auth_method="client_secret_post" if oauth.client_secret else "none",
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                scope=oauth.scope,
            )
        stored = self._entry().get("clientInfo")
        if not stored:
            return None
        info = OAuthClientInformationFull.model_validate(stored)
        if self.fresh and self.redirect not in [str(uri) for uri in info.redirect_uris or []]:
            return None
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if not self.server.oauth.client_id:
            self._update({"clientInfo": client_info.model_dump(mode="json", exclude_none=True)})


class _ClientMetadata(OAuthClientMetadata):
    """Client metadata whose configured ``scope`` is asked for when the server names none (the SDK would
    otherwise ask for no scope at all)."""

    _configured_scope: str | None = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope" and value is None:
            value = self._configured_scope
        super().__setattr__(name, value)


def _metadata(server: ServerConfig, redirect: str) -> OAuthClientMetadata:
    oauth = server.oauth
    metadata = _ClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if oauth.client_secret else "none",
        scope=oauth.scope,
    )
    metadata._configured_scope = oauth.scope
    return metadata


# -- the httpx auth of a connection --------------------------------------------------------------------


class Guard(httpx2.Auth):
    """The auth of a connection: the stored tokens through the SDK provider (refreshed when they expire,
    and once more when the server refuses one early), or none; a 401 that no refresh mends is let through
    as the answer (the SDK reports the request failed) and recorded in :attr:`refused`, instead of
    starting an authorization nobody is there for."""

    def __init__(self, server: ServerConfig, path: Path) -> None:
        self.server = server
        self.refused = False
        """Whether the server answered 401 (someone has to sign in: ``opencode mcp auth NAME``)."""
        stored = credentials.entry_for(server.name, server.url, path).get("tokens")
        self.provider = _provider(server, path, None) if stored else None

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.provider is None:
            response = yield request
            self.refused = response.status_code == 401
            return
        context = self.provider.context
        for retried in (False, True):
            flow = self.provider.async_auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and response.status_code == 401:
                        break
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()
            if retried or not context.can_refresh_token():
                self.refused = True  # no token the server takes
                return
            # The server refused the token before the time it was given for: refresh it, try once more.
            context.token_expiry_time = time.time() - 1


@dataclasses.dataclass
class _SignIn:
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


def _provider(server: ServerConfig, path: Path, sign_in: _SignIn | None) -> OAuthClientProvider:
    """The SDK provider over ``server``'s stored credentials: for a connection (``sign_in`` ``None``: it
    never asks anyone, the :class:`Guard` stops at a 401) or for a sign-in (fresh tokens)."""
    redirect = redirect_uri(sign_in.port if sign_in else CALLBACK_PORT)
    storage = _StoredCredentials(server, path, redirect, fresh=sign_in is not None)
    provider = OAuthClientProvider(
        server.url,
        _metadata(server, redirect),
        storage,
        redirect_handler=sign_in.redirect if sign_in else None,
        callback_handler=sign_in.callback if sign_in else None,
    )
    storage.provider = provider
    if sign_in is None:
        # What the SDK does not keep between processes: when the token expires (so it is refreshed
        # before use, not refused) and where the token endpoint is.
        entry = credentials.entry_for(server.name, server.url, path)
        provider.context.token_expiry_time = entry.get("expiresAt")
        if entry.get("authorizationServer"):
            with contextlib.suppress(ValueError):
                provider.context.oauth_metadata = OAuthMetadata.model_validate(entry["authorizationServer"])
    return provider


def auth_for(server: ServerConfig, env: Mapping[str, str]) -> Guard | None:
    """The auth of a connection to ``server`` (credentials in ``env``'s data directory): ``None`` for a
    local server or ``oauth = false``."""
    if server.type != "remote" or not server.oauth.enabled:
        return None
    return Guard(server, credentials.credentials_path(env))


# -- signing in ----------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _callback_server(sign_in: _SignIn) -> AsyncIterator[None]:
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
    app = Starlette(routes=[Route(CALLBACK_PATH, came_back, methods=["GET"])])
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
    port: int = CALLBACK_PORT,
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
    flow = _SignIn(server.name, port, open_browser, announce)
    async with _callback_server(flow):
        provider = _provider(server, credentials.credentials_path(env), flow)
        try:
            async with (
                create_mcp_http_client(headers=dict(server.headers), auth=provider) as client,
                streamable_http_client(server.url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
        except Exception as error:
            raise _sign_in_error(error) from None
    stored = provider.context.storage
    if isinstance(stored, _StoredCredentials) and stored.fresh:  # no tokens came: nothing asked for them
        raise SignInFailed(f"{server.url} did not ask to sign in (it answers without OAuth)")


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
    return SignInFailed(_describe(error))


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    return str(error) or type(error).__name__
