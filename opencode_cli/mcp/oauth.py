"""OAuth 2.1 for remote MCP servers, a connection's side: the ``mcp`` SDK's :class:`OAuthClientProvider`
over our credential file (:mod:`.credentials`).

A remote connection gets its ``httpx`` auth from :func:`auth_for`, a :class:`Guard`: with stored tokens
the SDK provider sends them and refreshes them when they expire (also in a later process: the expiry and
the authorization server's metadata are stored with them); a 401 (no tokens, or tokens refused and no
refresh helps) is recorded, and the connection fails with
:class:`~.credentials.AuthenticationNeeded`: the server shows ``needs authentication`` and its tools are
absent. Nothing is registered and no one is asked on the way. With the client-credentials grant (no
person) the SDK's provider of that grant gets the tokens itself.

:func:`provider` is the one place a provider is made, also for the sign-in of ``opencode mcp auth``
(:mod:`.sign_in`), which hands it its redirect and callback.

This module imports the SDK; it is imported only when a remote server connects or someone signs in.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, PrivateAttr

from . import credentials
from .credentials import AuthenticationNeeded, OAuthConfig

if TYPE_CHECKING:
    from pathlib import Path

    from .config import ServerConfig

#: OpenCode's callback: a client registered by hand lists this redirect URI.
CALLBACK_PORT = 19876
CALLBACK_PATH = "/mcp/oauth/callback"
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


# -- storage -----------------------------------------------------------------------------------------


class StoredCredentials:
    """The SDK's ``TokenStorage`` over one server's entry of the credential file.

    Besides the tokens it records when the access token expires and the authorization server's metadata,
    so that a later process refreshes an expired token at the right endpoint before using it.
    ``fresh`` (a sign-in, until it gets its tokens) ignores the stored tokens; a registration made for
    another redirect URI, or for less scope than a server asked for since, is not offered, so the client
    registers again.
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
                # the method is chosen when a token request is made (see _ChoosesMethod)
                token_endpoint_auth_method="client_secret_basic" if oauth.client_secret else "none",
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
        wanted = set((self._entry().get("scopeRequired") or "").split()) if self.fresh else set()
        if info.scope is not None and not wanted <= set(info.scope.split()):
            return None  # registered for less than a server now asks for: register again
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if not self.server.oauth.client_id:
            self._update({"clientInfo": client_info.model_dump(mode="json", exclude_none=True)})


class _ClientMetadata(OAuthClientMetadata):
    """Client metadata that asks for the configured ``scope`` when the server names none (the SDK would
    otherwise ask for no scope at all), and always adds a scope a server asked for since
    (``scopeRequired``, stored by :class:`Guard`) to what the server names on a challenge."""

    _configured_scope: str | None = PrivateAttr(default=None)
    _required_scope: str | None = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope":
            value = union_scopes(value or self._configured_scope, self._required_scope)
        super().__setattr__(name, value)


def _metadata(server: ServerConfig, redirect: str, required: str | None = None) -> OAuthClientMetadata:
    metadata = _ClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",  # a registered client is public: PKCE, no secret
    )
    metadata._configured_scope = server.oauth.scope
    metadata._required_scope = required
    metadata.scope = None  # the configured and required scopes, until a challenge names one
    return metadata


def choose_auth_method(configured: str | None, metadata: OAuthMetadata | None) -> str:
    """How a client with a secret authenticates at the token endpoint: the configured method, else what
    the authorization server advertises (``token_endpoint_auth_methods_supported``): HTTP Basic when it
    lists Basic or names none (RFC 6749 §2.3.1, RFC 8414's default), the request body when it lists
    only that."""
    if configured is not None:
        return configured
    advertised = (metadata.token_endpoint_auth_methods_supported if metadata is not None else None) or []
    if "client_secret_basic" in advertised or not advertised:
        return "client_secret_basic"
    return "client_secret_post" if "client_secret_post" in advertised else "client_secret_basic"


