"""An MCP server behind OAuth 2.1 for the tests, built from the SDK's server auth pieces.

Run ``python oauth_server.py [--client ID:SECRET:REDIRECT_URI] [--deny] [--no-scopes] [--lazy]
[--step-up | --stubborn] [--token-auth basic|post|none-named] [--machine ID:SECRET] [--machine-jwt
ID:PUBLIC_KEY_PEM_FILE]``. One process serves two origins on 127.0.0.1 (free ports):

* the authorization server (``create_auth_routes``: metadata, ``/authorize``, ``/token``, ``/register``
  for dynamic client registration, ``/revoke``) over an in-memory provider that approves every
  authorization request at once (the "browser" is whoever follows the URL), and
* the protected resource: an ``MCPServer`` at ``/mcp`` that answers 401 without a valid bearer token and
  publishes its protected resource metadata (RFC 9728) naming the authorization server.

``--client`` pre-registers a confidential client (for ``[mcp.NAME.oauth] clientId``/``clientSecret``);
``--deny`` refuses every authorization (``access_denied``); ``--no-scopes`` names no scopes anywhere (the
client asks for the one it is configured with).

The resource server's own gate (instead of the SDK's ``RequireAuthMiddleware``, with its
``BearerAuthBackend``) for the modes conforming servers differ in: ``--lazy`` takes ``initialize``
without a token and answers 401 from ``tools/list`` on; ``--step-up`` answers the tool ``admin`` with a
403 ``insufficient_scope`` naming ``tools admin`` until the token has ``admin``; ``--stubborn`` refuses
``admin`` that way whatever the token has.

``--token-auth basic`` (or ``post``) registers the ``--client`` for that token-endpoint method only and
advertises only it (``none-named``: registered for Basic, advertising no method at all).
``--machine ID:SECRET`` lets a client get tokens with the client-credentials grant, its secret by Basic
or in the body (whichever ``--token-auth`` allows, both by default); ``--machine-jwt ID:PEM`` with a JWT
assertion (RFC 7523) signed by the private key of that public key.
Test controls on the authorization server: ``POST /test/expire`` makes every access token expired,
``POST /test/revoke`` revokes every token, ``GET /test/grants`` counts registrations, token grants (and
``refused_admin``: the 403s of the tool ``admin``; ``token_auth_<method>``: how clients authenticated).
Once both listen it prints ``READY <authorization port> <resource port>`` on stderr.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import unquote

import uvicorn
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
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
from mcp.server.auth.routes import (
    build_metadata,
    build_resource_metadata_url,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
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
    provider: MemoryProvider, issuer: str, resource: str, scopes: list[str] | None, gated: bool = False
) -> MCPServer:
    if gated:  # the Gate checks the tokens
        mcp = MCPServer("secure")
    else:
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

    if gated:

        @mcp.tool()
        def admin() -> str:
            """Something only the admin scope may do."""
            return "admin done"

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


@dataclass
class Options:
    """What the command line asked for."""

    clients: list[str] = field(default_factory=list)
    deny: bool = False
    scopes: bool = True
    lazy: bool = False
    step_up: bool = False
    stubborn: bool = False
    token_auth: str | None = None
    machine: dict[str, str] = field(default_factory=dict)
    machine_jwt: dict[str, str] = field(default_factory=dict)

    @property
    def gated(self) -> bool:
        return self.lazy or self.step_up or self.stubborn


class Gate:
    """The resource server's token check, per JSON-RPC request: the SDK's ``BearerAuthBackend`` decides
    whose token it is, this decides what it may do (see the module's docstring)."""

    def __init__(self, app, provider: MemoryProvider, resource: str, options: Options) -> None:
        self.app = app
        self.provider = provider
        self.backend = BearerAuthBackend(
            ProviderTokenVerifier(provider), resource_server_url=AnyHttpUrl(resource)
        )
        self.metadata_url = str(build_resource_metadata_url(AnyHttpUrl(resource)))
        self.options = options

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] != "/mcp" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        method = request.get("method") if isinstance(request, dict) else None
        tool = (request.get("params") or {}).get("name") if method == "tools/call" else None
        found = await self.backend.authenticate(HTTPConnection(scope))
        lazy = self.options.lazy and method in ("initialize", "notifications/initialized")
        if found is None and not lazy:
            await self._refuse(
                send, 401, 'error="invalid_token", error_description="Authentication required"'
            )
            return
        if tool == "admin" and (self.options.stubborn or "admin" not in found[0].scopes):
            self.provider.grants["refused_admin"] += 1
            await self._refuse(
                send,
                403,
                f'error="insufficient_scope", scope="{SCOPE} admin", error_description="admin only"',
            )
            return
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send, status: int, challenge: str) -> None:
        header = f'Bearer {challenge}, resource_metadata="{self.metadata_url}"'
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", header.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b'{"error": "refused"}'})


