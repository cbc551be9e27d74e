"""What a transcript is made of, in OpenCode's shapes: session info, messages and their parts.

Each :class:`Message` is a user or an assistant turn holding parts (:class:`TextPart`,
:class:`ToolCallPart`, :class:`FilePart`, :class:`CompactionPart`); ``as_dict`` gives OpenCode's JSON
(``{info, parts}`` with camelCase keys and times in epoch milliseconds) and ``from_dict`` reads it back
exactly. Tool parts move ``pending`` → ``running`` → ``completed`` | ``error``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..truncate import ascending_id

if TYPE_CHECKING:
    from ..modelref import ModelRef
    from ..results import Attachment

Role = Literal["user", "assistant"]
ToolStatus = Literal["pending", "running", "completed", "error"]


def now_ms() -> int:
    """The current time in epoch milliseconds (OpenCode's timestamps)."""
    return int(time.time() * 1000)


def new_id(prefix: str) -> str:
    """An OpenCode-style ascending id such as ``ses_…``, ``msg_…`` or ``prt_…``."""
    return ascending_id(prefix)


def _model(data: Mapping[str, Any] | None) -> ModelRef | None:
    if not data or "modelID" not in data:
        return None
    from ..modelref import ModelRef

    return ModelRef(data.get("providerID"), data["modelID"])


# -- session -----------------------------------------------------------------------------------------


@dataclass
class SessionInfo:
    """A session's info; ``parent_id`` is the session that started it (``None`` at the top level)."""

    title: str = ""
    agent: str = ""
    directory: str = ""
    parent_id: str | None = None
    permission: list[dict[str, str]] = field(default_factory=list)
    """The session's rules as ``{permission, pattern, action}`` (``Rule.as_dict()``)."""
    id: str = field(default_factory=lambda: new_id("ses"))
    created: int = field(default_factory=now_ms)
    updated: int = -1
    """Last change, in ms; left at ``-1`` it becomes ``created``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The info's other keys, kept as they came (an imported OpenCode session's ``slug``, ``version``…)."""

    def __post_init__(self) -> None:
        if self.updated < 0:
            self.updated = self.created

    def as_dict(self) -> dict[str, Any]:
        """``{id, parentID?, title, agent, directory, permission, time: {created, updated}}``."""
        data: dict[str, Any] = {**copy.deepcopy(self.extra), "id": self.id}
        if self.parent_id is not None:
            data["parentID"] = self.parent_id
        data.update(
            title=self.title,
            agent=self.agent,
            directory=self.directory,
            permission=copy.deepcopy(self.permission),
            time={"created": self.created, "updated": self.updated},
        )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionInfo:
        """The inverse of :meth:`as_dict`."""
        return cls(
            id=data["id"],
            parent_id=data.get("parentID"),
            title=data.get("title", ""),
            agent=data.get("agent", ""),
            directory=data.get("directory", ""),
            permission=copy.deepcopy(list(data.get("permission") or [])),
            created=data["time"]["created"],
            updated=data["time"]["updated"],
            extra={key: copy.deepcopy(value) for key, value in data.items() if key not in _INFO_KEYS},
        )


#: The session info keys :class:`SessionInfo` reads (the others stay in its ``extra``).
_INFO_KEYS = frozenset({"id", "parentID", "title", "agent", "directory", "permission", "time"})


# -- parts -------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class _PartBase:
    """What every part has; ``session_id`` and ``message_id`` are set by :meth:`Transcript.add_part`."""

    id: str = field(default_factory=lambda: new_id("prt"))
    session_id: str = ""
    message_id: str = ""

    def _base(self, type: str) -> dict[str, Any]:
        return {"id": self.id, "sessionID": self.session_id, "messageID": self.message_id, "type": type}


@dataclass
class TextPart(_PartBase):
    """Text from the user or the model; ``synthetic`` text was added by the host, not typed."""

    text: str
    synthetic: bool = False

    def as_dict(self) -> dict[str, Any]:
        """``{id, sessionID, messageID, type: "text", text, synthetic?}``."""
        data = self._base("text")
        data["text"] = self.text
        if self.synthetic:
            data["synthetic"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextPart:
        """The inverse of :meth:`as_dict`."""
        return cls(
            data["text"],
            bool(data.get("synthetic", False)),
            id=data["id"],
            session_id=data["sessionID"],
            message_id=data["messageID"],
        )


@dataclass
class FilePart(_PartBase):
    """A file in a message or a tool result (``url`` is usually a ``data:`` or ``file:`` URL)."""

    mime: str
    url: str
    filename: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{id, sessionID, messageID, type: "file", mime, filename?, url}``."""
        data = self._base("file")
        data["mime"] = self.mime
        if self.filename is not None:
            data["filename"] = self.filename
        data["url"] = self.url
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FilePart:
        """The inverse of :meth:`as_dict`."""
        return cls(
            data["mime"],
            data["url"],
            data.get("filename"),
            id=data["id"],
            session_id=data["sessionID"],
            message_id=data["messageID"],
        )


@dataclass
class ToolCallPart(_PartBase):
    """One tool call of an assistant message and its state (OpenCode's ``ToolPart``).

    ``status`` moves with :meth:`running`, :meth:`complete` and :meth:`fail`, which keep the fields
    each state has in OpenCode: ``raw`` while pending; ``title``/``metadata`` (optional) and ``start``
    while running; ``output``, ``title``, ``metadata``, ``attachments`` and ``start``/``end`` once
    completed; ``error``, ``metadata`` (optional) and ``start``/``end`` after an error.
    """

    call_id: str
    tool: str
    input: dict[str, Any] = field(default_factory=dict)
    status: ToolStatus = "pending"
    raw: str = ""
    title: str | None = None
    metadata: dict[str, Any] | None = None
    output: str | None = None
    error: str | None = None
    attachments: list[FilePart] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    fingerprint: str = field(default="", repr=False, compare=False)
    """What the doom-loop check compares (the name the model wrote and the canonical input); not saved:
    the window is the current step, which a stored transcript never continues."""

    def _expect_open(self) -> None:
        if self.status not in ("pending", "running"):
            raise ValueError(f"tool part {self.id} is already {self.status}")

    def _begin(self) -> int:
        now = now_ms()
        if self.start is None:
            self.start = now
        self.raw = ""
        return max(now, self.start)

    def running(self, title: str | None = None, metadata: Mapping[str, Any] | None = None) -> ToolCallPart:
        """Mark the call running (again: replace its title and metadata, as ``ctx.metadata`` does)."""
        self._expect_open()
        self._begin()
        self.status = "running"
        self.title = title
        self.metadata = None if metadata is None else dict(metadata)
        return self

    def complete(
        self,
        output: str,
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
        attachments: Iterable[Attachment | FilePart | Mapping[str, Any]] = (),
    ) -> ToolCallPart:
        """Mark the call completed with its result; attachments become file parts of this message."""
        self._expect_open()
        self.end = self._begin()
        self.status = "completed"
        self.output, self.title, self.error = output, title, None
        self.metadata = dict(metadata or {})
        self.attachments = [self._attachment(item) for item in attachments]
        return self

    def fail(self, error: str, metadata: Mapping[str, Any] | None = None) -> ToolCallPart:
        """Mark the call failed with the model-facing error text."""
        self._expect_open()
        self.end = self._begin()
        self.status = "error"
        self.error, self.title, self.output, self.attachments = error, None, None, []
        self.metadata = None if metadata is None else dict(metadata)
        return self

    def _attachment(self, item: Attachment | FilePart | Mapping[str, Any]) -> FilePart:
        if isinstance(item, Mapping):
            mime, url, filename, part_id = item["mime"], item["url"], item.get("filename"), item.get("id")
        else:
            mime, url, filename, part_id = item.mime, item.url, item.filename, item.id
        return FilePart(
            mime,
            url,
            filename,
            id=part_id or new_id("prt"),
            session_id=self.session_id,
            message_id=self.message_id,
        )

    def state(self) -> dict[str, Any]:
        """OpenCode's ``ToolState`` for the current status."""
        state: dict[str, Any] = {"status": self.status, "input": copy.deepcopy(self.input)}
        if self.status == "pending":
            state["raw"] = self.raw
            return state
        if self.status == "completed":
            state["output"] = self.output or ""
            state["title"] = self.title or ""
            state["metadata"] = copy.deepcopy(self.metadata or {})
            state["time"] = {"start": self.start, "end": self.end}
        else:
            if self.status == "running" and self.title is not None:
                state["title"] = self.title
            if self.status == "error":
                state["error"] = self.error or ""
            if self.metadata is not None:
                state["metadata"] = copy.deepcopy(self.metadata)
            state["time"] = (
                {"start": self.start} if self.status == "running" else {"start": self.start, "end": self.end}
            )
        if self.attachments:
            state["attachments"] = [attachment.as_dict() for attachment in self.attachments]
        return state

    def as_dict(self) -> dict[str, Any]:
        """``{id, sessionID, messageID, type: "tool", callID, tool, state}``."""
        data = self._base("tool")
        data.update(callID=self.call_id, tool=self.tool, state=self.state())
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCallPart:
        """The inverse of :meth:`as_dict`."""
        state = data["state"]
        times = state.get("time") or {}
        metadata = state.get("metadata")
        return cls(
            data["callID"],
            data["tool"],
            copy.deepcopy(dict(state.get("input") or {})),
            state["status"],
            raw=state.get("raw", ""),
            title=state.get("title"),
            metadata=None if metadata is None else copy.deepcopy(dict(metadata)),
            output=state.get("output"),
            error=state.get("error"),
            attachments=[FilePart.from_dict(item) for item in state.get("attachments") or []],
            start=times.get("start"),
            end=times.get("end"),
            id=data["id"],
            session_id=data["sessionID"],
            message_id=data["messageID"],
        )


@dataclass
class CompactionPart(_PartBase):
    """Marks a user message as a compaction request (OpenCode's ``compaction`` part): the assistant
    message after it is the summary the continued history starts with. ``auto``: the context filled up."""

    auto: bool = True

    def as_dict(self) -> dict[str, Any]:
        """``{id, sessionID, messageID, type: "compaction", auto}``."""
        return {**self._base("compaction"), "auto": self.auto}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompactionPart:
        """The inverse of :meth:`as_dict`."""
        return cls(
            bool(data.get("auto", True)),
            id=data["id"],
            session_id=data["sessionID"],
            message_id=data["messageID"],
        )


Part = TextPart | ToolCallPart | FilePart | CompactionPart
_PART_TYPES: dict[str, Any] = {
    "text": TextPart,
    "tool": ToolCallPart,
    "file": FilePart,
    "compaction": CompactionPart,
}


def _known(data: Mapping[str, Any]) -> bool:
    return data.get("type") in _PART_TYPES


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """A part from its JSON, by ``type``; raises ``ValueError`` for a type this module does not know."""
    kind = _PART_TYPES.get(data.get("type", ""))
    if kind is None:
        raise ValueError(f"unknown part type {data.get('type')!r} in part {data.get('id')!r}")
    return kind.from_dict(data)


# -- messages ----------------------------------------------------------------------------------------


def _error_name(error: Any) -> str | None:
    """A message's error as text: ours is its name; OpenCode's is ``{name, data: {message}}``."""
    if isinstance(error, Mapping):
        return str(error.get("name") or "UnknownError")
    return error


@dataclass
class Message:
    """A user or assistant message and its parts.

    An assistant message answers the user message ``parent_id``; ``finish`` is the model's finish reason
    (``"stop"``, ``"tool-calls"``…) and ``error`` the text of an error that ended it.
    """

    session_id: str
    role: Role
    agent: str
    model: ModelRef | None = None
    parent_id: str | None = None
    finish: str | None = None
    error: str | None = None
    parts: list[Part] = field(default_factory=list)
    id: str = field(default_factory=lambda: new_id("msg"))
    created: int = field(default_factory=now_ms)
    completed: int | None = None
    summary: bool = False
    """An assistant message that summarises the conversation before it (a compaction)."""
    tokens: dict[str, Any] | None = None
    """What an assistant message's step used: ``{input, output, reasoning, cache: {read, write}}``."""
    cost: float | None = None
    """What it cost, in dollars (0 when the model's prices are not known)."""
    provider_state: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """What the provider needs sent back with this assistant reply in the next request (its
    ``Finish.extra``: Anthropic's thinking blocks…): set by the run loop for this process's turns only,
    never stored (:meth:`as_dict` leaves it out)."""

    @property
    def text(self) -> str:
        """The text of the message's text parts, concatenated."""
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    def info_dict(self) -> dict[str, Any]:
        """The message info: ``{id, sessionID, role, time: {created, completed?}, agent, …}`` with
        ``model: {providerID, modelID}`` for a user message, and ``parentID``, flat ``providerID`` and
        ``modelID``, ``finish?`` and ``error?`` for an assistant message."""
        times: dict[str, Any] = {"created": self.created}
        if self.completed is not None:
            times["completed"] = self.completed
        data: dict[str, Any] = {"id": self.id, "sessionID": self.session_id, "role": self.role, "time": times}
        data["agent"] = self.agent
        if self.role == "user":
            if self.model is not None:
                data["model"] = self.model.as_dict()
            return data
        if self.parent_id is not None:
            data["parentID"] = self.parent_id
        if self.model is not None:
            data.update(self.model.as_dict())
        if self.finish is not None:
            data["finish"] = self.finish
        if self.error is not None:
            data["error"] = self.error
        if self.summary:
            data["summary"] = True
        if self.tokens is not None:
            data["tokens"] = copy.deepcopy(self.tokens)
            data["cost"] = self.cost or 0
        return data

    def as_dict(self) -> dict[str, Any]:
        """``{"info": …, "parts": […]}``, OpenCode's message with parts."""
        return {"info": self.info_dict(), "parts": [part.as_dict() for part in self.parts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """The inverse of :meth:`as_dict`."""
        info = data["info"]
        user = info["role"] == "user"
        return cls(
            info["sessionID"],
            info["role"],
            info.get("agent", ""),
            model=_model(info.get("model") if user else info),
            parent_id=None if user else info.get("parentID"),
            finish=None if user else info.get("finish"),
            error=None if user else _error_name(info.get("error")),
            # a kind of part this package does not make (OpenCode's step-start, reasoning…) stays in
            # the store and in exports; the model is not shown it
            parts=[
                part_from_dict(part) for part in data.get("parts") or [] if part.get("type") in _PART_TYPES
            ],
            id=info["id"],
            created=info["time"]["created"],
            completed=info["time"].get("completed"),
            summary=bool(info.get("summary", False)) and not user,
            tokens=None if user else info.get("tokens"),
            cost=None if user else info.get("cost"),
        )
