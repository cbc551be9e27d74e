"""The Anthropic provider kind (``npm = "@ai-sdk/anthropic"``) and the built-in ``anthropic`` provider, on
the official ``anthropic`` SDK: an optional extra (``pip install 'opencode-tools[anthropic]'``), imported
only when such a provider is connected.

The key is ``[provider.anthropic.options] apiKey``, else ``ANTHROPIC_API_KEY``; ``baseURL`` as in OpenCode
(``https://api.anthropic.com/v1``). Replies are streamed; tools go in Anthropic's wire shape (the loop
renders them so: :attr:`AnthropicProvider.wire_format`); extended thinking is asked for with the model's
``options.thinking`` (``{type = "enabled", budget_tokens = 8000}``), and its blocks are sent back while
tool calls go on. ``max_tokens`` (required by the API) is the request's, else the model's
``limit.output`` (its table's or the built-in one, at most 32k, as OpenCode caps it), else
:data:`DEFAULT_MAX_TOKENS`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from ..services.base import Service
from . import errors
from .anthropic_format import AnthropicAssembler, anthropic_tools, finish_reason, to_anthropic
from .base import Event, Finish, Message, ModelInfo
from .compaction import OUTPUT_TOKEN_MAX
from .config import ProviderConfig
from .known import with_known_limits
from .provider import ConfiguredProvider, ProviderFactory, client_service

if TYPE_CHECKING:
    from ..project import Project

ANTHROPIC_NPM = "@ai-sdk/anthropic"
DEFAULT_MAX_TOKENS = 8192
#: Request fields of the Messages API the model's options may set; any other option goes in the body too.
SAMPLING = ("temperature", "top_p", "top_k", "thinking", "stop_sequences", "metadata")

ANTHROPIC = ProviderConfig(
    name="anthropic",
    title="Anthropic",
    npm=ANTHROPIC_NPM,
    base_url="https://api.anthropic.com/v1",
    env=("ANTHROPIC_API_KEY",),
    key_required=True,
)


def need_sdk(module: str, extra: str, provider: str) -> Any:
    """Import an optional SDK, or raise a one-line :class:`ModelError` naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise errors.ModelError(
            f"provider {provider} needs the {module} SDK: pip install 'opencode-tools[{extra}]'"
        ) from None


class AnthropicClient(Service):
    """One provider's ``anthropic.AsyncAnthropic`` client, owned by the project: made by :meth:`start`,
    closed by :meth:`stop`. ``settings``: base URL (without ``/v1``), key, headers, timeout."""

    def __init__(self, provider: str, settings: tuple[Any, ...]) -> None:
        self.name = f"model:{provider}"
        self.settings = settings
        self.client: Any = None

    async def start(self) -> None:
        """Import the SDK (in a thread: it takes a while) and make the client."""
        import asyncio
        import importlib

        sdk = await asyncio.to_thread(importlib.import_module, "anthropic")
        base, key, headers, timeout = self.settings
        self.client = sdk.AsyncAnthropic(
            api_key=key, base_url=base, default_headers=dict(headers), timeout=timeout, max_retries=0
        )

    async def stop(self) -> None:
        """Close the client's connections (idempotent)."""
        client, self.client = self.client, None
        if client is not None:
            await client.close()

    def detail(self) -> str | None:
        """The endpoint."""
        return self.settings[0]


class AnthropicProvider(ConfiguredProvider):
    """One provider on Anthropic's Messages API, from its :class:`ProviderConfig`."""

    wire_format = "anthropic"

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self._client: Any = None
        self._settings: tuple[Any, ...] | None = None

    async def connect(self, project: Project) -> None:
        """Check the key and SDK, and get (start, or replace when its settings changed) the provider's
        client service (``model:<name>``), which the project owns and closes."""
        config = self.config
        key = config.key(project.env)
        if key is None:
            raise errors.missing_key(self.name, config.key_env[0])
        need_sdk("anthropic", "anthropic", self.name)
        base = (config.base_url or "https://api.anthropic.com/v1").rstrip("/").removesuffix("/v1")
        settings = (base, key, tuple(config.headers.items()), config.timeout)
        service = await client_service(project, self.name, settings, AnthropicClient)
        self._client = service.client
        self._settings = settings

    async def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        options: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream a Messages reply (see :meth:`Provider.chat`)."""
        if self._client is None:
            raise errors.not_connected(self.name)
        info = self.config.models.get(model_id)
        system, wire = to_anthropic(messages)
        body = dict(options)
        known = with_known_limits(info or ModelInfo(model_id)).limits.output
        limit = min(known, OUTPUT_TOKEN_MAX) if known else None
        request: dict[str, Any] = {
            "model": info.request_id if info else model_id,
            "max_tokens": body.pop("max_tokens", None) or limit or DEFAULT_MAX_TOKENS,
            "messages": wire,
            "stream": True,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = anthropic_tools(tools)
        for key in SAMPLING:
            if key in body:
                request[key] = body.pop(key)
        sent = {**(info.headers if info else {}), **(headers or {})}
        try:
            stream = await self._client.messages.create(
                **request, extra_body=body or None, extra_headers=sent or None
            )
        except Exception as error:
            raise self._translate(error) from error
        assembler = AnthropicAssembler()
        try:
            async for event in stream:
                for item in assembler.feed(event):
                    yield item
        except Exception as error:
            raise self._translate(error) from error
        finally:
            with contextlib.suppress(Exception):
                await stream.close()
        if assembler.error is not None:
            raise errors.stream_error(self.name, assembler.error)
        if assembler.reason is None:
            raise errors.broke_off(self.name, "it ended before the model finished its reply")
        calls = assembler.calls()
        if calls is not None:
            yield calls
        thinking = assembler.thinking()
        extra = {"anthropic": {"thinking": thinking}} if thinking else {}
        yield Finish(finish_reason(assembler.reason), assembler.usage or None, extra)

    def _translate(self, error: Exception) -> Exception:
        """The SDK's errors as one-line :class:`ModelError`; anything else as it is."""
        sdk = need_sdk("anthropic", "anthropic", self.name)
        if isinstance(error, sdk.APIStatusError):
            status = error.status_code
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:
                phrase = ""
            body = error.body if isinstance(error.body, dict) else {}
            detail = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else None
            return errors.http_status(self.name, status, phrase, detail or error.message)
        if isinstance(error, sdk.APITimeoutError):
            return errors.no_answer(self.name, self.config.timeout)
        if isinstance(error, sdk.APIConnectionError):
            return errors.unreachable(
                self._settings[0] if self._settings else "", str(error.__cause__ or error)
            )
        return error


#: What the built-in plugin registers for Anthropic: the kind for ``@ai-sdk/anthropic``, and ``anthropic``.
ANTHROPIC_KIND = ProviderFactory(npm=(ANTHROPIC_NPM,), build=AnthropicProvider, builtins=(ANTHROPIC,))
