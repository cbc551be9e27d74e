"""An MCP server behind OAuth 2.1 for the tests, built from the SDK's server auth pieces.

Run ``python oauth_server.py [--client ID:SECRET:REDIRECT_URI] [--deny] [--no-scopes]``. One process
serves two origins on 127.0.0.1 (free ports):

* the authorization server (``create_auth_routes``: metadata, ``/authorize``, ``/token``, ``/register``
  for dynamic client registration, ``/revoke``) over an in-memory provider that approves every
  authorization request at once (the "browser" is whoever follows the URL), and
* the protected resource: an ``MCPServer`` at ``/mcp`` that answers 401 without a valid bearer token and
  publishes its protected resource metadata (RFC 9728) naming the authorization server.

``--client`` pre-registers a confidential client (for ``[mcp.NAME.oauth] clientId``/``clientSecret``);
``--deny`` refuses every authorization (``access_denied``); ``--no-scopes`` names no scopes anywhere (the
client asks for the one it is configured with).
Test controls on the authorization server: ``POST /test/expire`` makes every access token expired,
``POST /test/revoke`` revokes every token, ``GET /test/grants`` counts registrations and token grants.
Once both listen it prints ``READY <authorization port> <resource port>`` on stderr.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys
import time
from collections import Counter

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    ProviderTokenVerifier,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

#: Seconds an access token lives (long: the tests expire tokens with ``POST /test/expire``).
ACCESS_LIFETIME = 3600
SCOPE = "tools"


class MemoryProvider:
    """The authorization server's state: clients, codes and tokens, in memory; approves every request."""

    def __init__(self, deny: bool = False) -> None:
        self.deny = deny
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants: Counter[str] = Counter()

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.grants["registration"] += 1

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if self.deny:
            raise AuthorizeError("access_denied", "the user said no")
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="tester",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + ACCESS_LIFETIME,
            resource=resource,
            subject="tester",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="tester"
        )
        return OAuthToken(
            access_token=access,
            expires_in=ACCESS_LIFETIME,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if self.codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "the code was used already")
        self.grants["authorization_code"] += 1
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "the refresh token is not valid")
        self.grants["refresh_token"] += 1
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def _controls(provider: MemoryProvider) -> list[Route]:
    async def expire(request: Request) -> JSONResponse:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    async def revoke(request: Request) -> JSONResponse:
        count = len(provider.access) + len(provider.refresh)
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"revoked": count})

    async def grants(request: Request) -> JSONResponse:
        return JSONResponse(dict(provider.grants))

    return [
        Route("/test/expire", expire, methods=["POST"]),
        Route("/test/revoke", revoke, methods=["POST"]),
        Route("/test/grants", grants, methods=["GET"]),
    ]


def _resource_server(
    provider: MemoryProvider, issuer: str, resource: str, scopes: list[str] | None
) -> MCPServer:
    mcp = MCPServer(
        "secure",
        token_verifier=ProviderTokenVerifier(provider),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(resource),
            required_scopes=scopes,
            validate_token_resource=True,
        ),
    )

    @mcp.tool()
    def whoami() -> str:
        """Who the bearer token belongs to."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"signed in as {token.subject if token else 'nobody'}"

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    return mcp


async def serve(clients: list[str], deny: bool = False, scopes: bool = True) -> None:
    """Serve the authorization server and the protected resource until stopped."""
    auth_socket, resource_socket = _listening_socket(), _listening_socket()
    issuer = f"http://127.0.0.1:{auth_socket.getsockname()[1]}"
    resource = f"http://127.0.0.1:{resource_socket.getsockname()[1]}/mcp"
    provider = MemoryProvider(deny)
    for spec in clients:
        client_id, client_secret, redirect = spec.split(":", 2)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=[redirect],  # type: ignore[list-item] - validated as the model says
            token_endpoint_auth_method="client_secret_post",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=SCOPE if scopes else None,
        )
    routes = create_auth_routes(
        provider,
        AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[SCOPE] if scopes else None
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    auth_app = Starlette(routes=[*routes, *_controls(provider)])
    resource_app = _resource_server(
        provider, issuer, resource, [SCOPE] if scopes else None
    ).streamable_http_app(host="127.0.0.1")
    servers = [
        uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        for app in (auth_app, resource_app)
    ]
    tasks = [
        asyncio.create_task(server.serve(sockets=[sock]))
        for server, sock in zip(servers, (auth_socket, resource_socket), strict=True)
    ]
    while not all(server.started for server in servers) and not any(task.done() for task in tasks):
        await asyncio.sleep(0.02)
    if all(server.started for server in servers):
        ports = " ".join(str(sock.getsockname()[1]) for sock in (auth_socket, resource_socket))
        print(f"READY {ports}", file=sys.stderr, flush=True)
    await asyncio.gather(*tasks)


def main(argv: list[str]) -> None:
    clients: list[str] = []
    deny, scopes = False, True
    while argv:
        match argv:
            case ["--client", spec, *rest] if spec.count(":") >= 2:
                clients.append(spec)
                argv = rest
            case ["--deny", *rest]:
                deny, argv = True, rest
            case ["--no-scopes", *rest]:
                scopes, argv = False, rest
            case _:
                sys.exit("usage: oauth_server.py [--client ID:SECRET:REDIRECT_URI]… [--deny] [--no-scopes]")
    asyncio.run(serve(clients, deny, scopes))


if __name__ == "__main__":
    main(sys.argv[1:])
