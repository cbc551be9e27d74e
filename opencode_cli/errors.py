"""Errors that carry the text a model (or a shell user) is shown.

Every exception here has a ``str()`` that is exactly the model-facing message, so the session layer can
hand it to the model verbatim, and the CLI can print it and pick an exit code from its type.
"""

from __future__ import annotations

import json
from typing import Any


class OpencodeError(Exception):
    """Base class of every error this package raises on purpose."""


class ToolError(OpencodeError):
    """A tool failed; the message is what the model sees (no prefix is added)."""


#: What the model is shown for a call that was interrupted (core spec §6.3).
INTERRUPTED = "[Tool execution was interrupted]"


class AbortedError(ToolError):
    """The call was aborted through ``ctx.abort``; ``detail`` (a line after the interrupted text) says
    what the tool left behind, e.g. that no file was changed."""

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(INTERRUPTED if detail is None else f"{INTERRUPTED}\n{detail}")


class InvalidArgumentsError(ToolError):
    """The arguments of a call do not satisfy the tool's schema."""

    TEMPLATE = (
        "The {tool} tool was called with invalid arguments: {detail}.\n"
        "Please rewrite the input so it satisfies the expected schema."
    )

    def __init__(self, tool: str, detail: str) -> None:
        self.tool = tool
        self.detail = detail
        super().__init__(self.TEMPLATE.format(tool=tool, detail=detail))


class PermissionFailure(ToolError):
    """Base of the three ways a permission ask can fail."""

    permission: str | None = None
    """The permission whose ask failed (``bash``, ``doom_loop``…), once the permission service raised it."""


class DeniedError(PermissionFailure):
    """A ``deny`` rule matched the request."""

    def __init__(self, rules: list[dict[str, Any]]) -> None:
        self.rules = rules
        super().__init__(
            "The user has specified a rule which prevents you from using this specific tool call. "
            f"Here are some of the relevant rules {json.dumps(rules, separators=(',', ':'))}"
        )


class RejectedError(PermissionFailure):
    """The user answered ``reject`` without feedback (or nobody could be asked)."""

    MESSAGE = "The user rejected permission to use this specific tool call."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.MESSAGE)


class QuestionDismissedError(ToolError):
    """The user dismissed the question(s) instead of answering (the ``question`` tool, ``plan_exit``); like
    a rejection without feedback, it ends the run loop."""

    MESSAGE = "The user dismissed this question"

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class CorrectedError(PermissionFailure):
    """The user rejected the request and told the model what to do instead."""

    def __init__(self, feedback: str) -> None:
        self.feedback = feedback
        super().__init__(
            "The user rejected permission to use this specific tool call with the following feedback: "
            f"{feedback}"
        )


class NotFoundError(OpencodeError):
    """A reply named a permission request that is not pending."""


class ConfigError(OpencodeError):
    """A configuration file or environment variable cannot be used; the message names where."""


class UnknownToolError(OpencodeError):
    """A tool id that no source provides."""

    def __init__(self, tool_id: str, suggestions: list[str], note: str | None = None) -> None:
        self.tool_id = tool_id
        self.suggestions = suggestions
        self.note = note
        """Why it may be missing (a disabled plugin), when that is known."""
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"No tool named '{tool_id}'.{hint}" + (f" {note}" if note else ""))


class UnavailableToolError(UnknownToolError):
    """A tool id that is not a tool because the source it would come from could not give it (an MCP
    server that failed to start): the message says what happened to that source."""

    def __init__(self, tool_id: str, why: str) -> None:
        self.tool_id = tool_id
        self.suggestions = []
        self.note = why
        OpencodeError.__init__(self, why)


#: The longest error text a failed call's part keeps (an error quoting a huge argument is cut to this).
MAX_ERROR_CHARS = 4000


def error_text(error: Exception) -> str:
    """The model-facing text of a failed call: a tool's own error (an :class:`OpencodeError`) as it is; any
    other exception, a bug in the tool, as one line naming its type (the traceback on stderr when
    ``OPENCODE_DEBUG`` is set). A text longer than :data:`MAX_ERROR_CHARS` (an error quoting a huge
    argument) is cut in its middle, so its start and its end (where the reason usually stands) are kept."""
    text = _whole_error_text(error)
    if len(text) <= MAX_ERROR_CHARS:
        return text
    half = MAX_ERROR_CHARS // 2
    return f"{text[:half]}… (cut: {len(text)} characters) …{text[-half:]}"


def _whole_error_text(error: Exception) -> str:
    import os

    if isinstance(error, OpencodeError):
        return str(error) or type(error).__name__
    if os.environ.get("OPENCODE_DEBUG"):
        import traceback

        traceback.print_exception(error)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    detail = lines[0] if lines else ""
    if isinstance(error, OSError | ValueError) and detail:
        return detail  # the tool's own complaint about a path or a value ("embedded null byte")
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def message_of(error: BaseException) -> str:
    """What a report says of ``error``: its message, else its type's name (an exception group: its
    errors', joined with ``; ``)."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(message_of(inner) for inner in error.exceptions)
    return str(error) or type(error).__name__
