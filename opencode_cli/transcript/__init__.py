"""Session transcripts: the ordered messages of one session, held in a window and written through.

A :class:`Transcript` holds the latest messages of a session in memory (a window of messages and a
budget of characters); given a :class:`~opencode_cli.store.Store`, it writes every change through, one
short transaction each, and :meth:`Transcript.load` resumes it by session id. After a tool part's
transition, :meth:`Transcript.update_part` persists the new state (the part keeps its place). What a
transcript holds, in OpenCode's shapes, is :mod:`.shapes` (its names are importable from here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .shapes import (
    CompactionPart,
    FilePart,
    Message,
    Part,
    Role,
    SessionInfo,
    TextPart,
    ToolCallPart,
    ToolStatus,
    new_id,
    now_ms,
    part_from_dict,
)

if TYPE_CHECKING:
    from ..modelref import ModelRef
    from ..store import Store

__all__ = [
    "CompactionPart",
    "FilePart",
    "Message",
    "Part",
    "Role",
    "SessionInfo",
    "TextPart",
    "ToolCallPart",
    "ToolStatus",
    "Transcript",
    "new_id",
    "now_ms",
    "part_from_dict",
    "part_size",
]


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
        self._weights: dict[str, int] = {}  # the size of each part held, by id (0: not counted yet)
        self.held = 0
        """The characters of the parts held in memory now (see ``max_bytes``)."""
        self.partial = False
        """Whether anything of the session is no longer (or was never) held in memory: a message or part
        let go by the bounds, or a stored session loaded only in part. :meth:`since_summary` then reads
        the store."""
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
        if window is not None and len(stored) > window:
            stored = stored[-window:]
            transcript.partial = True
        transcript.messages = [Message.from_dict(message) for message in stored]
        for message in transcript.messages:
            for part in message.parts:
                transcript._hold(part)
        transcript._trim()
        transcript.store = store
        return transcript

    def since_summary(self) -> list[Message]:
        """The messages of the session from its last completed compaction on (that compaction's request and
        its summary first), or all of them when it was never compacted: what a model is sent.

        When part of the session is not held in memory (:attr:`partial`), they are read from the store,
        so a summary that left the window, or a tool output let go by the byte bound, is still there;
        a message still held keeps what only memory has (a provider's state for the next request)."""
        held = _from_last_summary(self.messages)
        if held is not None or not self.partial or self.store is None:
            return held if held is not None else list(self.messages)
        start = self.store.last_summary(self.info.id)
        stored = [Message.from_dict(data) for data in self.store.messages(self.info.id, start)]
        if start and _from_last_summary(stored) is None:  # not a compaction's answer after all: all of it
            stored = [Message.from_dict(data) for data in self.store.messages(self.info.id)]
        by_id = {message.id: message for message in self.messages}
        for message in stored:
            kept = by_id.get(message.id)
            if kept is not None:  # what only memory has: the state the run loop kept (never stored)
                message.provider_state = kept.provider_state
        return _from_last_summary(stored) or stored

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
        if part.id in self._weights:  # only a part seen before needs looking for (a long turn stays cheap)
            index = next((i for i, p in enumerate(message.parts) if p.id == part.id), None)
        else:
            self._weights[part.id] = 0
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
        if self.listeners:
            for listener in list(self.listeners):
                listener("message.part.updated", {"part": part.as_dict()})
        if part.id in self._weights:
            self._hold(part)
            if self.max_bytes is not None and self.held > self.max_bytes:
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
        self.partial = True

    def _hold(self, part: Part) -> None:
        """Count ``part`` (again, after a change) among the characters held."""
        weights = self._weights
        weight = part_size(part)
        self.held += weight - weights.get(part.id, 0)
        weights[part.id] = weight

    def _let_go(self, part: Part) -> None:
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
                    self.partial = True
                    if not kept and message is not last:
                        continue
            survivors.append(message)
        if len(survivors) != len(self.messages):
            self.messages[:] = survivors  # the list keeps its identity (``ctx.messages``)


def _from_last_summary(messages: list[Message]) -> list[Message] | None:
    """``messages`` from the last completed compaction's request on, or ``None`` when none is there."""
    for index in range(len(messages) - 1, 0, -1):
        answer, request = messages[index], messages[index - 1]
        if answer.summary and answer.completed and any(isinstance(p, CompactionPart) for p in request.parts):
            return messages[index - 1 :]
    return None


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
    size += _size(part.input)
    if part.metadata:
        size += _size(part.metadata)
    if part.attachments:
        size += sum(len(item.url) + 64 for item in part.attachments)
    return size


#: The types of a JSON scalar other than text, exactly (each counts as 8 characters).
_SCALARS = frozenset({int, float, bool, type(None)})


def _size(value: Any) -> int:
    """The characters of the strings in a JSON-like value (walked without recursion: any depth). A text
    or a scalar inside an object or a list is counted where it is met; only the containers wait their
    turn on the stack."""
    if type(value) is dict:  # the common case, a flat object, without the walk
        size = 0
        for key, item in value.items():
            kind = type(item)
            if type(key) is not str or (kind is not str and kind not in _SCALARS):
                break
            size += len(key) + (len(item) if kind is str else 8)
        else:
            return size
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        inners: Iterable[Any]
        if isinstance(item, Mapping):
            for key in item:
                size += len(key) if isinstance(key, str) else 8
            inners = item.values()
        elif isinstance(item, list | tuple):
            inners = item
        else:
            size += len(item) if isinstance(item, str) else 8
            continue
        for inner in inners:
            kind = type(inner)
            if kind is str:
                size += len(inner)
            elif kind in _SCALARS:
                size += 8
            else:
                stack.append(inner)
    return size
