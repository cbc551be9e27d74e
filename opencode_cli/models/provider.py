"""What a plugin registers through ``register_providers``: a :class:`Provider`, or a
:class:`ProviderFactory` that builds providers from ``[provider.NAME]`` tables."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..project import Project
    from ..services.base import Service
    from .base import Event, Message, ModelInfo
    from .config import ProviderConfig

_Client = TypeVar("_Client", bound="Service")


class Provider:
    """A source of chat models, by ``name`` (the ``provider`` of ``provider/model``).

    Subclass it and implement :meth:`chat` as an async generator; override :meth:`models` when the
    provider knows its models (any other id is then refused) and :meth:`connect` when it needs to get
    something ready, such as a client held by a project service.
    """

    name: str = ""
    title: str | None = None
    """How the provider is shown (default: its name)."""
    wire_format: str = "openai"
    """The shape :meth:`chat` gets its tools in (``opencode_cli.wire.render``'s formats: ``openai``,
    ``anthropic``)."""

    def models(self) -> Mapping[str, ModelInfo]:
        """The models this provider offers, by id; empty (the default) when it takes any model id."""
        return {}

    async def connect(self, project: Project) -> None:
        """Get ready to chat for ``project``; called by :func:`~opencode_cli.models.open_model` before it
        hands out a model of this provider. Raise :class:`~opencode_cli.models.ModelError` when the
        provider cannot be used (no key…). The default does nothing."""

    def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        options: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream the model's reply to ``messages`` as :data:`~opencode_cli.models.Event` objects, the
        last one a :class:`~opencode_cli.models.Finish`.

        ``tools`` are the wire tools in OpenAI's shape (``{"type": "function", "function": {...}}``, what
        ``opencode_cli.wire.render(tools, "openai")`` returns); ``options`` are request body fields
        (``temperature``, ``top_p``, ``max_tokens``, and the model's own ``options``); ``headers`` extra
        HTTP headers of this request (the ``chat_headers`` hook's; passed only when there are some, so a
        provider that sends no headers may leave the argument out). Failures raise
        :class:`~opencode_cli.models.ModelError` with one line.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement chat()")


class ConfiguredProvider(Provider):
    """A provider made from one ``[provider.NAME]`` table (its :class:`ProviderConfig`): its name, title
    and ``models`` tables come from the config (the built-in providers of the npm kinds)."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.name = config.name
        self.title = config.title

    def models(self) -> Mapping[str, ModelInfo]:
        """The models of the provider's ``models`` tables (none: any model id is taken)."""
        return self.config.models


async def client_service(
    project: Project, provider: str, settings: Any, make: Callable[[str, Any], _Client]
) -> _Client:
    """The client service ``model:<provider>`` of ``project``: started on first use by ``make(provider,
    settings)``, shared by every model of the provider, replaced when its ``settings`` changed (a new key
    or base URL), closed with the project. A client that cannot start raises
    :class:`~opencode_cli.models.ModelError` with its one line."""
    from ..services.base import ServiceError
    from .errors import ModelError

    name = f"model:{provider}"

    def build() -> _Client:
        return make(provider, settings)

    try:
        service = await project.services.get(name, build)
        if type(service) is not make or getattr(service, "settings", None) != settings:
            await project.services.stop(name)
            service = await project.services.get(name, build)
    except ServiceError as error:
        raise ModelError(str(error)) from error
    return service


@dataclass(frozen=True)
class ProviderFactory:
    """The provider kind behind some npm packages of OpenCode's ``[provider.NAME] npm`` key.

    ``build(config)`` makes the provider of one ``[provider.NAME]`` table whose ``npm`` is one of
    ``npm``; ``builtins`` are the providers this kind knows without a table (``openai``), which a table
    of the same name extends.
    """

    npm: tuple[str, ...]
    build: Callable[[ProviderConfig], Provider]
    builtins: tuple[ProviderConfig, ...] = ()


RegisterProvider = Callable[[Provider | ProviderFactory], None]
"""The ``register`` argument of the ``register_providers`` hook."""
