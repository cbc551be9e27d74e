"""What the models API speaks: chat messages, the events of a streamed reply, and what a model is.

These are plain data, the same for every provider; each provider converts them to its own wire format
(:mod:`opencode_cli.models.openai_format` for OpenAI-compatible endpoints).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call a model asked for.

    ``arguments`` is the JSON text exactly as the model streamed it, not parsed: it may be invalid, and
    the session's repair step (not the provider) decides what to do with it.
    """

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class FileContent:
    """A file a message carries for the model (an image, a PDF): ``url`` is a ``data:`` URL."""

    mime: str
    url: str
    filename: str | None = None

    @property
    def is_image(self) -> bool:
        """Whether the file is an image."""
        return self.mime.startswith("image/")

    @property
    def data(self) -> str:
        """The base64 data of a ``data:`` URL (the URL itself otherwise)."""
        head, comma, rest = self.url.partition(",")
        return rest if comma and head.startswith("data:") else self.url


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation.

    ``assistant`` messages may carry ``tool_calls`` (and then ``content`` may be ``None``); a ``tool``
    message answers one call and names it in ``tool_call_id``. ``files`` are images and PDFs a user
    message or a tool result hands the model. ``extra`` holds what a provider keeps of its own reply to
    send back unchanged (Anthropic's thinking blocks under ``"anthropic"``).
    """

    role: Role
    content: str | None = None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    tool_call_id: str | None = None
    files: list[FileContent] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"a message's role is one of {', '.join(ROLES)}, not {self.role!r}")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id of the call it answers")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant message carries tool calls")


# -- the events of a streamed reply -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """The next piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call (its arguments are still coming): for live display only.

    ``index`` is the call's position in the reply; the call itself arrives in :class:`ToolCalls`.
    """

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """Every tool call of the reply, assembled, in index order; sent once, when the stream has ended,
    and only when the model called a tool."""

    calls: list[ToolCallRequest]


@dataclass(frozen=True, slots=True)
class Finish:
    """The reply is complete: the last event of a stream.

    ``reason`` uses OpenCode's (the AI SDK's) names: ``stop``, ``tool-calls``, ``length``,
    ``content-filter`` or ``other``. ``usage`` is the token counts as the provider reported them
    (OpenAI's ``prompt_tokens``, ``completion_tokens``, ``total_tokens``…), or ``None``.
    """

    reason: str
    usage: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """What the provider needs sent back with this reply in the next request (Anthropic's thinking
    blocks, under ``"anthropic"``): it lands in the reply's :attr:`Message.extra`."""


Event = TextDelta | ToolCallStarted | ToolCalls | Finish
"""What :meth:`opencode_cli.models.ChatModel.stream` yields."""


# -- what a model is --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """A model's token limits (``[provider.NAME.models.ID] limit``); ``None`` when not known."""

    context: int | None = None
    input: int | None = None
    output: int | None = None


@dataclass(frozen=True)
class ModelInfo:
    """A model a provider offers.

    ``id`` is the name it goes by in ``provider/id``; ``api_id`` the name sent to the API (a model table's
    ``id`` key, else ``id``). ``options`` are extra fields of every request body for this model, and
    ``headers`` extra HTTP headers.
    """

    id: str
    name: str | None = None
    api_id: str | None = None
    limits: Limits = field(default_factory=Limits)
    options: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Named sets of request options (``[provider.X.models.Y.variants.NAME]``, OpenCode's ``variants``):
    ``run --variant NAME`` lays one over :attr:`options`."""
    cost: dict[str, float] = field(default_factory=dict)
    """Dollars per million tokens: ``input``, ``output``, ``cache_read``, ``cache_write`` (OpenCode's
    ``cost`` table); empty when not known."""

    @property
    def request_id(self) -> str:
        """The model name sent to the API."""
        return self.api_id or self.id
