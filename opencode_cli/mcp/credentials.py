"""OAuth for remote MCP servers, the light half: the ``[mcp.NAME.oauth]`` table and the credential file.

::

    [mcp.docs]
    type = "remote"
    url = "https://example.com/mcp"
    oauth = false               # no OAuth: send the headers only

    [mcp.tracker.oauth]         # a client registered by hand (else: dynamic client registration)
    clientId = "opencode-tools"
    clientSecret = "…"
    scope = "read write"
    tokenEndpointAuthMethod = "client_secret_post"   # else: what the authorization server advertises

    [mcp.builds.oauth]          # machine to machine: no person signs in
    grant = "client_credentials"
    clientId = "ci"
    clientSecret = "…"          # or privateKeyFile = "~/.config/ci.pem" (a signed JWT assertion)
    issuer = "https://auth.example.com"

What ``opencode mcp auth NAME`` obtains (the client registration, the tokens, when the access token
expires, the authorization server's metadata) is kept in ``<data>/mcp-auth.json``, one entry per server
name, bound to the server's URL (an entry for another URL is ignored). The file is written atomically and
is readable by its owner only (0600). Nothing here imports the ``mcp`` SDK;
:mod:`.oauth` (a connection's auth) and :mod:`.sign_in` do the flow.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

#: Keys of ``[mcp.NAME.oauth]``, as OpenCode spells them (the last five are ours).
OAUTH_KEYS = frozenset(
    {
        "clientId",
        "clientSecret",
        "scope",
        "grant",
        "tokenEndpointAuthMethod",
        "privateKeyFile",
        "signingAlgorithm",
        "issuer",
    }
)
#: ``grant``: a person signs in (the default), or the client itself gets tokens (machine to machine).
GRANTS = ("authorization_code", "client_credentials")
#: ``tokenEndpointAuthMethod``: how a client with a secret (or a key) proves itself at the token endpoint.
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")

#: How ``opencode mcp list`` words a server that answered 401 and has no usable credentials.
NEEDS_AUTHENTICATION = "needs authentication"


@dataclass(frozen=True)
class OAuthConfig:
    """How a remote server authenticates: ``enabled`` unless ``oauth = false``; without a ``client_id``
    the client registers itself (RFC 7591).

    ``auth_method`` ``None`` chooses at the token endpoint: what the authorization server advertises
    (``token_endpoint_auth_methods_supported``: Basic when it lists it or lists none, else the body), and
    for a dynamically registered client what its registration says."""

    enabled: bool = True
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    grant: str = "authorization_code"
    auth_method: str | None = None
    private_key_file: str | None = None
    """A PEM private key that signs the client's JWT assertion (``private_key_jwt``, RFC 7523)."""
    signing_algorithm: str = "RS256"
    issuer: str | None = None
    """The authorization server the client credentials belong to (they are sent nowhere else)."""

    @property
    def machine(self) -> bool:
        """Whether tokens come from the client-credentials grant (no person, no browser)."""
        return self.grant == "client_credentials"


def parse_oauth(value: Any, where: str) -> OAuthConfig:
    """``[mcp.NAME] oauth`` (absent, ``false``, ``true`` or a table) as an :class:`OAuthConfig`."""
    if value is None or value is True:
        return OAuthConfig()
    if value is False:
        return OAuthConfig(enabled=False)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be false or a table (clientId, clientSecret, scope), not {value!r}")
    for key in value:
        if key not in OAUTH_KEYS:
            raise ConfigError(f"unknown key '{where}.{key}' (known: {', '.join(sorted(OAUTH_KEYS))})")
    for key, item in value.items():
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{where}.{key} must be a non-empty string")
    if "clientSecret" in value and "clientId" not in value:
        raise ConfigError(f"{where}.clientSecret needs {where}.clientId")
    grant = value.get("grant", "authorization_code")
    if grant not in GRANTS:
        raise ConfigError(f"{where}.grant must be one of {', '.join(GRANTS)}, not {grant!r}")
    method = value.get("tokenEndpointAuthMethod")
    if method is not None and method not in AUTH_METHODS:
        raise ConfigError(
            f"{where}.tokenEndpointAuthMethod must be one of {', '.join(AUTH_METHODS)}, not {method!r}"
        )
    key_file = value.get("privateKeyFile")
    if key_file is not None or method == "private_key_jwt":
        if grant != "client_credentials":
            raise ConfigError(
                f'{where}.privateKeyFile (private_key_jwt) needs {where}.grant = "client_credentials"'
            )
        if key_file is None:
            raise ConfigError(
                f'{where}.tokenEndpointAuthMethod = "private_key_jwt" needs {where}.privateKeyFile'
            )
        if method not in (None, "private_key_jwt") or "clientSecret" in value:
            raise ConfigError(f"{where}.privateKeyFile signs instead of a secret: leave out clientSecret")
        method = "private_key_jwt"
    elif method in ("client_secret_basic", "client_secret_post") and "clientSecret" not in value:
        raise ConfigError(f"{where}.tokenEndpointAuthMethod = {method!r} needs {where}.clientSecret")
    if grant == "client_credentials" and (
        "clientId" not in value or not ({"clientSecret", "privateKeyFile"} & set(value))
    ):
        raise ConfigError(
            f'{where}.grant = "client_credentials" needs clientId and clientSecret or privateKeyFile'
        )
    return OAuthConfig(
        client_id=value.get("clientId"),
        client_secret=value.get("clientSecret"),
        scope=value.get("scope"),
        grant=grant,
        auth_method=method,
        private_key_file=key_file,
        signing_algorithm=value.get("signingAlgorithm", "RS256"),
        issuer=value.get("issuer"),
    )


