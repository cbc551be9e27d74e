"""``websearch``: a live web search through the Exa or the Parallel search service (both speak MCP).

Each call is one JSON-RPC ``tools/call`` request, POSTed to ``<base>/mcp``; the answer is either a JSON
body or a server-sent-event stream, and the text of the first content item that has one is the output.

Which service answers (builtin-tools spec §11): ``OPENCODE_WEBSEARCH_PROVIDER`` (``exa`` or
``parallel``) if set; else ``parallel`` under ``OPENCODE_ENABLE_PARALLEL``, ``exa`` under
``OPENCODE_ENABLE_EXA`` (or ``OPENCODE_EXPERIMENTAL``); else the parity of the FNV-1a hash of the
session id, so one session always talks to the same service.

Environment (read from the tool context's environment):

``EXA_API_KEY``
    sent to Exa as the ``exaApiKey`` query parameter (Exa also answers without one, with lower limits);
``PARALLEL_API_KEY``
    sent to Parallel as ``Authorization: Bearer ...``;
``OPENCODE_EXA_BASE_URL`` / ``OPENCODE_PARALLEL_BASE_URL``
    replace ``https://mcp.exa.ai`` / ``https://search.parallel.ai`` (``/mcp`` is appended), for a
    mirror, a proxy or a test server.

A refused request (HTTP 401/403) says which key to set, or that the key set was rejected; an
unreachable service names the address tried. Keys never appear in error messages.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field, StrictFloat

from ..context import ToolContext
from ..errors import ToolError, message_of
from ..results import ToolResult
from ._arguments import Arguments

#: Seconds the search service has to answer.
TIMEOUT = 25.0
NO_RESULTS = "No search results found. Please try a different query."
PROVIDER_ENV = "OPENCODE_WEBSEARCH_PROVIDER"


@dataclass(frozen=True)
class Backend:
    """One search service."""

    name: str
    label: str
    tool: str
    """The MCP tool called on the service."""
    default_base: str
    base_env: str
    key_env: str


EXA = Backend(
    "exa", "Exa Web Search", "web_search_exa", "https://mcp.exa.ai", "OPENCODE_EXA_BASE_URL", "EXA_API_KEY"
)
PARALLEL = Backend(
    "parallel",
    "Parallel Web Search",
    "web_search",
    "https://search.parallel.ai",
    "OPENCODE_PARALLEL_BASE_URL",
    "PARALLEL_API_KEY",
)
BACKENDS = {backend.name: backend for backend in (EXA, PARALLEL)}


class WebsearchParameters(Arguments):
    """Arguments of the websearch tool."""

    query: str = Field(description="What to search the web for")
    numResults: StrictFloat | None = Field(
        None, allow_inf_nan=False, description="How many results to return (8 by default)"
    )
    livecrawl: Literal["fallback", "preferred"] | None = Field(
        None,
        description=(
            "When to crawl pages live: 'fallback' crawls only when no cached copy exists (the default), "
            "'preferred' crawls live first"
        ),
    )
    type: Literal["auto", "fast", "deep"] | None = Field(
        None,
        description="The kind of search: 'auto' balanced (the default), 'fast' quick, 'deep' thorough",
    )
    contextMaxCharacters: StrictFloat | None = Field(
        None,
        allow_inf_nan=False,
        description="The most characters of page text to return (the service's default is 10000)",
    )


# -- choosing the service ---------------------------------------------------------------------------


def fnv1a(text: str) -> int:
    """The 32-bit FNV-1a hash of ``text`` taken as UTF-16 code units (as JavaScript sees a string)."""
    value = 0x811C9DC5
    units = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(units), 2):
        value ^= units[index] | (units[index + 1] << 8)
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def select_provider(session_id: str, env: Mapping[str, str]) -> str:
    """``exa`` or ``parallel`` for this session: the override, the flags, else the session's hash."""
    from ..flags import Flags

    override = (env.get(PROVIDER_ENV) or "").strip().lower()
    if override in BACKENDS:
        return override
    flags = Flags.from_env(env)
    if flags.enable_parallel:
        return "parallel"
    if flags.enable_exa:
        return "exa"
    return "exa" if fnv1a(session_id) % 2 == 0 else "parallel"


def provider_label(provider: Any) -> str:
    """``Exa Web Search``, ``Parallel Web Search``, or ``Web Search`` for anything else."""
    backend = BACKENDS.get(provider) if isinstance(provider, str) else None
    return backend.label if backend else "Web Search"


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def model_name(extra: Mapping[str, Any] | None) -> str | None:
    """The model's API id (else its id) from ``ctx.extra["model"]``, at most 100 characters."""
    model = (extra or {}).get("model")
    if model is None or isinstance(model, str | bytes | int | float):
        return None
    api_id = _field(_field(model, "api"), "id")
    model_id = _field(model, "id")
    name = api_id if isinstance(api_id, str) else model_id if isinstance(model_id, str) else None
    return name[:100] if name is not None else None


# -- the request ------------------------------------------------------------------------------------


