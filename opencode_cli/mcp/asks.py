"""What a configured MCP server asks the client in the middle of a call: elicitation
(``elicitation/create``) and sampling (``sampling/createMessage``).

Both are answered on behalf of the session whose call is running (:class:`CallAsks`, made by the MCP tool
for each call; the connection hands a server's request to the oldest call in progress).

**Elicitation** goes, in this order, to

1. ``ctx.extra["elicit"]`` (:data:`ELICIT`): the session's elicitation callback, an async callable taking
   an :class:`Elicitation` and returning an :class:`ElicitAnswer` (a library host passes it as
   ``project.session(extra={"elicit": callback})``);
   then, in ``opencode mcp serve``, a form goes to the serving client (``ctx.relay.elicitor``, when that
   client declared elicitation);
2. else ``ctx.extra["question"]``: the question asker the ``question`` tool uses (the CLI's terminal
   prompt), through :func:`ask_with_questions`: the action first (answer, decline, cancel), then one
   question per field, with the schema's defaults as the first choice, enums as choices, booleans as
   yes/no; each question marks its default (the first action, the schema's default, an optional field's
   "leave empty"), which Enter takes on the terminal;
3. else nobody can be asked: ``decline``.

A URL-mode elicitation (``mode: "url"``) is agreed to first; only then is the URL opened (in a browser,
unless ``$OPENCODE_NO_BROWSER`` or ``$CI`` is set; it is always shown). In ``opencode mcp serve`` it is
forwarded to a serving client that declared URL elicitation. A call the server refuses with
``-32042`` (URL elicitation required) has each URL of its ``data.elicitations`` delivered the same way
(:class:`UrlElicitationRequired`); the model is told the URLs and what the user answered.

**Sampling** is answered with the session's model, after the ``mcp_sampling`` permission (default
``ask``; the pattern is the server's name) is granted with the server's name, the messages and the token
limit shown; a session without a model, or a refusal, answers the server with an error saying so.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ToolError

if TYPE_CHECKING:
    from ..context import ToolContext

#: The ``ctx.extra`` key of the session's elicitation callback.
ELICIT = "elicit"
#: The permission a sampling request asks (the pattern is the server's name).
SAMPLING_PERMISSION = "mcp_sampling"
#: The JSON-RPC error code of a refused sampling request (the MCP specification's "user rejected").
USER_REJECTED = -1


@dataclass(frozen=True)
class Elicitation:
    """One ``elicitation/create`` request of a server."""

    server: str
    """The configured server's name."""
    message: str
    mode: Literal["form", "url"] = "form"
    schema: dict[str, Any] = field(default_factory=dict)
    """The requested schema (form mode): an object of primitive properties."""
    url: str | None = None
    """Where to send the user (URL mode)."""
    elicitation_id: str | None = None


@dataclass(frozen=True)
class ElicitAnswer:
    """The user's answer: ``accept`` (with ``content`` in form mode), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


Elicit = Callable[[Elicitation], Awaitable[ElicitAnswer]]
"""The type of ``ctx.extra["elicit"]``."""

DECLINED = ElicitAnswer("decline")

#: What the model is told the user did with a URL a server sent them to.
_URL_OUTCOMES = {
    "accept": "the user agreed to open it; call the tool again once they have finished there",
    "decline": "the user declined to open it",
    "cancel": "the user dismissed it without answering",
}


class UrlElicitationRequired(ToolError):
    """A server answered a call with ``-32042``: the user is to open the pages of ``elicitations`` (URL-mode
    :class:`Elicitation` s) before it can go on. :meth:`deliver` puts them to the user through the call's
    asks, and gives the model-facing text: the server's message, then each URL and what the user said."""

    def __init__(self, message: str, elicitations: list[Elicitation]) -> None:
        super().__init__(message)
        self.message = message
        self.elicitations = elicitations

    @classmethod
    def of(cls, server: str, message: str, data: Any) -> UrlElicitationRequired:
        """From the error's ``data`` (its ``elicitations``; any that is not a URL-mode one is skipped)."""
        listed = data.get("elicitations") if isinstance(data, Mapping) else None
        found = []
        for item in listed if isinstance(listed, list) else []:
            if not isinstance(item, Mapping) or not isinstance(item.get("url"), str):
                continue
            said, ident = item.get("message"), item.get("elicitationId")
            found.append(
                Elicitation(
                    server=server,
                    message=said if isinstance(said, str) else "",
                    mode="url",
                    url=item["url"],
                    elicitation_id=ident if isinstance(ident, str) else None,
                )
            )
        return cls(message, found)

    async def deliver(self, asks: CallAsks) -> str:
        """Ask the user about each URL in turn; what the model is shown."""
        lines = [self.message]
        for request in self.elicitations:
            answer = await asks.answer(request)
            about = f" ({request.message})" if request.message else ""
            lines.append(
                f"The server sends the user to {request.url}{about}: {_URL_OUTCOMES[answer.action]}."
            )
        return "\n".join(lines)