def _machine_token(provider: MemoryProvider, issuer: str, resource: str, options: Options) -> Route:
    """``/token`` for the client-credentials grant (the SDK's token handler has none): a secret by Basic or
    in the body, or a JWT assertion signed by the client's key (RFC 7523 §2.2)."""
    import jwt

    allowed = {"basic": ["basic"], "post": ["post"]}.get(options.token_auth or "", ["basic", "post"])

    def refuse(error: str, description: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": error, "error_description": description}, status_code=status)

    async def token(request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("grant_type") != "client_credentials":
            return refuse("unsupported_grant_type", "client_credentials only")
        header = request.headers.get("authorization", "")
        client_id = None
        if header.startswith("Basic "):
            if "basic" not in allowed:
                return refuse("invalid_client", "Basic is not accepted here", 401)
            who, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            client_id, secret = unquote(who), unquote(secret)
            if options.machine.get(client_id) != secret:
                return refuse("invalid_client", "wrong secret", 401)
            provider.grants["token_auth_client_secret_basic"] += 1
        elif "client_secret" in form:
            if "post" not in allowed:
                return refuse("invalid_client", "secrets in the body are not accepted here", 401)
            client_id = str(form.get("client_id"))
            if options.machine.get(client_id) != form.get("client_secret"):
                return refuse("invalid_client", "wrong secret", 401)
            provider.grants["token_auth_client_secret_post"] += 1
        elif "client_assertion" in form:
            assertion = str(form["client_assertion"])
            claimed = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
            key_file = options.machine_jwt.get(claimed)
            if key_file is None:
                return refuse("invalid_client", "unknown client", 401)
            with open(key_file) as handle:
                public = handle.read()
            try:
                jwt.decode(
                    assertion, public, algorithms=["RS256"], audience=[issuer, issuer + "/"], issuer=claimed
                )
            except jwt.PyJWTError as error:
                return refuse("invalid_client", f"bad assertion: {error}", 401)
            client_id = claimed
            provider.grants["token_auth_private_key_jwt"] += 1
        else:
            return refuse("invalid_client", "no client authentication", 401)
        provider.grants["client_credentials"] += 1
        scopes = str(form.get("scope") or SCOPE).split()
        issued = provider._issue(client_id, scopes, str(form.get("resource") or resource))
        return JSONResponse(issued.model_dump(exclude_none=True))

    return Route("/token", token, methods=["POST"])


def _valid_scopes(options: Options) -> list[str] | None:
    if not options.scopes:
        return None
    return [SCOPE, "admin"] if options.gated else [SCOPE]


def _metadata_route(issuer: str, options: Options) -> Route:
    """The authorization server's metadata, advertising only the token-endpoint methods it takes."""
    metadata = build_metadata(
        AnyHttpUrl(issuer),
        None,
        ClientRegistrationOptions(enabled=True, valid_scopes=_valid_scopes(options)),
        RevocationOptions(enabled=True),
    )
    methods = {
        "basic": ["client_secret_basic"],
        "post": ["client_secret_post"],
        "none-named": None,
    }
    if options.token_auth in methods:
        metadata.token_endpoint_auth_methods_supported = methods[options.token_auth]
    if options.machine or options.machine_jwt:
        metadata.grant_types_supported = ["client_credentials"]
        if options.machine_jwt:
            metadata.token_endpoint_auth_methods_supported = ["private_key_jwt"]
            metadata.token_endpoint_auth_signing_alg_values_supported = ["RS256"]
    handler = MetadataHandler(metadata)
    return Route("/.well-known/oauth-authorization-server", handler.handle, methods=["GET"])


async def serve(
    clients: list[str], deny: bool = False, scopes: bool = True, options: Options | None = None
) -> None:
    """Serve the authorization server and the protected resource until stopped."""
    auth_socket, resource_socket = _listening_socket(), _listening_socket()
    issuer = f"http://127.0.0.1:{auth_socket.getsockname()[1]}"
    resource = f"http://127.0.0.1:{resource_socket.getsockname()[1]}/mcp"
    options = options or Options(clients, deny, scopes)
    provider = MemoryProvider(deny)
    # a client registered by hand uses Basic (the method every authorization server supports) unless
    # the server takes only the body
    method = "client_secret_post" if options.token_auth == "post" else "client_secret_basic"
    for spec in clients:
        client_id, client_secret, redirect = spec.split(":", 2)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=[redirect],  # type: ignore[list-item] - validated as the model says
            token_endpoint_auth_method=method,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=SCOPE if scopes else None,
        )
    routes = create_auth_routes(
        provider,
        AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=_valid_scopes(options)
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    routes = [_metadata_route(issuer, options), *routes]
    if options.machine or options.machine_jwt:
        routes = [_machine_token(provider, issuer, resource, options), *routes]
    auth_app = Starlette(routes=[*routes, *_controls(provider)])
    mcp = _resource_server(provider, issuer, resource, [SCOPE] if scopes else None, options.gated)
    resource_app = mcp.streamable_http_app(host="127.0.0.1")
    if options.gated:
        for route in create_protected_resource_routes(
            AnyHttpUrl(resource), [AnyHttpUrl(issuer)], [SCOPE] if scopes else None
        ):
            resource_app.router.routes.insert(0, route)
        resource_app = Gate(resource_app, provider, resource, options)
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
    options = Options()
    while argv:
        match argv:
            case ["--client", spec, *rest] if spec.count(":") >= 2:
                options.clients.append(spec)
                argv = rest
            case ["--deny", *rest]:
                options.deny, argv = True, rest
            case ["--no-scopes", *rest]:
                options.scopes, argv = False, rest
            case ["--lazy", *rest]:
                options.lazy, argv = True, rest
            case ["--step-up", *rest]:
                options.step_up, argv = True, rest
            case ["--stubborn", *rest]:
                options.stubborn, argv = True, rest
            case ["--token-auth", ("basic" | "post" | "none-named") as how, *rest]:
                options.token_auth, argv = how, rest
            case ["--machine", spec, *rest] if ":" in spec:
                client_id, secret = spec.split(":", 1)
                options.machine[client_id] = secret
                argv = rest
            case ["--machine-jwt", spec, *rest] if ":" in spec:
                client_id, key_file = spec.split(":", 1)
                options.machine_jwt[client_id] = key_file
                argv = rest
            case _:
                sys.exit(f"usage: see {__file__}'s docstring")
    asyncio.run(serve(options.clients, options.deny, options.scopes, options))


if __name__ == "__main__":
    main(sys.argv[1:])
