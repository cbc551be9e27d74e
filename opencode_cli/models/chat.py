"""``open_model(project, model)``: a model string (or the config's ``model``) made a :class:`ChatModel`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import errors
from .catalog import load_catalog

if TYPE_CHECKING:
    from ..modelref import ModelRef
    from ..project import Project
    from .base import Event, Limits, Message, ModelInfo
    from .hooks import ChatParams
    from .provider import Provider


@dataclass(frozen=True)
class ChatModel:
    """A model ready to chat: its ``provider``, ``id``, ``limits``, and :meth:`stream`."""

    provider: Provider
    info: ModelInfo

    @property
    def id(self) -> str:
        """The model's id (the part after ``provider/``)."""
        return self.info.id

    @property
    def limits(self) -> Limits:
        """The model's token limits (each ``None`` when not configured)."""
        return self.info.limits

    @property
    def ref(self) -> ModelRef:
        """The model as ``provider/id``."""
        from ..modelref import ModelRef

        return ModelRef(self.provider.name, self.id)

    async def connect(self, project: Project) -> None:
        """Get the provider ready to chat for ``project`` (:meth:`Provider.connect`)."""
        await self.provider.connect(project)

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        top_p: float | None = None,
        max_tokens: int | None = None,
        params: ChatParams | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream the reply to ``messages``, offering ``tools`` (wire tools in OpenAI's shape, passed on
        unchanged). The model's configured ``options`` go in every request; the arguments given here
        (those not ``None``) are added over them. ``params`` (what the ``chat_params`` hook saw: its
        ``options`` replace the model's) and ``headers`` (extra HTTP headers) come from the run loop."""
        options = dict(self.info.options)
        given = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
        if params is not None:
            options = dict(params.options)
            given |= {
                "temperature": params.temperature,
                "top_p": params.top_p,
                "top_k": params.top_k,
                "max_tokens": params.max_output_tokens,
            }
        options |= {key: value for key, value in given.items() if value is not None}
        if headers:
            return self.provider.chat(self.id, list(messages), list(tools), options=options, headers=headers)
        return self.provider.chat(self.id, list(messages), list(tools), options=options)


async def resolve_model(
    project: Project, model: ModelRef | str | None = None, variant: str | None = None
) -> ChatModel:
    """The chat model ``model`` names (``provider/id``, or a bare id some provider lists), else the one
    of the config's ``model`` key, not connected yet (see :meth:`ChatModel.connect`); with ``variant``,
    its options laid over the model's (:func:`~opencode_cli.models.known.with_variant`).

    Raises :class:`~opencode_cli.models.errors.ModelChoiceError` (one line) when no model is named, the
    provider or the model is unknown, or the provider is unsupported.
    """
    ref = project.generation.model(model)
    if ref is None:
        raise errors.no_model()
    catalog = await load_catalog(project)
    from .known import with_known_limits, with_variant

    provider, info = catalog.resolve(ref)
    return ChatModel(provider, with_variant(provider.name, with_known_limits(info), variant))


async def open_model(project: Project, model: ModelRef | str | None = None) -> ChatModel:
    """:func:`resolve_model`, with the provider connected (its client service started).

    Raises :class:`~opencode_cli.models.ModelError` (one line) when the model cannot be chosen (see
    :func:`resolve_model`) or the provider cannot be used (no key…).
    """
    chosen = await resolve_model(project, model)
    await chosen.connect(project)
    return chosen