def _number(value: float) -> float | int:
    """A JSON number as JavaScript writes it: ``8.0`` is ``8``."""
    return int(value) if math.isfinite(value) and value.is_integer() else value


def _base(backend: Backend, env: Mapping[str, str]) -> str:
    return (env.get(backend.base_env) or "").strip().rstrip("/") or backend.default_base


def endpoint(backend: Backend, env: Mapping[str, str]) -> str:
    """The address requests go to, without any key (safe to show)."""
    return f"{_base(backend, env)}/mcp"


def arguments(backend: Backend, params: WebsearchParameters, ctx: ToolContext) -> dict[str, Any]:
    """The MCP tool's arguments for this search."""
    if backend is PARALLEL:
        args: dict[str, Any] = {
            "objective": params.query,
            "search_queries": [params.query],
            "session_id": ctx.session_id,
        }
        name = model_name(ctx.extra)
        if name is not None:
            args["model_name"] = name
        return args
    count = params.numResults
    args = {
        "query": params.query,
        "type": params.type or "auto",
        "numResults": _number(count) if count and not math.isnan(count) else 8,
        "livecrawl": params.livecrawl or "fallback",
    }
    if params.contextMaxCharacters is not None:
        args["contextMaxCharacters"] = _number(params.contextMaxCharacters)
    return args


def _payload_text(payload: str) -> str | None:
    """The text of one JSON-RPC message; ``None`` for anything else (progress frames, ``[DONE]``)."""
    payload = payload.strip()
    if not payload.startswith("{"):
        return None
    try:
        message = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        for item in result["content"]:
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"]:
                return item["text"]
        return None
    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        raise ToolError(f"Web search failed: {error['message']}")
    return None


def parse_response(body: str) -> str | None:
    """The result text of a JSON-RPC body or of an SSE stream's ``data:`` lines (first one with text)."""
    if body.strip().startswith("{"):
        text = _payload_text(body)
        if text:
            return text
    for line in body.splitlines():
        if line.startswith("data:"):
            text = _payload_text(line[5:])
            if text:
                return text
    return None


def _refusal(backend: Backend, status: int, keyed: bool, url: str, body: str) -> ToolError:
    if status in (401, 403):
        if keyed:
            return ToolError(f"{backend.label} rejected the API key in {backend.key_env} (HTTP {status}).")
        return ToolError(
            f"{backend.label} refused the request (HTTP {status}) and no API key is set: "
            f"set {backend.key_env} in the environment and try again."
        )
    detail = " ".join(body.split())[:300]
    return ToolError(f"{backend.label} failed: HTTP {status} from {url}" + (f": {detail}" if detail else ""))


async def search(backend: Backend, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """Call the service's search tool; the result text, or ``None`` when it found nothing."""
    import httpx

    from .. import __version__
    from . import _http

    env = ctx.env
    key = (env.get(backend.key_env) or "").strip()
    shown = endpoint(backend, env)
    url = shown
    headers = {"Accept": "application/json, text/event-stream"}
    if backend is EXA and key:
        url += "?exaApiKey=" + quote(key, safe="-_.!~*'()")
    if backend is PARALLEL:
        headers["User-Agent"] = f"opencode/{__version__}"
        if key:
            headers["Authorization"] = f"Bearer {key}"
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": backend.tool, "arguments": args},
    }
    timeout = TIMEOUT
    try:
        async with asyncio.timeout(timeout), _http.client(env, timeout) as client:
            response = await client.post(url, json=request, headers=headers)
    except (TimeoutError, httpx.TimeoutException):
        raise ToolError(f"{backend.tool} request timed out") from None
    except httpx.HTTPError as error:
        reason = message_of(error)
        raise ToolError(
            f"{backend.label} could not reach {shown}: {reason}. "
            f"Check the network connection (or {backend.base_env})."
        ) from None
    if not response.is_success:
        raise _refusal(backend, response.status_code, bool(key), shown, response.text)
    return parse_response(response.text)


async def execute(params: WebsearchParameters, ctx: ToolContext) -> ToolResult:
    """Search the web for ``params.query`` with this session's service."""
    provider = select_provider(ctx.session_id, ctx.env)
    backend = BACKENDS[provider]
    ctx.metadata(f'{backend.label} "{params.query}"', {"provider": provider})
    asked: dict[str, Any] = {"query": params.query}
    for name in ("numResults", "livecrawl", "type", "contextMaxCharacters"):
        value = getattr(params, name)
        if value is not None:
            asked[name] = _number(value) if isinstance(value, float) else value
    asked["provider"] = provider
    await ctx.ask("websearch", [params.query], always=["*"], metadata=asked)

    text = await search(backend, arguments(backend, params, ctx), ctx)
    return ToolResult(
        output=text or NO_RESULTS,
        title=f"{backend.label}: {params.query}",
        metadata={"provider": provider},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    from ._websearch_prompt import describe

    return {"description": describe(), "parameters": WebsearchParameters, "execute": execute}
