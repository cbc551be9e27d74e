"""The HTTP client of the network tools (webfetch, websearch).

The client reads nothing from the process environment on its own (``trust_env=False``: no ``~/.netrc``
credentials sent to whatever host a model names, no proxy picked up behind the caller's back). What a
user does configure is taken from the *tool context's* environment instead:

* ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` (either case) and ``NO_PROXY``;
* ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` for a private certificate authority.

``httpx`` is imported by the functions here, never at module import, so listing tools stays fast.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name) or env.get(name.lower())
    return value.strip() if value and value.strip() else None


def _no_proxy_pattern(entry: str) -> str:
    """An httpx mount pattern for one ``NO_PROXY`` entry (a host, a domain suffix or an address)."""
    if "://" in entry:
        return entry
    host = entry.lstrip(".")
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"all://*{host}"
    return f"all://[{address}]" if address.version == 6 else f"all://{address}"


def proxy_mounts(env: Mapping[str, str]) -> dict[str, httpx.AsyncHTTPTransport | None]:
    """Transports per URL pattern for the proxies ``env`` names (``None``: go direct)."""
    import httpx

    proxies: dict[str, str] = {}
    everything = _get(env, "ALL_PROXY")
    if everything:
        proxies["all://"] = everything
    for scheme in ("http", "https"):
        proxy = _get(env, f"{scheme.upper()}_PROXY")
        if proxy:
            proxies[f"{scheme}://"] = proxy
    if not proxies:
        return {}
    mounts: dict[str, httpx.AsyncHTTPTransport | None] = {}
    for entry in (_get(env, "NO_PROXY") or "").split(","):
        entry = entry.strip()
        if entry == "*":
            return {}
        if entry:
            mounts[_no_proxy_pattern(entry)] = None
    for pattern, proxy in proxies.items():
        if "://" not in proxy:
            proxy = f"http://{proxy}"
        mounts[pattern] = httpx.AsyncHTTPTransport(proxy=proxy)
    return mounts


def _verify(env: Mapping[str, str]) -> Any:
    cafile, capath = _get(env, "SSL_CERT_FILE"), _get(env, "SSL_CERT_DIR")
    if not (cafile or capath):
        return True
    import ssl

    return ssl.create_default_context(cafile=cafile, capath=capath)


def client(env: Mapping[str, str], timeout: float, **options: Any) -> httpx.AsyncClient:
    """An ``AsyncClient`` with the proxies and certificates of ``env`` and a per-operation ``timeout``."""
    import httpx

    return httpx.AsyncClient(
        trust_env=False,
        timeout=httpx.Timeout(timeout),
        mounts=proxy_mounts(env),
        verify=_verify(env),
        **options,
    )
