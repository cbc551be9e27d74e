"""What ``opencode mcp serve`` refuses before the SDK parses a message, and the JSON-RPC errors it replies.

A request larger than :data:`MAX_REQUEST_BYTES` is refused unread (its bytes are never parsed into
models, so a huge argument costs no memory beyond the limit); a message the SDK cannot take (not UTF-8, not
JSON, not JSON-RPC 2.0, a method that is not a string, no method, nested deeper than the JSON parser goes,
a batch) gets an error reply when it carries an id: a client never waits on silence.

Both transports apply the one rule, :func:`check_message`, to the bytes they receive (a line over stdio, a
body over HTTP), and answer with the same errors: the request's own id wherever it can be read (also from a
truncated message), ``-32700`` for what is not UTF-8 JSON, ``-32600`` for what is not a request MCP takes,
and for a batch one ``-32600`` for each request in it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import mcp_types as types
from pydantic import ValidationError

#: The largest request accepted, in bytes (a line over stdio, a body over HTTP): 10 MiB.
MAX_REQUEST_BYTES = 10 * 1024 * 1024

#: Characters of a message quoted in an error reply or a log line.
QUOTED = 200

_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


@dataclass
class Problem:
    """Why a message is refused, and the id of the request it was, if one can be told."""

    code: int
    message: str
    id: str | int | None = None
    batch: list[Problem] | None = None
    """For a JSON-RPC batch (an array, which MCP does not take): one refusal for each request in it that
    carries an id, or one with a null id when none does."""


def check_message(data: bytes) -> Problem | None:
    """``None`` if the SDK can take the message ``data`` (bytes as received); else what is wrong with it.
    Text that is not UTF-8 is refused, never read with replacement characters."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return Problem(
            types.PARSE_ERROR, f"Parse error: not UTF-8 (byte {error.start} of the message)", sniff_id(data)
        )
    return check_line(text)


def replies(problem: Problem) -> list[Problem]:
    """The error replies ``problem`` gets: one for each request of a batch, else itself."""
    return problem.batch if problem.batch is not None else [problem]


def check_line(text: str) -> Problem | None:
    """``None`` if the SDK can take the message ``text``; else what is wrong with it (its ``id`` is
    ``None`` for a notification, a response, or a request whose id cannot be read)."""
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError:
        pass
    else:
        return None
    try:
        data = json.loads(text)
    except RecursionError:
        return Problem(types.INVALID_REQUEST, "Invalid request: nested too deeply", sniff_id(text.encode()))
    except ValueError as error:
        return Problem(types.PARSE_ERROR, f"Parse error: {error}", sniff_id(text.encode()))
    if isinstance(data, list):
        return _batch(data)
    if not isinstance(data, dict):
        return Problem(types.INVALID_REQUEST, "Invalid request: not a JSON-RPC message object")
    ident = data.get("id")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or "result" in data or "error" in data:
        ident = None  # a notification or a response: nothing to reply to
    try:
        types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as error:
        errors = error.errors()
        loc, msg = (errors[0]["loc"], errors[0]["msg"]) if errors else ((), "not valid")
        where = ".".join(str(part) for part in loc[1:]) or "message"
        detail = f"{where}: {msg}"
        return Problem(types.INVALID_REQUEST, f"Invalid request: {detail}", ident)
    from ...arguments import hostile_value

    hostile = hostile_value(data)  # the SDK's parser takes no lone surrogate (JSON text is Unicode)
    if hostile is not None:
        return Problem(types.INVALID_REQUEST, f"Invalid request: {hostile}", ident)
    return Problem(types.INVALID_REQUEST, "Invalid request: nested too deeply", ident)


#: The refusal of a JSON-RPC batch.
BATCH_REFUSED = "Invalid request: JSON-RPC batches are not supported (send each message on a line of its own)"


def _batch(items: list[object]) -> Problem:
    """A batch is refused whole: each request in it is answered with an error, so no client waits."""
    replies = []
    for item in items:
        ident = item.get("id") if isinstance(item, dict) else None
        if (
            isinstance(item, dict)
            and "method" in item
            and isinstance(ident, str | int)
            and not isinstance(ident, bool)
        ):
            replies.append(Problem(types.INVALID_REQUEST, BATCH_REFUSED, ident))
    return Problem(
        types.INVALID_REQUEST, BATCH_REFUSED, None, replies or [Problem(types.INVALID_REQUEST, BATCH_REFUSED)]
    )


def too_large(head: bytes, limit: int = MAX_REQUEST_BYTES) -> Problem:
    """The problem of a request over the limit (``head``: its first bytes, where the id may be read)."""
    return Problem(
        types.INVALID_REQUEST,
        f"Request too large: over {limit} bytes (the limit of opencode mcp serve)",
        sniff_id(head),
    )


def sniff_id(head: bytes) -> str | int | None:
    """The request id written near the start of a message that cannot be parsed (``None`` if none)."""
    found = _ID.search(head[:4096])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def error_reply(problem: Problem) -> str:
    """The JSON-RPC error response for ``problem``, as one line of JSON."""
    error = types.JSONRPCError(
        jsonrpc="2.0", id=problem.id, error=types.ErrorData(code=problem.code, message=problem.message)
    )
    return error.model_dump_json(by_alias=True, exclude_unset=True)


def quoted(text: str) -> str:
    """``text`` cut to :data:`QUOTED` characters for an error message or a log line."""
    return text if len(text) <= QUOTED else f"{text[:QUOTED]}… ({len(text)} characters)"
