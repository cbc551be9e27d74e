"""Helpers shared by the tool tests: a recording permission prompt, a tool harness and a question asker.

Import them as ``from _harness import Harness, Recorder`` (pytest puts this directory on ``sys.path``, as
for ``_local_http``). The fixtures built on them (``project``, ``root``, ``outer``, ``server``) are in
this directory's ``conftest.py``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest

from opencode_cli import Project
from opencode_cli.context import PermissionRequest, ToolContext
from opencode_cli.errors import ToolError
from opencode_cli.permission import Rule
from opencode_cli.session import Decision, Session


class Recorder:
    """A host prompt that records every request reaching the human and answers with ``reply``."""

    def __init__(self, reply: str = "once") -> None:
        self.reply = reply
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        return Decision(self.reply)  # type: ignore[arg-type]

    def asked(self, permission: str) -> list[PermissionRequest]:
        return [r for r in self.requests if r.permission == permission]


class _Session(Session):
    """A real session whose call contexts take the harness's changes for the call it runs."""

    changes: dict[str, Any]

    def context(self, *args: Any, **kwargs: Any) -> ToolContext:
        ctx = super().context(*args, **kwargs)
        for key, value in getattr(self, "changes", {}).items():
            setattr(ctx, key, value)
        return ctx


class Harness:
    """Runs the tool ``tool`` through a real :class:`~opencode_cli.Session` of the project (its hooks,
    its worker threads, its transcript), whose rules make *every* ask reach the harness's prompt (even
    ones the agent's rules would allow), which records it and answers.

    Options:

    - ``env``: ``False`` leaves the context's default environment (the project's); ``True`` passes the
      project's environment; a mapping passes the project's environment with the mapping merged in.
    - ``reject``: ``True`` rejects every ask; a set rejects the asks for those permissions (the
      ``reject`` attribute can be changed between runs). The ask is recorded first either way.
    - ``timed``: record live metadata updates as ``(time.monotonic(), copy of metadata)`` rather than
      ``(title, metadata)``.

    ``run(args, **changes)`` overrides :class:`ToolContext` fields for one run (``abort`` is the call's
    abort signal; ``session_id`` runs it in the session of that id).

    ``during_ask``, when set, is called with each request as it is asked (and awaited if it returns an
    awaitable), before the harness answers.
    """

    def __init__(
        self,
        project: Project,
        tool: str,
        *,
        env: bool | Mapping[str, str] = False,
        reject: bool | set[str] = False,
        timed: bool = False,
    ) -> None:
        self.project = project
        self.tool_id = tool
        self.tool = project.registry.get(tool).tool.load()
        self.reject = reject
        self.timed = timed
        self.requests: list[PermissionRequest] = []
        self.updates: list[tuple[Any, dict[str, Any] | None]] = []
        self.during_ask: Callable[[PermissionRequest], Awaitable[None] | None] | None = None
        self._env = env
        self._sessions: dict[str, _Session] = {}

    async def _prompt(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        if self.during_ask is not None:
            outcome = self.during_ask(request)
            if outcome is not None:
                await outcome
        if self.reject is True or (not isinstance(self.reject, bool) and request.permission in self.reject):
            return Decision("reject")
        return Decision("once")

    def _metadata(self, title: str | None, metadata: dict[str, Any] | None) -> None:
        if self.timed:
            self.updates.append((time.monotonic(), dict(metadata or {})))
        else:
            self.updates.append((title, metadata))

    def env(self, **extra: str) -> dict[str, str]:
        """The project's environment, with the ``env`` option's mapping and ``extra`` merged in."""
        merged = {} if isinstance(self._env, bool) else self._env
        return {**self.project.env, **merged, **extra}

    def session(self, session_id: str = "ses_local") -> Session:
        """The harness's session of that id (made on first use)."""
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session(
                self.project,
                self.project.generation.agent("build"),
                id=session_id,
                rules=[Rule("*", "*", "ask", "the test harness")],
                prompt=self._prompt,
                on_metadata=self._metadata,
            )
        return session

    def _changes(self, changes: dict[str, Any]) -> dict[str, Any]:
        if self._env is not False:
            changes.setdefault("env", self.env())
        return changes

    def context(self, **changes: Any) -> ToolContext:
        """A context of the harness's session for a call of the tool, with ``changes``."""
        session = self.session(changes.pop("session_id", "ses_local"))
        abort = changes.pop("abort", None)
        ctx = Session.context(session, self.tool_id, None, abort)
        for key, value in self._changes(changes).items():
            setattr(ctx, key, value)
        return ctx

    async def run_async(self, args: dict[str, Any], **changes: Any) -> Any:
        session = self.session(changes.pop("session_id", "ses_local"))
        abort = changes.pop("abort", None)
        session.changes = self._changes(changes)
        try:
            return await session.execute(self.tool_id, args, abort=abort)
        finally:
            session.changes = {}

    def run(self, args: dict[str, Any], **changes: Any) -> Any:
        """:meth:`run_async` on the project's own loop (``Session.run_tool``): what the call starts (a
        language server, say) lives there and is stopped when the project closes."""
        session = self.session(changes.pop("session_id", "ses_local"))
        abort = changes.pop("abort", None)
        session.changes = self._changes(changes)
        try:
            return session.run_tool(self.tool_id, args, abort=abort)
        finally:
            session.changes = {}

    def error(self, args: dict[str, Any], **changes: Any) -> str:
        """The message of the :class:`ToolError` the run raises."""
        with pytest.raises(ToolError) as caught:
            self.run(args, **changes)
        return str(caught.value)

    def asked(self, permission: str) -> list[PermissionRequest]:
        return [r for r in self.requests if r.permission == permission]


class Asker:
    """A host question asker that records the questions and returns canned answers (or raises them)."""

    def __init__(self, answers: Any) -> None:
        self.answers = answers
        self.seen: list[list[dict[str, Any]]] = []

    async def __call__(self, questions: list[dict[str, Any]]) -> Any:
        self.seen.append(questions)
        if isinstance(self.answers, BaseException):
            raise self.answers
        return self.answers
