"""The Google provider kind (``npm = "@ai-sdk/google"``) and the built-in ``google`` provider, on the
official ``google-genai`` SDK: an optional extra (``pip install 'opencode-tools[google]'``), imported only
when such a provider is connected.

The key is ``[provider.google.options] apiKey``, else ``GOOGLE_GENERATIVE_AI_API_KEY``; ``baseURL`` as in
OpenCode (``https://generativelanguage.googleapis.com/v1beta``). Tools go out as the project's Gemini
declarations (:attr:`GoogleProvider.wire_format`); replies are streamed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from ..errors import message_of
from ..services.base import Service
from . import errors
from .anthropic_provider import need_sdk
from .base import Event, Finish, Message
from .config import ProviderConfig
from .google_format import GeminiAssembler, gemini_tools, to_gemini
from .provider import ConfiguredProvider, ProviderFactory, client_service

if TYPE_CHECKING:
    from ..project import Project

GOOGLE_NPM = "@ai-sdk/google"
#: Request options in our names and the SDK's ``GenerateContentConfig`` names.
OPTION_NAMES = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_output_tokens",
    "thinkingConfig": "thinking_config",
    "thinking_config": "thinking_config",
}

GOOGLE = ProviderConfig(
    name="google",
    title="Google",
    npm=GOOGLE_NPM,
    base_url="https://generativelanguage.googleapis.com/v1beta",
    env=("GOOGLE_GENERATIVE_AI_API_KEY",),
    key_required=True,
)


class GoogleClient(Service):
    """One provider's ``google.genai.Client``, owned by the project: made by :meth:`start`, closed by
    :meth:`stop`. ``settings``: base URL, API version, key, headers, timeout (s)."""

    def __init__(self, provider: str, settings: tuple[Any, ...]) -> None:
        self.name = f"model:{provider}"
        self.settings = settings
        self.client: Any = None

    async def start(self) -> None:
        """Import the SDK (in a thread: it takes a while) and make the client."""
        import asyncio
        import importlib

        genai = await asyncio.to_thread(importlib.import_module, "google.genai")
        base, version, key, headers, timeout = self.settings
        options: dict[str, Any] = {"base_url": base, "api_version": version, "headers": dict(headers)}
        if timeout is not None:
            options["timeout"] = int(timeout * 1000)
        self.client = genai.Client(api_key=key, http_options=options)

    async def stop(self) -> None:
        """Close the client's connections (idempotent)."""
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aio.aclose()
            with contextlib.suppress(Exception):
                client.close()

    def detail(self) -> str | None:
        """The endpoint."""
        return self.settings[0]


class GoogleProvider(ConfiguredProvider):
    """One provider on Google's Gemini API, from its :class:`ProviderConfig`."""

    wire_format = "gemini"

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self._service: GoogleClient | None = None

    async def connect(self, project: Project) -> None:
        """Check the key and SDK, and get (start, or replace when its settings changed) the client service."""
        config = self.config
        key = config.key(project.env)
        if key is None:
            raise errors.missing_key(self.name, config.key_env[0])
        need_sdk("google.genai", "google", self.name)
        base, _, version = (config.base_url or GOOGLE.base_url or "").rstrip("/").rpartition("/")
        settings = (base + "/", version, key, tuple(config.headers.items()), config.timeout)
        self._service = await client_service(project, self.name, settings, GoogleClient)

    async def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        options: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream a Gemini reply (see :meth:`Provider.chat`)."""
        service = self._service
        if service is None or service.client is None:
            raise errors.not_connected(self.name)
        info = self.config.models.get(model_id)
        system, contents = to_gemini(messages)
        config: dict[str, Any] = {}
        if system:
            config["system_instruction"] = system
        if tools:
            config["tools"] = gemini_tools(tools)
        for key, value in options.items():
            config[OPTION_NAMES.get(key, key)] = value
        sent = {**(info.headers if info else {}), **(headers or {})}
        if sent:
            config["http_options"] = {"headers": sent}
        model = info.request_id if info else model_id
        try:
            stream = await service.client.aio.models.generate_content_stream(
                model=model, contents=contents, config=config
            )
        except Exception as error:
            raise self._translate(error) from error
        assembler = GeminiAssembler()
        try:
            async for response in stream:
                for event in assembler.feed(response):
                    yield event
        except Exception as error:
            raise self._translate(error) from error
        if assembler.reason is None:
            raise errors.broke_off(self.name, "it ended before the model finished its reply")
        calls = assembler.calls()
        if calls is not None:
            yield calls
        extra = {"google": {"signatures": assembler.signatures}} if assembler.signatures else {}
        yield Finish(assembler.finish_reason(), assembler.usage or None, extra)

    def _translate(self, error: Exception) -> Exception:
        """The SDK's errors as one-line :class:`ModelError`; anything else as it is."""
        genai_errors = need_sdk("google.genai.errors", "google", self.name)
        if isinstance(error, genai_errors.APIError):
            status = int(getattr(error, "code", 0) or 0)
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:
                phrase = str(getattr(error, "status", "") or "")
            return errors.http_status(self.name, status, phrase, getattr(error, "message", None))
        httpx = need_sdk("httpx", "google", self.name)
        if isinstance(error, httpx.TimeoutException):
            return errors.no_answer(self.name, self.config.timeout)
        if isinstance(error, httpx.TransportError):
            return errors.unreachable(self.config.base_url or self.name, message_of(error))
        return error


#: What the built-in plugin registers for Google: the kind for ``@ai-sdk/google``, and ``google``.
GOOGLE_KIND = ProviderFactory(npm=(GOOGLE_NPM,), build=GoogleProvider, builtins=(GOOGLE,))