# -- elicitation through the question prompt ----------------------------------------------------------------

ANSWER, OPEN, DECLINE, CANCEL = "Answer", "Open the URL", "Decline", "Cancel"
SKIP = "(leave empty)"
YES, NO = "Yes", "No"


def _no_browser() -> bool:
    return bool(os.environ.get("OPENCODE_NO_BROWSER") or os.environ.get("CI"))


def _open_url(url: str) -> None:
    if _no_browser():
        return
    import contextlib
    import webbrowser

    with contextlib.suppress(Exception):
        webbrowser.open(url)


def _choices(prop: Mapping[str, Any]) -> list[tuple[str, Any]] | None:
    """``(label, value)`` of an enum property (``enum`` with ``enumNames``, or ``oneOf``/``anyOf`` of
    ``const``s with titles); ``None`` for any other."""
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        values = prop["enum"]
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return [(str(label), value) for label, value in zip(labels, values, strict=True)]
    for key in ("oneOf", "anyOf"):
        branches = prop.get(key)
        if (
            isinstance(branches, list)
            and branches
            and all(isinstance(b, Mapping) and "const" in b for b in branches)
        ):
            return [(str(b.get("title") or b["const"]), b["const"]) for b in branches]
    return None


def _question(key: str, prop: Mapping[str, Any], required: bool, header: str) -> tuple[dict[str, Any], Any]:
    """The question for one field, and how to read its answer back (a function of the labels)."""
    title = str(prop.get("title") or key)
    said = str(prop.get("description") or "").strip()
    text = f"{title}: {said}" if said else title
    default = prop.get("default")
    kind = prop.get("type")
    options: list[dict[str, Any]] = []
    multiple = False
    custom = True
    values: dict[str, Any] = {}
    if kind == "array" and isinstance(prop.get("items"), Mapping) and (items := _choices(prop["items"])):
        multiple, custom = True, False
        chosen = default if isinstance(default, list) else []
        for label, value in items:
            options.append({"label": label, "description": "default" if value in chosen else ""})
            values[label] = value
    elif enum := _choices(prop):  # an empty enum offers nothing to choose: free text
        custom = False
        for label, value in enum:
            options.append({"label": label, "description": "default" if value == default else ""})
            values[label] = value
    elif kind == "boolean":
        custom = False
        for label, value in ((YES, True), (NO, False)):
            options.append({"label": label, "description": "default" if value == default else ""})
            values[label] = value
    elif default is not None:
        options.append({"label": str(default), "description": "default"})
        values[str(default)] = default
    if not required and not multiple:
        options.append({"label": SKIP, "description": "leave this field out"})
    question = {
        "header": header,
        "question": text,
        "options": options,
        "multiple": multiple,
        "custom": custom,
        # what Enter takes on the terminal: the schema's default, else (an optional field) nothing
        "default": [o["label"] for o in options if o["description"] == "default"]
        or ([SKIP] if not required and not multiple else []),
    }
    return question, values


def _value(prop: Mapping[str, Any], values: Mapping[str, Any], answer: list[str]) -> tuple[Any, str | None]:
    """The field's value from the chosen labels (or the typed text), or why it is not one."""
    if prop.get("type") == "array":
        return [values[label] for label in answer if label in values], None
    text = answer[0] if answer else ""
    if text in values:
        return values[text], None
    kind = prop.get("type")
    if kind == "integer":
        try:
            return int(text), None
        except ValueError:
            return None, f"{text!r} is not a whole number"
    if kind == "number":
        try:
            return float(text) if any(c in text for c in ".eE") else int(text), None
        except ValueError:
            return None, f"{text!r} is not a number"
    return text, None


