"""The values a tool call passes through on its way: the call as a model emits it (:class:`ToolCall`), a
tool as a request carries it (:class:`WireTool`), the outcome of one call (:class:`ToolPart`,
:class:`Outcome`), a human's answer to a permission request (:class:`Decision`) and what the model is
told when the doom-loop ask finds nobody to ask.

They live apart from :mod:`opencode_cli.session` so that what renders them for the wire
(:mod:`opencode_cli.wire`) and the run loop (:mod:`opencode_cli.models.loop`) need not import the session;
``from opencode_cli.session import ToolCall`` (and the others) keeps working.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from .loops import is_cancellation

if TYPE_CHECKING:
    from .permission import Reply
    from .permission import Request as PermissionRequest
    from .results import Attachment


#: Identical consecutive calls of one tool that trigger the ``doom_loop`` ask.
DOOM_LOOP_THRESHOLD = 3
#: What the model is told when the ``doom_loop`` ask is refused because the session has nobody to ask.
DOOM_LOOP_REFUSED = (
    "This call was refused: it is the third identical {tool} call in a row (the doom_loop check), and there "
    "was nobody to ask whether to go on. Do not repeat it; try something else."
)


@dataclass
class Decision:
    """A human's answer to a permission request."""

    reply: Reply
    feedback: str | None = None


Prompt = Callable[["PermissionRequest"], Awaitable[Decision]]


@dataclass
class WireTool:
    """One tool as a request carries it: name, description, the provider-shaped JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None = None
    """``False`` for the OpenAI family (OpenCode sends ``strict: false``), ``True`` for openai-strict."""
    normalized: dict[str, Any] = field(default_factory=dict, repr=False)
    """The schema before the provider profile (compared by :func:`opencode_cli.schema.describe_changes`)."""

    def copy(self) -> WireTool:
        """A copy of its own (its schemas too): what one host changes, another never sees."""
        return WireTool(
            self.name, self.description, _copied(self.parameters), self.strict, _copied(self.normalized)
        )


def _copied(value: Any) -> Any:
    """A copy of a JSON value (dicts and lists copied, the rest shared: it is immutable)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


@dataclass
class ToolCall:
    """A tool call as a model emits it: a name and the arguments (JSON text, or an already parsed object)."""

    name: str
    arguments: str | dict[str, Any] | None = None
    id: str | None = None


class Outcome(StrEnum):
    """How a dispatched call ended, for a host to act on without reading the error text.

    ``completed``: the tool ran and returned. ``invalid_arguments``: the call could not run as written (its
    arguments did not fit the schema, were not JSON, or it named a tool the model does not have: rerouted
    to ``invalid``, whose output says why). ``rejected``: a person (or nobody, when nobody could be asked)
    refused a permission, with or without feedback, the ``doom_loop`` ask included. ``denied``: a ``deny``
    rule refused it. ``aborted``: the call was interrupted. ``failed``: the tool ran and failed.
    """

    COMPLETED = "completed"
    INVALID_ARGUMENTS = "invalid_arguments"
    REJECTED = "rejected"
    DENIED = "denied"
    FAILED = "failed"
    ABORTED = "aborted"

    @classmethod
    def of(cls, error: BaseException) -> Outcome:
        """The outcome a call that raised ``error`` had."""
        from .errors import AbortedError, DeniedError, InvalidArgumentsError, PermissionFailure

        if isinstance(error, InvalidArgumentsError):
            return cls.INVALID_ARGUMENTS
        if isinstance(error, DeniedError):
            return cls.DENIED
        if isinstance(error, PermissionFailure):
            return cls.REJECTED
        if isinstance(error, AbortedError | KeyboardInterrupt) or is_cancellation(error):
            return cls.ABORTED
        return cls.FAILED


@dataclass
class ToolPart:
    """The outcome of one call: what the model sees next (``text``) and the details."""

    call_id: str
    tool: str
    input: dict[str, Any]
    status: str  # "completed" or "error"
    output: str = ""
    error: str | None = None
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)
    requested: str = ""
    """The name the model used (differs from ``tool`` after a repair)."""
    outcome: Outcome = Outcome.FAILED
    """How the call ended (:class:`Outcome`): the one field a host reads to tell a failure's kind."""

    @property
    def text(self) -> str:
        """What the model is shown for this part (the output, or the error text)."""
        return self.output if self.status == "completed" else (self.error or "")

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``opencode tools call --json``."""
        return {
            "callID": self.call_id,
            "requested": self.requested,
            "tool": self.tool,
            "input": self.input,
            "status": self.status,
            "outcome": str(self.outcome),
            "title": self.title,
            "output": self.output if self.status == "completed" else None,
            "error": self.error,
            "metadata": self.metadata,
            "attachments": [attachment.as_dict() for attachment in self.attachments],
        }
