"""The built-in provider kind: any OpenAI-compatible chat-completions endpoint, on the ``openai`` SDK.

It serves ``[provider.NAME]`` tables whose ``npm`` is ``@ai-sdk/openai-compatible`` (the default) or
``@ai-sdk/openai``, and brings the built-in ``openai`` provider (``https://api.openai.com/v1``, key in
``OPENAI_API_KEY``). Replies are always streamed; the request's ``max_tokens`` is sent as
``max_completion_tokens`` to ``@ai-sdk/openai`` providers (OpenAI's current name), as ``max_tokens``
to the others.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import errors
from .base import Event, Finish, Message
from .config import ProviderConfig
from .openai_client import ClientSettings, ProviderClient, translate
from .openai_format import StreamAssembler, finish_reason, to_openai
from .provider import ConfiguredProvider, ProviderFactory, client_service

if TYPE_CHECKING:
    from ..project import Project

OPENAI_NPM = "@ai-sdk/openai"
COMPATIBLE_NPM = "@ai-sdk/openai-compatible"

#: The built-in ``openai`` provider; a ``[provider.openai]`` table is laid over it.
OPENAI = ProviderConfig(
    name="openai",
    title="OpenAI",
    npm=OPENAI_NPM,
    base_url="https://api.openai.com/v1",
    env=("OPENAI_API_KEY",),
    key_required=True,
)


class OpenAICompatible(ConfiguredProvider):
    """One provider on an OpenAI-compatible endpoint, from its :class:`ProviderConfig`.

    :meth:`connect` checks the key and gets the project's client service (``model:<name>``), replacing
    it when the settings changed (a reloaded config); :meth:`chat` streams on that client.
    """

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self._service: ProviderClient | None = None

    def settings(self, env: Mapping[str, str]) -> ClientSettings:
        """The client settings, with the key from ``env``; :class:`ModelError` when one is missing."""
        config = self.config
        if not config.base_url:
            raise errors.no_base_url(self.name)
        key = config.key(env)
        if key is None and config.key_required:
            raise errors.missing_key(self.name, config.key_env[0])
        return ClientSettings(config.base_url, key, tuple(config.headers.items()), config.timeout)

    async def connect(self, project: Project) -> None:
        """Get (start, or replace when its settings changed) the provider's client service."""
        self._service = await client_service(project, self.name, self.settings(project.env), ProviderClient)

    async def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        options: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream a chat completion (see :meth:`Provider.chat`)."""
        service = self._service
        if service is None or service.client is None:
            raise errors.not_connected(self.name)
        settings = service.settings
        info = self.config.models.get(model_id)
        request: dict[str, Any] = {
            "model": info.request_id if info else model_id,
            "messages": to_openai(messages),
        }
        if tools:
            request["tools"] = list(tools)
        request["stream"] = True
        if self.config.include_usage is not False:
            request["stream_options"] = {"include_usage": True}
        body = dict(options)
        if "max_tokens" in body and self.config.npm == OPENAI_NPM:
            body["max_completion_tokens"] = body.pop("max_tokens")
        sent = {**service.request_headers, **(info.headers if info else {}), **(headers or {})}
        try:
            stream = await service.client.chat.completions.create(
                **request, extra_body=body or None, extra_headers=sent or None
            )
        except Exception as error:
            translated = translate(error, self.name, settings, streaming=False)
            if translated is None:
                raise
            raise translated from error
        assembler = StreamAssembler()
        try:
            async for chunk in stream:
                for event in assembler.feed(chunk):
                    yield event
        except Exception as error:
            translated = translate(error, self.name, settings, streaming=True)
            if translated is None:
                raise
            raise translated from error
        finally:
            with contextlib.suppress(Exception):
                await stream.close()
        if assembler.reason is None:
            raise errors.broke_off(self.name, "it ended before the model finished its reply")
        calls = assembler.calls()
        if calls is not None:
            yield calls
        yield Finish(finish_reason(assembler.reason), assembler.usage)


#: What the built-in plugin registers: the provider kind for both packages, and ``openai``.
OPENAI_COMPATIBLE = ProviderFactory(
    npm=(COMPATIBLE_NPM, OPENAI_NPM), build=OpenAICompatible, builtins=(OPENAI,)
)