async def ask_with_questions(
    ask: Callable[[list[dict[str, Any]]], Awaitable[list[list[str]] | None]],
    request: Elicitation,
    *,
    open_url: Callable[[str], None] = _open_url,
    note: Callable[[str], None] | None = None,
) -> ElicitAnswer:
    """Answer ``request`` through a question asker (``ctx.extra["question"]``): the action, then each
    field. A dismissed question (``None``) cancels; an asker that cannot ask (it raises) declines."""
    from ..errors import ToolError

    header = f"MCP server {request.server}"
    first = OPEN if request.mode == "url" else ANSWER
    shown = f"{request.message}\n{request.url}" if request.mode == "url" and request.url else request.message
    action = {
        "header": header,
        "question": shown,
        "options": [
            {
                "label": first,
                "description": "open it in a browser" if request.mode == "url" else "fill in the form",
            },
            {"label": DECLINE, "description": "say no"},
            {"label": CANCEL, "description": "dismiss without answering"},
        ],
        "custom": False,
        "default": [first],
    }
    try:
        answers = await ask([action])
    except ToolError:
        return DECLINED  # nobody to ask
    if answers is None or not answers or not answers[0] or answers[0][0] == CANCEL:
        return ElicitAnswer("cancel")
    if answers[0][0] == DECLINE:
        return DECLINED
    if request.mode == "url":
        if request.url:
            open_url(request.url)
        return ElicitAnswer("accept")
    schema = request.schema or {}
    listed_properties = schema.get("properties")
    properties: Mapping[Any, Any] = listed_properties if isinstance(listed_properties, Mapping) else {}
    listed = schema.get("required")
    required = {key for key in listed if isinstance(key, str)} if isinstance(listed, list) else set()
    content: dict[str, Any] = {}
    count = len(properties)
    for index, (key, prop) in enumerate(properties.items(), 1):
        key, prop = str(key), prop if isinstance(prop, Mapping) else {}
        position = f"{header} ({index}/{count})" if count > 1 else header
        question, values = _question(key, prop, key in required, position)
        while True:
            try:
                got = await ask([question])
            except ToolError:
                return ElicitAnswer("cancel")  # the scripted answers ran out half way
            if got is None:
                return ElicitAnswer("cancel")
            answer = got[0] if got else []
            if answer == [SKIP] or (not answer and key not in required and not question["multiple"]):
                break
            value, problem = _value(prop, values, answer)
            if problem is None:
                content[key] = value
                break
            if note is not None:
                note(problem)
    return ElicitAnswer("accept", content)


# -- the asks of one call ---------------------------------------------------------------------------------