class _ChoosesMethod:
    """For a client registered by hand with a secret: the token-endpoint method is chosen before every
    token request (the authorization server's metadata is known by then); a dynamically registered
    client keeps the method its registration names."""

    context: Any
    oauth: OAuthConfig

    def _choose_method(self) -> None:
        info = self.context.client_info
        if info is None or not self.oauth.client_id or not info.client_secret:
            return
        method = choose_auth_method(self.oauth.auth_method, self.context.oauth_metadata)
        if info.token_endpoint_auth_method != method:
            self.context.client_info = info.model_copy(update={"token_endpoint_auth_method": method})

    # each method below calls the SDK's own: this is a mixin, and OAuthClientProvider, after it in the
    # provider's bases, defines them (mypy looks for them in this class's bases: the ignores below)

    async def _exchange_token_authorization_code(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        self._choose_method()
        return await super()._exchange_token_authorization_code(auth_code, code_verifier)  # type: ignore[misc]

    async def _refresh_token(self) -> httpx2.Request:
        self._choose_method()
        return await super()._refresh_token()  # type: ignore[misc]

    async def _exchange_token_client_credentials(self) -> httpx2.Request:
        self._choose_method()
        return await super()._exchange_token_client_credentials()  # type: ignore[misc]


class _CodeProvider(_ChoosesMethod, OAuthClientProvider):
    """The authorization-code provider (a person signs in), choosing the token-endpoint method."""

    def __init__(self, oauth: OAuthConfig, *args: Any, **kwargs: Any) -> None:
        self.oauth = oauth
        super().__init__(*args, **kwargs)


def _machine_provider(server: ServerConfig, storage: Any, directory: str | None) -> OAuthClientProvider:
    """The client-credentials provider of ``server`` (the SDK's extensions): a secret sent as the
    authorization server prefers (or as configured), or a JWT assertion signed with the private key."""
    import warnings

    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    oauth = server.oauth
    assert oauth.client_id is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no issuer configured: the SDK warns of 3.0; we document it
        if oauth.private_key_file is not None:
            from pathlib import Path

            path = Path(oauth.private_key_file).expanduser()
            if not path.is_absolute() and directory is not None:
                path = Path(directory) / path
            try:
                key = path.read_text(encoding="utf-8")
            except OSError as error:
                raise MachineAuthFailed(
                    f"cannot read mcp.{server.name}.oauth.privateKeyFile {str(path)!r} ({error.strerror})"
                ) from None
            signer = SignedJWTParameters(
                issuer=oauth.client_id,
                subject=oauth.client_id,
                signing_key=key,
                signing_algorithm=oauth.signing_algorithm,
            )
            return PrivateKeyJWTOAuthProvider(
                server.url,
                storage,
                oauth.client_id,
                signer.create_assertion_provider(),
                scope=oauth.scope,
                issuer=oauth.issuer,
            )
        assert oauth.client_secret is not None

        class _SecretProvider(_ChoosesMethod, ClientCredentialsOAuthProvider):
            pass

        provider = _SecretProvider(
            server.url,
            storage,
            oauth.client_id,
            oauth.client_secret,
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
        provider.oauth = oauth
        return provider


class MachineAuthFailed(Exception):
    """The client-credentials configuration cannot be used (an unreadable private key)."""


# -- the httpx auth of a connection --------------------------------------------------------------------


class Guard(httpx2.Auth):
    """The auth of a connection: the stored tokens through the SDK provider (refreshed when they expire,
    and once more when the server refuses one early), or none. Nobody is asked on the way: a 401 that no
    refresh mends, or a 403 ``insufficient_scope`` (a wider scope needs a person to sign in again), is
    let through as the answer (the SDK reports the request failed) and recorded in :attr:`refusal`.

    With the client-credentials grant the provider gets tokens by itself, on any 401, and steps up once
    to a scope a 403 challenges; the same challenge after that is a refusal, not retried."""

    def __init__(self, server: ServerConfig, path: Path, directory: str | None = None) -> None:
        self.server = server
        self.path = path
        self.refusal: str | None = None
        """Why the server refused the last request it refused (someone has to sign in, or it will not
        take any token): :meth:`take_refusal` reads and clears it."""
        self.signed_out = False
        """Whether that refusal was a 401 (no token the server takes: the connection is of no use)."""
        self._stepped: set[str] = set()
        stored = credentials.entry_for(server.name, server.url, path).get("tokens")
        machine = server.oauth.machine
        self.provider = provider(server, path, directory=directory) if stored or machine else None

    @property
    def refused(self) -> bool:
        """Whether a refusal is recorded and not yet taken."""
        return self.refusal is not None

    def take_refusal(self) -> str | None:
        """The recorded refusal (cleared)."""
        refusal, self.refusal = self.refusal, None
        return refusal

    def _granted(self) -> set[str]:
        context = self.provider.context if self.provider is not None else None
        tokens = context.current_tokens if context is not None else None
        return set((tokens.scope or "").split()) if tokens is not None else set()

    def _judge(self, response: httpx2.Response) -> None:
        """Record what a refusal of the request means."""
        self.signed_out = response.status_code == 401
        if response.status_code == 401:
            self.refusal = str(AuthenticationNeeded(self.server.name))
            return
        scope = _challenged_scope(response)
        if scope is None:
            return
        wanted = set(scope.split())
        if wanted <= self._granted() or scope in self._stepped or self.server.oauth.machine:
            self.refusal = (
                f'refused the request for lack of scope "{scope}", which its token already has; '
                "it is not asked again"
            )
            return
        credentials.update(self.server.name, self.server.url, {"scopeRequired": scope}, self.path)
        self.refusal = str(AuthenticationNeeded(self.server.name, f'it asks for scope "{scope}"'))

    def _lets_provider_handle(self, response: httpx2.Response) -> bool:
        """Whether the SDK provider may answer this refusal of the request itself: only with the
        client-credentials grant (no person), and a scope step-up only once per scope."""
        if not self.server.oauth.machine:
            return False
        scope = _challenged_scope(response)
        if scope is None:
            return response.status_code == 401
        if scope in self._stepped or set(scope.split()) <= self._granted():
            return False
        self._stepped.add(scope)
        return True

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.provider is None:
            response = yield request
            self._judge(response)
            return
        context = self.provider.context
        for retried in (False, True):
            flow = self.provider.async_auth_flow(request)
            last: httpx2.Response | None = None
            stopped = False
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request:
                        last = response
                        if _refusal(response) and not self._lets_provider_handle(response):
                            stopped = True
                            break
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                if last is not None and _refusal(last):
                    self._judge(last)  # refused again after the provider's one retry
                return
            except OAuthFlowError as error:
                # The flow failed (a token endpoint that refuses the client's credentials): the request
                # goes as it is and its refusal is reported with the reason (an error raised here would
                # tear the transport down without one).
                response = yield request
                self._judge(response)
                if self.refusal is not None:
                    self.refusal = f"OAuth failed: {error}"
                return
            finally:
                await flow.aclose()
            assert stopped and last is not None
            if last.status_code != 401 or retried or not context.can_refresh_token():
                self._judge(last)  # no token the server takes, or a wider scope than it has
                return
            # The server refused the token before the time it was given for: refresh it, try once more.
            context.token_expiry_time = time.time() - 1


def _challenged_scope(response: httpx2.Response) -> str | None:
    """The scope a 403 ``insufficient_scope`` asks for (``None``: not such a refusal)."""
    from mcp.client.auth.utils import extract_field_from_www_auth

    if response.status_code != 403 or extract_field_from_www_auth(response, "error") != "insufficient_scope":
        return None
    return extract_field_from_www_auth(response, "scope") or ""


def _refusal(response: httpx2.Response) -> bool:
    return response.status_code == 401 or _challenged_scope(response) is not None


class SignInHandlers(Protocol):
    """What a sign-in gives the provider (:class:`.sign_in.SignIn`): the port its callback listens on,
    where the authorization URL goes, and how the code comes back."""

    port: int

    def redirect(self, url: str) -> Awaitable[None]: ...

    def callback(self) -> Awaitable[AuthorizationCodeResult]: ...


def provider(
    server: ServerConfig,
    path: Path,
    sign_in: SignInHandlers | None = None,
    *,
    directory: str | None = None,
) -> OAuthClientProvider:
    """The SDK provider over ``server``'s stored credentials: for a connection (``sign_in`` ``None``: it
    never asks anyone, the :class:`Guard` stops at a 401) or for a sign-in (fresh tokens); with the
    client-credentials grant, the SDK's provider of that grant."""
    redirect = redirect_uri(sign_in.port if sign_in else CALLBACK_PORT)
    storage = StoredCredentials(server, path, redirect, fresh=sign_in is not None)
    entry = credentials.entry_for(server.name, server.url, path)
    made: OAuthClientProvider
    if server.oauth.machine:
        made = _machine_provider(server, storage, directory)
    else:
        made = _CodeProvider(
            server.oauth,
            server.url,
            _metadata(server, redirect, entry.get("scopeRequired") if sign_in else None),
            storage,
            redirect_handler=sign_in.redirect if sign_in else None,
            callback_handler=sign_in.callback if sign_in else None,
        )
    storage.provider = made
    if sign_in is None:
        # What the SDK does not keep between processes: when the token expires (so it is refreshed
        # before use, not refused) and where the token endpoint is.
        made.context.token_expiry_time = entry.get("expiresAt")
        if entry.get("authorizationServer"):
            with contextlib.suppress(ValueError):
                made.context.oauth_metadata = OAuthMetadata.model_validate(entry["authorizationServer"])
    return made


def auth_for(server: ServerConfig, env: Mapping[str, str], directory: str | None = None) -> Guard | None:
    """The auth of a connection to ``server`` (credentials in ``env``'s data directory, a relative
    ``privateKeyFile`` from ``directory``): ``None`` for a local server or ``oauth = false``."""
    if server.type != "remote" or not server.oauth.enabled:
        return None
    return Guard(server, credentials.credentials_path(env), directory)
