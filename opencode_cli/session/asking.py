"""A session's permission asks (core spec §8.5): a tool's request judged by the agent's rules, the session's
rules and the approvals so far; the ``permission_ask`` hooks heard before a person is; what still needs a
person put to the session's ``prompt``, and the answer sent back to the project's
:class:`~opencode_cli.permission.PermissionService`.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..parts import Decision
from ..permission import Rule, merge

if TYPE_CHECKING:  # asyncio too: a cold command that reads a session's offer need not import it
    import asyncio

    from ..permission import Action
    from ..permission import Request as PermissionRequest
    from . import Session


async def refuse_without_terminal(request: PermissionRequest) -> Decision:
    """The default prompt of a host with nobody to ask: reject."""
    return Decision("reject")


class Asks:
    """The permission asks of one session, and the prompts it has open (cancelled when it closes)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.open: set[asyncio.Future[None]] = set()
        """The prompts put to the user and not yet answered."""

    async def ask(self, request: PermissionRequest) -> None:
        """Judge ``request``: deny raises, allow returns, ask prompts, unless a ``permission_ask`` hook
        settles it first."""
        session = self.session
        request.session_id = session.id
        ruleset = merge(session.agent.permission, session.rules)
        before = self.hook_status if session.project.plugins.has_hook("permission_ask") else None
        await session.project.permissions.ask(
            request, ruleset, on_pending=self.put_to_user, before_asking=before
        )

    async def hook_status(self, request: PermissionRequest) -> Action:
        """What the ``permission_ask`` hooks make of a request a rule would put to the user: ``"allow"``,
        ``"deny"`` or ``"ask"`` (also when no plugin implements the hook)."""
        from ..permission import AskOutput

        project = self.session.project
        output = AskOutput()
        await project.plugins.acall("permission_ask", request=request, output=output)
        status = output.status
        if status == "allow" or status == "deny" or status == "ask":  # narrowed to an Action
            return status
        project.warn(f"permission_ask: status {status!r} is not allow, deny or ask; the user is asked")
        return "ask"

    def put_to_user(self, request: PermissionRequest) -> None:
        """Put a waiting request to the session's prompt (a closed session asks nobody: the request waits)."""
        import asyncio

        if self.session.closed:
            return
        task = asyncio.ensure_future(self._answer(request))
        self.open.add(task)
        task.add_done_callback(self.open.discard)

    def cancel(self) -> None:
        """Cancel the prompts still open: their requests are rejected."""
        for task in list(self.open):
            task.cancel()

    async def _answer(self, request: PermissionRequest) -> None:
        import asyncio

        from ..errors import NotFoundError

        session = self.session
        try:
            decision = await session.prompt(request)
        except (asyncio.CancelledError, Exception):  # a prompt that fails or is cancelled answers no
            decision = Decision("reject")
        reply = decision.reply
        if reply == "always" and session.own_approvals:
            self._approve(request)
            reply = "once"
        with contextlib.suppress(NotFoundError):  # answered meanwhile ("always", or a sibling's reject)
            session.project.permissions.reply(request.id, reply, decision.feedback)

    def _approve(self, request: PermissionRequest) -> None:
        """Allow what an "always" answer covers, in this session only (see ``Session.own_approvals``)."""
        session = self.session
        granted = [Rule(request.permission, pattern, "allow", "always") for pattern in request.always]
        session.rules = [*session.rules, *granted]
        if session.remember and granted:
            session.project.store.add_approvals(
                session.id, [(rule.permission, rule.pattern) for rule in granted]
            )