class CallAsks:
    """Who answers a server's requests during one call of one of its tools: the call's context (its
    session's callbacks, permissions and model)."""

    def __init__(self, server: str, ctx: ToolContext) -> None:
        self.server = server
        self.ctx = ctx
        # a host serving this call onwards (opencode mcp serve) can put a form to its own client: the
        # elicitor is bound here, in the call's context, and awaited from the connection's task
        elicitor = ctx.relay.elicitor if ctx.relay is not None else None
        self._forward = elicitor() if elicitor is not None else None
        # the server's requests are answered in the connection's task: the permission ask is made in
        # the call's context, so a host's prompt finds the call it belongs to (mcp serve's client)
        self._context = contextvars.copy_context()

    async def elicit(self, params: Any) -> Any:
        """Answer an ``elicitation/create`` (the SDK's params): an ``ElicitResult``."""
        from mcp.types import ElicitResult

        mode = getattr(params, "mode", None) or "form"
        request = Elicitation(
            server=self.server,
            message=str(getattr(params, "message", "") or ""),
            mode="url" if mode == "url" else "form",
            schema=dict(getattr(params, "requested_schema", None) or {}),
            url=getattr(params, "url", None),
            elicitation_id=getattr(params, "elicitation_id", None),
        )
        answer = await self.answer(request)
        content = answer.content if answer.action == "accept" and request.mode == "form" else None
        return ElicitResult(action=answer.action, content=content)

    async def answer(self, request: Elicitation) -> ElicitAnswer:
        """The session's answer to ``request`` (see the module docstring for who is asked)."""
        extra = self.ctx.extra
        callback = extra.get(ELICIT)
        if callback is not None:
            return await callback(request)
        if self._forward is not None and self._forward.takes(request.mode):
            result = await self._forward(request)
            if result is None:
                return DECLINED
            return ElicitAnswer(result.action, result.content if request.mode == "form" else None)
        asker = extra.get("question")
        if asker is not None:
            import sys

            def note(text: str) -> None:
                sys.stderr.write(f"{text}\n")
                sys.stderr.flush()

            return await ask_with_questions(asker, request, note=note)
        return DECLINED

    async def sample(self, params: Any) -> Any:
        """Answer a ``sampling/createMessage`` with the session's model, once the user allows it: a
        ``CreateMessageResult``, or an ``ErrorData`` saying why not."""
        from mcp.types import INVALID_REQUEST, ErrorData

        from ..errors import PermissionFailure

        ctx = self.ctx
        model = ctx.model or (ctx.session.model if ctx.session is not None else None)
        if model is None or ctx.project is None:
            return ErrorData(
                code=INVALID_REQUEST,
                message=f'Sampling refused: the session calling "{self.server}" has no model to answer with',
            )
        messages = [_text_of(message) for message in params.messages]
        summary = sampling_summary(self.server, params, messages)
        try:
            await self._in_call(
                ctx.ask(
                    SAMPLING_PERMISSION,
                    [self.server],
                    always=[self.server],
                    metadata={
                        "server": self.server,
                        "messages": [{"role": role, "text": text} for role, text in messages],
                        "systemPrompt": params.system_prompt,
                        "maxTokens": params.max_tokens,
                        "summary": summary,
                    },
                )
            )
        except PermissionFailure:
            return ErrorData(code=USER_REJECTED, message="Sampling refused: the user did not allow it")
        return await self._complete(model, params, messages)

    def _in_call(self, awaitable: Any) -> Any:
        """``awaitable`` run as a task of its own in the call's context (awaited by the caller)."""
        return asyncio.get_running_loop().create_task(awaitable, context=self._context)

    async def _complete(self, model_ref: Any, params: Any, messages: list[tuple[str, str]]) -> Any:
        from mcp.types import INTERNAL_ERROR, CreateMessageResult, ErrorData, TextContent

        from ..models import Finish, Message, TextDelta, open_model

        assert self.ctx.project is not None
        try:
            model = await open_model(self.ctx.project, model_ref)
            conversation = [Message("system", params.system_prompt)] if params.system_prompt else []
            conversation += [
                Message("assistant" if role == "assistant" else "user", text) for role, text in messages
            ]
            text, reason = "", "stop"
            async for event in model.stream(
                conversation, temperature=params.temperature, max_tokens=params.max_tokens
            ):
                if isinstance(event, TextDelta):
                    text += event.text
                elif isinstance(event, Finish):
                    reason = event.reason
        except Exception as error:
            return ErrorData(code=INTERNAL_ERROR, message=f"Sampling failed: {error}")
        stop = "maxTokens" if reason == "length" else "endTurn"
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=text),
            model=str(model.ref),
            stop_reason=stop,
        )


def _text_of(message: Any) -> tuple[str, str]:
    """A sampling message as ``(role, text)``: its text parts (other kinds named in brackets)."""
    content = message.content if isinstance(message.content, list) else [message.content]
    pieces = []
    for item in content:
        kind = getattr(item, "type", None)
        pieces.append(str(getattr(item, "text", "")) if kind == "text" else f"[{kind} content]")
    return str(message.role), "\n".join(pieces)


def sampling_summary(server: str, params: Any, messages: list[tuple[str, str]]) -> str:
    """What the user is shown before allowing a sampling request: the server, the messages, the limit."""
    lines = [f'MCP server "{server}" asks the model to answer (at most {params.max_tokens} tokens):']
    if params.system_prompt:
        lines.append(f"  system: {params.system_prompt}")
    lines += [f"  {role}: {text}" for role, text in messages]
    return "\n".join(lines)