def oauth_table(config: OAuthConfig) -> bool | dict[str, str] | None:
    """The TOML value that gives ``config`` (``None``: the default, nothing to write)."""
    if not config.enabled:
        return False
    method = (
        None if config.auth_method == "private_key_jwt" and config.private_key_file else config.auth_method
    )
    table = {
        key: value
        for key, value in (
            ("clientId", config.client_id),
            ("clientSecret", config.client_secret),
            ("scope", config.scope),
            ("grant", None if config.grant == "authorization_code" else config.grant),
            ("tokenEndpointAuthMethod", method),
            ("privateKeyFile", config.private_key_file),
            ("signingAlgorithm", None if config.signing_algorithm == "RS256" else config.signing_algorithm),
            ("issuer", config.issuer),
        )
        if value
    }
    return table or None


class AuthenticationNeeded(Exception):
    """A remote server answered 401 and there is no token that works, or 403 for a scope the token lacks:
    someone has to sign in (again)."""

    def __init__(self, server: str, detail: str | None = None) -> None:
        said = f": {detail}" if detail else ""
        super().__init__(f"{NEEDS_AUTHENTICATION} (run: opencode mcp auth {server}){said}")
        self.server = server


def is_needs_authentication(error: str | None) -> bool:
    """Whether a server's recorded failure is :class:`AuthenticationNeeded`."""
    return error is not None and error.startswith(NEEDS_AUTHENTICATION)


# -- the credential file ---------------------------------------------------------------------------


def credentials_path(env: Mapping[str, str] = os.environ) -> Path:
    """``<data>/mcp-auth.json``."""
    from ..paths import data_dir

    return data_dir(env) / "mcp-auth.json"


def load_all(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every stored entry, by server name; a missing or unreadable file is no entries."""
    path = path or credentials_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return (
        {name: entry for name, entry in data.items() if isinstance(entry, dict)}
        if isinstance(data, dict)
        else {}
    )


def entry_for(name: str, url: str, path: Path | None = None) -> dict[str, Any]:
    """The stored entry of server ``name`` if it was made for ``url``, else ``{}``."""
    entry = load_all(path).get(name) or {}
    return entry if entry.get("serverUrl") == url else {}


def update(name: str, url: str, changes: Mapping[str, Any], path: Path | None = None) -> None:
    """Merge ``changes`` into server ``name``'s entry (a fresh one when it was made for another URL) and
    write the file atomically with mode 0600."""
    path = path or credentials_path()
    with _locked(path):
        data = load_all(path)
        entry = data.get(name) or {}
        if entry.get("serverUrl") != url:
            entry = {"serverUrl": url}
        entry.update(changes)
        data[name] = entry
        _write(path, data)


def remove(name: str, path: Path | None = None) -> bool:
    """Forget server ``name``'s credentials; whether there were any."""
    path = path or credentials_path()
    with _locked(path):
        data = load_all(path)
        if data.pop(name, None) is None:
            return False
        _write(path, data)
        return True


def sign_ins(servers: Mapping[str, Any], path: Path | None = None) -> list[dict[str, Any]]:
    """Who is signed in: each remote server with OAuth (config order), then stored entries of servers no
    longer configured. ``state`` is ``signed in``, ``signed in (expired: refreshed on next use)``,
    ``expired`` or ``not signed in``; ``expiresAt`` is a Unix time or ``None``."""
    stored = load_all(path)
    now = time.time()
    rows = []
    for name, server in servers.items():
        if server.type != "remote" or not server.oauth.enabled:
            continue
        entry = stored.get(name) or {}
        if entry.get("serverUrl") != server.url:
            entry = {}
        rows.append(_row(name, server.url, entry, now))
    for name, entry in stored.items():
        if name not in servers:
            rows.append({**_row(name, str(entry.get("serverUrl", "")), entry, now), "configured": False})
    return rows


def _row(name: str, url: str, entry: Mapping[str, Any], now: float) -> dict[str, Any]:
    tokens = entry.get("tokens") or {}
    expiry = entry.get("expiresAt")
    if not tokens.get("access_token"):
        state = "not signed in"
    elif expiry is None or expiry > now:
        state = "signed in"
    elif tokens.get("refresh_token"):
        state = "signed in (expired: refreshed on next use)"
    else:
        state = "expired"
    return {"name": name, "url": url, "state": state, "expiresAt": expiry, "configured": True}


def expires_at(expires_in: int | None, now: float | None = None) -> float | None:
    """When a token that lives ``expires_in`` seconds from ``now`` expires (``None``: never said)."""
    return None if expires_in is None else (now if now is not None else time.time()) + int(expires_in)


def _write(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON through a 0600 temporary file in the same directory, fsync and rename."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".mcp-auth.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Any:
    """One writer at a time across processes (a read-modify-write of the file)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
