"""Models as plugins: providers registered through ``register_providers``, opened with :func:`open_model`.

::

    model = await open_model(project, "local/qwen3")       # or None: the config's `model`
    async for event in model.stream([Message("user", "hi")], render(session.resolve(), "openai")):
        ...                                                  # TextDelta, ToolCallStarted, ToolCalls, Finish

The modules, one job each:

* ``base``: messages, stream events, what a model is (plain data);
* ``errors``: :class:`ModelError` and every line it says;
* ``config``: ``[provider.NAME]`` tables (``Generation.providers``);
* ``provider``: what a plugin registers (:class:`Provider`, :class:`ProviderFactory`);
* ``catalog``: a project's providers by name, and model strings resolved against them;
* ``chat``: :func:`open_model` and :class:`ChatModel`;
* ``openai_format``, ``openai_client``, ``openai_compatible``: the built-in provider kind for
  OpenAI-compatible endpoints, on the ``openai`` SDK (imported only when a model is called).

Importing this package imports neither the SDK nor an HTTP client nor ``asyncio``.
"""

from __future__ import annotations

from .base import (
    Event,
    Finish,
    Limits,
    Message,
    ModelInfo,
    TextDelta,
    ToolCallRequest,
    ToolCalls,
    ToolCallStarted,
)
from .catalog import Catalog, CatalogEntry, load_catalog
from .chat import ChatModel, open_model
from .config import ProviderConfig
from .errors import ModelError
from .provider import Provider, ProviderFactory, RegisterProvider

__all__ = [
    "Catalog",
    "CatalogEntry",
    "ChatModel",
    "Event",
    "Finish",
    "Limits",
    "Message",
    "ModelError",
    "ModelInfo",
    "Provider",
    "ProviderConfig",
    "ProviderFactory",
    "RegisterProvider",
    "TextDelta",
    "ToolCallRequest",
    "ToolCallStarted",
    "ToolCalls",
    "load_catalog",
    "open_model",
]
