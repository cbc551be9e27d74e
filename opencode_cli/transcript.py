"""Session transcripts in OpenCode's shapes: session info, messages and their parts.

A :class:`Transcript` is the ordered messages of one session. Each :class:`Message` is a user or an
assistant turn holding parts (:class:`TextPart`, :class:`ToolCallPart`, :class:`FilePart`); ``as_dict``
gives OpenCode's JSON (``{info, parts}`` with camelCase keys and times in epoch milliseconds) and
``from_dict`` reads it back exactly. Given a :class:`~opencode_cli.store.Store`, a transcript writes every
change through, one short transaction each, and :meth:`Transcript.load` resumes it by session id.

Tool parts move ``pending`` → ``running`` → ``completed`` | ``error``; after a transition call
:meth:`Transcript.update_part` to persist the new state (the part keeps its place).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .truncate import ascending_id

if TYPE_CHECKING:
    from .modelref import ModelRef
    from .results import Attachment
    from .store import Store

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
    from .modelref import ModelRef

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

    def __post_init__(self) -> None:
        if self.updated < 0:
            self.updated = self.created

    def as_dict(self) -> dict[str, Any]:
        """``{id, parentID?, title, agent, directory, permission, time: {created, updated}}``."""
        data: dict[str, Any] = {"id": self.id}
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
        )


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


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """A part from its JSON, by ``type``; raises ``ValueError`` for a type this module does not know."""
    kind = _PART_TYPES.get(data.get("type", ""))
    if kind is None:
        raise ValueError(f"unknown part type {data.get('type')!r} in part {data.get('id')!r}")
    return kind.from_dict(data)


# -- messages ----------------------------------------------------------------------------------------


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
            error=None if user else info.get("error"),
            parts=[part_from_dict(part) for part in data.get("parts") or []],
            id=info["id"],
            created=info["time"]["created"],
            completed=info["time"].get("completed"),
            summary=bool(info.get("summary", False)) and not user,
        )


# -- transcript --------------------------------------------------------------------------------------


class Transcript:
    """The messages of one session, in order; with a ``store``, every change is written through.

    Two bounds keep what is held in memory flat however many calls a long-lived session runs, with or
    without steps: ``window``, the latest messages held in :attr:`messages` (``None``: all), and
    ``max_bytes``, the characters of parts held (tool inputs, outputs, errors and metadata, texts):
    past it the oldest finished parts are let go (never a running call, nor the newest part), and a
    message left with no part (not the last) with them (``None``: no byte bound). What is let go
    stays in the store, if there is one, and :meth:`load` reads it back within the same bounds.
    """

    def __init__(
        self,
        info: SessionInfo,
        store: Store | None = None,
        window: int | None = None,
        max_bytes: int | None = None,
    ) -> None:
        if window is not None and window < 2:
            raise ValueError("a transcript window holds at least 2 messages")
        self.info = info
        self.store = store
        self.window = window
        self.max_bytes = max_bytes
        self.messages: list[Message] = []
        self._part_ids: set[str] = set()
        self._weights: dict[str, int] = {}  # the size of each part held, by id
        self.held = 0
        """The characters of the parts held in memory now (see ``max_bytes``)."""
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        """Called with ``("message.updated", {"info"})`` and ``("message.part.updated", {"part"})`` on
        every save (the ``event`` hook's relay listens here)."""
        self.update_session()

    @classmethod
    def load(
        cls, store: Store, session_id: str, window: int | None = None, max_bytes: int | None = None
    ) -> Transcript | None:
        """The stored transcript of ``session_id`` (written through to ``store`` from now on; the latest
        messages in memory, within ``window`` and ``max_bytes``), or ``None`` when the store has no such
        session."""
        data = store.session(session_id)
        if data is None:
            return None
        transcript = cls(SessionInfo.from_dict(data), window=window, max_bytes=max_bytes)
        stored = store.messages(session_id)
        if window is not None:
            stored = stored[-window:]
        transcript.messages = [Message.from_dict(message) for message in stored]
        for message in transcript.messages:
            for part in message.parts:
                transcript._hold(part)
        transcript._trim()
        transcript.store = store
        return transcript

    def child(self, title: str, agent: str, permission: list[dict[str, str]] | None = None) -> Transcript:
        """A new session started from this one (a ``task`` subagent), kept in the same store."""
        info = SessionInfo(title, agent, self.info.directory, self.info.id, list(permission or []))
        return Transcript(info, self.store, self.window, self.max_bytes)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def as_dicts(self) -> list[dict[str, Any]]:
        """Every message as ``{"info": …, "parts": […]}``."""
        return [message.as_dict() for message in self.messages]

    def last_text(self) -> str:
        """The text of the last text part of the last assistant message (``""`` when there is none)."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                texts = [part.text for part in message.parts if isinstance(part, TextPart)]
                return texts[-1] if texts else ""
        return ""

    # -- changes -------------------------------------------------------------------------------------

    def add_user(
        self, text: str | None, agent: str, model: ModelRef | None = None, *, synthetic: bool = False
    ) -> Message:
        """Append a user message with one text part (``synthetic``: written by a tool, not a person); with
        ``text`` ``None``, no part (the caller adds its own)."""
        message = self._add(Message(self.info.id, "user", agent, model))
        if text is not None:
            self.add_part(message, TextPart(text, synthetic=synthetic))
        return message

    def add_assistant(
        self, agent: str, model: ModelRef | None = None, parent_id: str | None = None
    ) -> Message:
        """Append an (empty) assistant message answering ``parent_id``, by default the last user message."""
        if parent_id is None:
            parent_id = next((m.id for m in reversed(self.messages) if m.role == "user"), None)
        return self._add(Message(self.info.id, "assistant", agent, model, parent_id))

    def add_part(self, message: Message, part: Part) -> Part:
        """Append ``part`` to ``message`` (a part with the same id is replaced in place) and save it."""
        part.session_id, part.message_id = message.session_id, message.id
        if isinstance(part, ToolCallPart):
            for attachment in part.attachments:
                attachment.session_id, attachment.message_id = message.session_id, message.id
        index = None
        if part.id in self._part_ids:  # only a part seen before needs looking for (a long turn stays cheap)
            index = next((i for i, p in enumerate(message.parts) if p.id == part.id), None)
        self._part_ids.add(part.id)
        self._weights.setdefault(part.id, 0)
        if index is None:
            message.parts.append(part)
        else:
            message.parts[index] = part
        self.update_part(part)
        return part

    def update_part(self, part: Part) -> None:
        """Save a part again after a change (a tool part's transition); it keeps its place (in memory
        while it is within the bounds; see the class docstring)."""
        if self.store is not None:
            self.store.save_part(part.as_dict())
        for listener in list(self.listeners):
            listener("message.part.updated", {"part": part.as_dict()})
        if part.id in self._weights:
            self._hold(part)
            self._trim()

    def finish(self, message: Message, finish: str | None = "stop", error: str | None = None) -> None:
        """Mark an assistant message completed now, with its finish reason or error, and save it."""
        message.completed = max(now_ms(), message.created)
        message.finish, message.error = finish, error
        self.update_message(message)

    def update_message(self, message: Message) -> None:
        """Save a message's info again after a change (its parts are saved on their own)."""
        if self.store is not None:
            self.store.save_message(message.session_id, message.info_dict())
        for listener in list(self.listeners):
            listener("message.updated", {"info": message.info_dict()})

    def update_session(self) -> None:
        """Save the session info (after a change such as a new title)."""
        if self.store is not None:
            self.store.save_session(self.info.as_dict())

    def _add(self, message: Message) -> Message:
        self.messages.append(message)
        self.info.updated = max(now_ms(), self.info.updated)
        self.update_session()
        self.update_message(message)
        if self.window is not None and len(self.messages) > self.window:
            self._forget(len(self.messages) - self.window)
        return message

    def _forget(self, count: int) -> None:
        """Let go of the ``count`` oldest messages (the list keeps its identity: ``ctx.messages``)."""
        for old in self.messages[:count]:
            for part in old.parts:
                self._let_go(part)
        del self.messages[:count]

    def _hold(self, part: Part) -> None:
        """Count ``part`` (again, after a change) among the characters held."""
        self._part_ids.add(part.id)
        weight = part_size(part)
        self.held += weight - self._weights.get(part.id, 0)
        self._weights[part.id] = weight

    def _let_go(self, part: Part) -> None:
        self._part_ids.discard(part.id)
        self.held -= self._weights.pop(part.id, 0)

    def _trim(self) -> None:
        """Past ``max_bytes``, let go of the oldest finished parts (a running tool call stays, and so
        do the newest part and the last message), and of messages, but the last, left with none."""
        if self.max_bytes is None or self.held <= self.max_bytes:
            return
        last = self.messages[-1] if self.messages else None
        newest = last.parts[-1] if last is not None and last.parts else None
        survivors = []
        for message in self.messages:
            if self.held > self.max_bytes:
                kept = []
                for part in message.parts:
                    if self.held > self.max_bytes and not _open(part) and part is not newest:
                        self._let_go(part)
                    else:
                        kept.append(part)
                if len(kept) != len(message.parts):
                    message.parts[:] = kept
                    if not kept and message is not last:
                        continue
            survivors.append(message)
        if len(survivors) != len(self.messages):
            self.messages[:] = survivors  # the list keeps its identity (``ctx.messages``)


def _open(part: Part) -> bool:
    return isinstance(part, ToolCallPart) and part.status in ("pending", "running")


def part_size(part: Part) -> int:
    """About how many bytes ``part`` holds: the characters of its strings (tool input, output, error,
    raw text, metadata, attachments' URLs; a text part's text), counted without serialising it."""
    if isinstance(part, TextPart):
        return len(part.text) + 64
    if isinstance(part, FilePart):
        return len(part.url) + len(part.filename or "") + 64
    if not isinstance(part, ToolCallPart):
        return 64
    size = 64 + len(part.raw) + len(part.output or "") + len(part.error or "") + len(part.title or "")
    size += _size(part.input) + _size(part.metadata)
    return size + sum(len(item.url) + 64 for item in part.attachments)


def _size(value: Any) -> int:
    """The characters of the strings in a JSON-like value (walked without recursion: any depth)."""
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                size += len(key) if isinstance(key, str) else 8
                stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        else:
            size += 8
    return size
