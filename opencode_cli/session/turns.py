"""The transcript a session writes (OpenCode's messages and parts), and which message its calls belong to.

A session's transcript is opened from the store when the session is remembered and has been kept before,
else made new. It holds a window of the latest messages in memory (``Session.window``) and at most
``transcript.max_bytes`` characters of parts; the calls dispatched between two steps belong to one
assistant message, and a user message starts a new one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..modelref import ModelRef
from ..transcript import SessionInfo, Transcript

if TYPE_CHECKING:
    from ..project import Project
    from ..transcript import Message, Part
    from . import Session


class Turns:
    """A session's transcript and its current assistant message."""

    def __init__(self, session: Session) -> None:
        self.session = session
        project = session.project
        store = project.store if session.remember else None
        held = project.generation.transcript_bytes
        transcript = Transcript.load(store, session.id, session.window, held) if store is not None else None
        if transcript is None:
            info = SessionInfo(
                session.title,
                session.agent.name,
                str(project.directory),
                session.parent.id if session.parent is not None else None,
                [rule.as_dict() for rule in session.rules],
                id=session.id,
            )
            transcript = Transcript(info, store, session.window, held)
        self.transcript = transcript
        self.current: Message | None = None
        """The assistant message calls are recorded in now (``None``: the next call starts one)."""
        self.window_from: Message | None = None
        """The assistant message the doom-loop window starts at (see :meth:`recent_parts`)."""

    def user(self, text: str, *, synthetic: bool = False) -> Message:
        """See :meth:`Session.user <opencode_cli.session.Session.user>`."""
        self.current = None
        session = self.session
        return self.transcript.add_user(text, session.agent.name, session.model, synthetic=synthetic)

    def new_assistant(self, *, continues: bool = False) -> Message:
        """Start a new assistant message; the calls that follow belong to it. The doom-loop window starts
        over with it, unless it ``continues`` the previous one's (the steps of one run)."""
        session = self.session
        self.current = self.transcript.add_assistant(session.agent.name, session.model)
        if not continues or self.window_from is None:
            self.window_from = self.current
        return self.current

    def recent_parts(self, count: int) -> list[Part]:
        """The last ``count`` (at most) parts of the doom-loop window, oldest first: the parts of the
        assistant messages from :attr:`window_from` to the current one (a user message ends it too)."""
        found: list[Part] = []
        for message in reversed(self.transcript.messages):
            if message.role == "user":
                break
            found[:0] = message.parts[-(count - len(found)) :]
            if len(found) >= count or message is self.window_from:
                break
        return found

    def assistant(self) -> Message:
        """The assistant message calls are recorded in (a new one after a user message)."""
        current = self.current
        messages = self.transcript.messages
        if current is None or not messages or messages[-1] is not current:
            current = self.new_assistant()
        return current

    def record_agent(self, name: str) -> None:
        """Note in the session info that the session's calls now run as agent ``name``."""
        if self.transcript.info.agent != name:
            self.transcript.info.agent = name
            self.transcript.update_session()


def recorded(
    project: Project, session_id: str | None, agent: str | None = None, model: ModelRef | str | None = None
) -> tuple[str | None, ModelRef | None]:
    """The agent and model a session goes on with: ``agent`` and ``model`` when given, else those the
    stored session ``session_id`` recorded last (its agent; the model of its latest message), else
    ``None`` (the project's default agent, the configured model). A switch is recorded by the session's
    next message, which names its agent and model."""
    stored = project.store.session(session_id) if session_id and (agent is None or model is None) else None
    if stored is not None:
        if agent is None:
            agent = stored.get("agent") or None
        if model is None:
            last = project.store.last_model(session_id or "")
            if last is not None:
                model = ModelRef(last.get("providerID") or None, last["modelID"])
    return agent, ModelRef.coerce(model)
