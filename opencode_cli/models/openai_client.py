"""The ``openai`` SDK's client as a project service, and the SDK's failures as one-line ModelErrors.

The SDK is imported when a client starts (a model is called), never before. Automatic retries are off
(``max_retries=0``): a failed request fails at once with its own line, tests are deterministic, and
whether to try again is the caller's decision. The client reads nothing from ``os.environ`` that
matters: the key and the base URL are always given, and the SDK's organization and project headers
(which it would take from ``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID``) are left out.
"""

from __future__ import annotations

import http
import os
from dataclasses import dataclass, field
from typing import Any

from ..services.base import Service
from . import errors

#: Modules whose exceptions are transport failures. The SDK wraps them in ``APIConnectionError`` when a
#: request is sent, and (since 3.x) while a stream is read; older versions let them through mid-stream.
_TRANSPORT_MODULES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "anyio", "h11"})


@dataclass(frozen=True)
class ClientSettings:
    """What a client is made with; a client whose settings changed is replaced."""

    base_url: str
    api_key: str | None = field(repr=False)
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None


class ProviderClient(Service):
    """One provider's ``openai.AsyncOpenAI`` client, owned by the project (``model:<provider>``):
    made by :meth:`start`, closed by :meth:`stop`."""

    def __init__(self, provider: str, settings: ClientSettings) -> None:
        self.name = f"model:{provider}"
        self.settings = settings
        self.client: Any = None
        self.request_headers: dict[str, Any] = {}
        """Headers of every request (``Authorization`` left out when there is no key)."""

    async def start(self) -> None:
        """Import the SDK (in a thread: it takes a while) and make the client."""
        import asyncio
        import importlib

        openai = await asyncio.to_thread(importlib.import_module, "openai")
        omit = openai.Omit()
        headers: dict[str, Any] = {"OpenAI-Organization": omit, "OpenAI-Project": omit}
        headers.update(self.settings.headers)
        if self.settings.api_key is None:  # an endpoint that takes no key gets none (the SDK checks this
            self.request_headers = {"Authorization": omit}  # per request, not in its default headers)
        self.client = openai.AsyncOpenAI(
            base_url=self.settings.base_url,
            api_key=self.settings.api_key or "no-key",  # the SDK insists on one; it is not sent
            max_retries=0,
            timeout=self.settings.timeout,
            default_headers=headers,
        )

    async def stop(self) -> None:
        """Close the client's connections (idempotent)."""
        client, self.client = self.client, None
        if client is not None:
            await client.close()

    def detail(self) -> str | None:
        """The endpoint."""
        return self.settings.base_url


def translate(
    error: BaseException, provider: str, settings: ClientSettings, *, streaming: bool
) -> errors.ModelError | None:
    """The :class:`~opencode_cli.models.ModelError` for an SDK or transport failure, or ``None`` for any
    other exception (a bug: let it through). ``streaming``: the failure came while reading the stream."""
    import openai

    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        return errors.http_status(provider, status, _phrase(status), _server_message(error.body))
    if isinstance(error, openai.APITimeoutError) or (
        _is_transport(error) and "Timeout" in type(error).__name__
    ):
        if streaming:
            within = f"no data for {settings.timeout:g} s" if settings.timeout is not None else "timed out"
            return errors.broke_off(provider, within)
        return errors.no_answer(provider, settings.timeout)
    if isinstance(error, openai.APIConnectionError) or _is_transport(error):
        reason = _reason(error)
        return (
            errors.broke_off(provider, reason) if streaming else errors.unreachable(settings.base_url, reason)
        )
    if isinstance(error, openai.APIError):  # an error event inside the stream
        return errors.stream_error(provider, error.message)
    return None


def _is_transport(error: BaseException) -> bool:
    return type(error).__module__.partition(".")[0] in _TRANSPORT_MODULES


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _server_message(body: object) -> str | None:
    """The message of an error body: OpenAI's ``{"error": {"message"}}`` (the SDK passes the inner
    object), a ``message``/``detail``/``error`` string, or a text body."""
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            if isinstance(body.get(key), str) and body[key]:
                return body[key]
        return None
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return None


def _reason(error: BaseException) -> str:
    """Why a connection failed, from the innermost exception that says: ``connection refused``…"""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    for cause in reversed(chain):
        if isinstance(cause, OSError) and isinstance(cause.errno, int) and cause.errno > 0:
            return os.strerror(cause.errno).lower()
    for cause in reversed(chain):
        text = str(cause)
        if text and not _is_sdk_wrapper(cause):
            return text
    return "the connection failed"


def _is_sdk_wrapper(error: BaseException) -> bool:
    return type(error).__module__.partition(".")[0] == "openai"
