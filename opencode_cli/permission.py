"""Permissions: rules, wildcard matching, evaluation, merging, hidden tools, and the ask/reply flow.

A rule is ``{permission, pattern, action}`` with action ``allow``, ``ask`` or ``deny``. Rulesets are plain
lists; merging is concatenation and the **last** matching rule wins (core spec §8). A tool's
``ctx.ask()`` ends in :meth:`PermissionService.ask`: a ``deny`` raises, ``allow`` passes, and anything
left to ``ask`` waits as a pending request until a host answers it with :meth:`PermissionService.reply`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from .errors import CorrectedError, DeniedError, NotFoundError, PermissionFailure, RejectedError

if TYPE_CHECKING:
    import asyncio

    from .store import Store

Action = Literal["allow", "ask", "deny"]
NO_MATCH = "no rule matched"
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Rule:
    """One permission rule."""

    permission: str
    pattern: str
    action: Action
    source: str = field(default="", compare=False)
    """Where the rule came from (``defaults``, ``config``, ``agent.plan``, ``--allow``…); not compared."""
    short: bool = field(default=False, compare=False)
    """Written as ``perm = "action"`` (not as a pattern table); only the key order of :meth:`as_dict`
    depends on it. Not compared: it changes how a rule prints, never what it matches."""

    def as_dict(self) -> dict[str, str]:
        """The rule as OpenCode prints it in error messages (without the source), keys in the order
        OpenCode's object has them: ``fromConfig`` writes ``{permission, action, pattern}`` for
        ``perm = "action"`` and ``{permission, pattern, action}`` for a pattern table; rules OpenCode builds
        itself (approvals, the truncation exemption, subagent session rules) have the table's order."""
        if self.short:
            return {"permission": self.permission, "action": self.action, "pattern": self.pattern}
        return {"permission": self.permission, "pattern": self.pattern, "action": self.action}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "") -> Rule:
        """The inverse of :meth:`as_dict` (a stored rule): the key order tells which form it was written in.
        The action is not checked here."""
        keys = [key for key in data if key in ("pattern", "action")]
        return cls(
            data["permission"], data["pattern"], data["action"], source, short=keys == ["action", "pattern"]
        )


Ruleset = list[Rule]


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    pattern = pattern.replace("\\", "/")
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in body)
    if optional_tail:
        regex += "( .*)?"
    return re.compile(regex, re.DOTALL)


def match(value: str, pattern: str) -> bool:
    """OpenCode's wildcard match: ``*`` matches anything (``/`` included), ``?`` one character.

    A pattern ending in ``" *"`` also matches without its tail, so ``ls *`` matches ``ls`` but not
    ``lstmeval``. Backslashes count as slashes on both sides; matching is case-sensitive.
    """
    if pattern == "*":
        return True
    if "*" not in pattern and "?" not in pattern:
        return value.replace("\\", "/") == pattern.replace("\\", "/")
    return _compile(pattern).fullmatch(value.replace("\\", "/")) is not None


def evaluate(permission: str, pattern: str, *rulesets: Iterable[Rule]) -> Rule:
    """The last rule matching both ``permission`` and ``pattern``; ``ask`` when none does."""
    for ruleset in reversed(rulesets):
        for rule in reversed(ruleset if isinstance(ruleset, list | tuple) else list(ruleset)):
            if match(permission, rule.permission) and match(pattern, rule.pattern):
                return rule
    return Rule(permission, "*", "ask", NO_MATCH)


def merge(*rulesets: Iterable[Rule]) -> Ruleset:
    """Concatenate rulesets; later ones win because evaluation takes the last match."""
    return [rule for ruleset in rulesets for rule in ruleset]


def _expand(pattern: str, home: str) -> str:
    if pattern == "~" or pattern == "$HOME":
        return home
    for prefix in ("~/", "$HOME/"):
        if pattern.startswith(prefix):
            return home.rstrip("/") + "/" + pattern[len(prefix) :]
    return pattern


def from_config(config: Mapping[str, Any] | str, home: str, source: str = "config") -> Ruleset:
    """Rules from a ``[permission]`` table, in the table's key order.

    A string value is one rule for pattern ``*`` (a ``short`` rule: it prints its action before its
    pattern); a table gives one rule per pattern, with ``~``, ``~/x``, ``$HOME`` and ``$HOME/x`` expanded.
    A bare string for the whole table means ``{"*": it}``.
    Values that are not actions raise :class:`ValueError` naming the key.
    """
    if isinstance(config, str):
        config = {"*": config}
    rules: Ruleset = []
    for permission, value in config.items():
        if isinstance(value, str):
            rules.append(Rule(permission, "*", _action(value, permission), source, short=True))
        elif isinstance(value, Mapping):
            for pattern, action in value.items():
                action_ = _action(action, f"{permission}.{pattern}")
                rules.append(Rule(permission, _expand(pattern, home), action_, source))
        else:
            raise ValueError(f"permission.{permission} must be an action or a table of pattern = action")
    return rules


def _action(value: Any, where: str) -> Action:
    if value not in ACTIONS:
        raise ValueError(f"permission.{where} = {value!r} is not one of allow, ask, deny")
    return value


_SHARED_KEYS = {
    "edit": "edit",
    "write": "edit",
    "apply_patch": "edit",
    "list_mcp_resources": "read",
    "list_mcp_resource_templates": "read",
    "read_mcp_resource": "read",
}


def permission_key(tool_id: str) -> str:
    """The permission a tool asks under: edit, write and apply_patch share ``edit``."""
    return _SHARED_KEYS.get(tool_id, tool_id)


#: Permissions the core asks itself, whatever the tools: a path outside the project, a call repeated, an
#: MCP server asking the session's model (sampling).
CORE_PERMISSIONS = ("external_directory", "doom_loop", "mcp_sampling")
#: Permissions a tool asks besides its own key: bash asks ``sandbox`` to run a command unsandboxed, the
#: file tools ask ``config`` to change the project's configuration or trusted code.
ALSO_ASKED = {
    "bash": ("sandbox",),
    "write": ("config",),
    "edit": ("config",),
    "apply_patch": ("config",),
}


def unasked(permission: str, tool_ids: Iterable[str], prefixes: Iterable[str] = ()) -> str | None:
    """Why a rule for ``permission`` can never apply: no tool in ``tool_ids`` (nor the core) asks a
    permission it matches, with the close matches; ``None`` when one does. A permission starting with one
    of ``prefixes`` (a configured MCP server's ``NAME_``, whose tools appear once it is connected) counts."""
    import difflib

    tool_ids = list(tool_ids)
    also = (key for tool_id in tool_ids for key in ALSO_ASKED.get(tool_id, ()))
    asked = sorted({*CORE_PERMISSIONS, *(permission_key(tool_id) for tool_id in tool_ids), *also})
    if any(match(key, permission) for key in asked) or any(permission.startswith(p) for p in prefixes):
        return None
    close = difflib.get_close_matches(permission, asked, n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else f" Permissions asked: {', '.join(asked)}."
    return f"no tool asks the permission '{permission}', so a rule for it never applies.{hint}"


def disabled(tool_ids: Iterable[str], ruleset: Iterable[Rule]) -> set[str]:
    """The tools a ruleset denies wholly, so they are not offered to the model (core spec §8.4).

    A tool is hidden when the last rule whose *permission* matches its key has pattern ``*`` and
    action ``deny``; patterns of other rules are not looked at.
    """
    rules = list(ruleset)
    hidden: set[str] = set()
    for tool_id in tool_ids:
        key = permission_key(tool_id)
        last = next((r for r in reversed(rules) if match(key, r.permission)), None)
        if last is not None and last.pattern == "*" and last.action == "deny":
            hidden.add(tool_id)
    return hidden


# -- the ask/reply flow (core spec §8.5) ---------------------------------------------------------------

Reply = Literal["once", "always", "reject"]
Listener = Callable[[str, dict[str, Any]], None]


@dataclass
class Request:
    """A permission request waiting for, or given, an answer."""

    id: str
    session_id: str
    permission: str
    patterns: list[str]
    always: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    tool: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The shape of OpenCode's ``permission.asked`` event."""
        data: dict[str, Any] = {
            "id": self.id,
            "sessionID": self.session_id,
            "permission": self.permission,
            "patterns": self.patterns,
            "metadata": self.metadata,
            "always": self.always,
        }
        if self.tool is not None:
            data["tool"] = self.tool
        return data


class AskOutput:
    """The mutable ``output`` of the ``permission_ask`` hook: set ``status`` to ``"allow"`` or ``"deny"``,
    or leave ``"ask"`` (the user is asked). Compared by identity."""

    def __init__(self, status: Action = "ask") -> None:
        self.status: Action = status

    def __repr__(self) -> str:
        return f"AskOutput(status={self.status!r})"


def _new_request_id() -> str:
    import secrets

    return "per_" + secrets.token_hex(13)


class PermissionService:
    """Pending permission requests of one project, their replies, and the "always" approvals.

    ``approved`` is shared by every session of the project (as in OpenCode); ``on_always`` is told of each
    new approval so a host can also keep it. With a ``store`` (a function giving the project's
    :class:`~opencode_cli.store.Store`), the approvals given in a session named by :meth:`remember` are
    kept in it, per session (what ``opencode run --session`` reads back).
    Listeners receive ``("permission.asked", request_dict)`` and ``("permission.replied",
    {"sessionID", "requestID", "reply"})``.
    """

    def __init__(
        self,
        on_always: Callable[[str, list[Rule]], None] | None = None,
        *,
        store: Callable[[], Store] | None = None,
    ) -> None:
        self.approved: Ruleset = []
        self._pending: dict[str, tuple[Request, asyncio.Future[None]]] = {}
        self._listeners: list[Listener] = []
        self._on_always = on_always
        self._store = store
        self._remembered: set[str] = set()

    def remember(self, session_id: str) -> None:
        """Keep the "always" approvals given in ``session_id`` in the store (a session kept in the store)."""
        self._remembered.add(session_id)

    def _keep(self, session_id: str, granted: list[Rule]) -> None:
        if self._store is not None and session_id in self._remembered:
            self._store().add_approvals(session_id, [(rule.permission, rule.pattern) for rule in granted])
        if self._on_always is not None:
            self._on_always(session_id, granted)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, data)`` on every event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def subscribers(self) -> int:
        """How many listeners are subscribed (sessions do not subscribe: hosts that watch events do)."""
        return len(self._listeners)

    def _publish(self, event: str, data: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            listener(event, data)

    def pending(self) -> list[Request]:
        """Requests waiting for a reply, oldest first."""
        return [request for request, _ in self._pending.values()]

    async def ask(
        self,
        request: Request,
        ruleset: Iterable[Rule],
        on_pending: Callable[[Request], None] | None = None,
        before_asking: Callable[[Request], Awaitable[Action]] | None = None,
    ) -> None:
        """Return when allowed; raise :class:`DeniedError`, :class:`RejectedError` or :class:`CorrectedError`.

        Each pattern is judged by ``ruleset`` plus the approvals so far: a ``deny`` fails at once, with the
        rules whose permission matches; if every pattern is allowed the call proceeds; otherwise
        ``before_asking(request)`` (the ``permission_ask`` hook) may settle it (``allow`` passes, ``deny``
        rejects), and what is still ``ask`` waits until :meth:`reply`. ``on_pending(request)`` is called
        once it waits (after the ``permission.asked`` event): the asking session uses it to put the question
        to its user. The error raised names the permission asked (``error.permission``).
        """
        try:
            await self._ask(request, ruleset, on_pending, before_asking)
        except PermissionFailure as error:
            error.permission = error.permission or request.permission
            raise

    async def _ask(
        self,
        request: Request,
        ruleset: Iterable[Rule],
        on_pending: Callable[[Request], None] | None,
        before_asking: Callable[[Request], Awaitable[Action]] | None,
    ) -> None:
        rules = list(ruleset)
        needs_asking = False
        for pattern in request.patterns:
            rule = evaluate(request.permission, pattern, rules, self.approved)
            if rule.action == "deny":
                raise DeniedError([r.as_dict() for r in rules if match(request.permission, r.permission)])
            if rule.action == "ask":
                needs_asking = True
        if not needs_asking:
            return
        if before_asking is not None:
            settled = await before_asking(request)
            if settled == "allow":
                return
            if settled == "deny":
                raise RejectedError()
        import asyncio

        request.id = request.id or _new_request_id()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = (request, future)
        try:
            self._publish("permission.asked", request.as_dict())
            if on_pending is not None:
                on_pending(request)
            await future
        finally:
            self._pending.pop(request.id, None)

    def reply(self, request_id: str, reply: Reply, message: str | None = None) -> None:
        """Answer a pending request (unknown id: :class:`NotFoundError`)."""
        entry = self._pending.get(request_id)
        if entry is None:
            raise NotFoundError(f"no pending permission request {request_id}")
        request, future = entry
        self._answer(request, future, reply)
        if reply == "reject":
            _settle(future, CorrectedError(message) if message else RejectedError())
            # the session's other asks are rejected too, after the answers already given are in: a host
            # that approved one ask and rejected another at once has its approval kept
            future.get_loop().call_soon(self._reject_others, request)
            return
        _settle(future, None)
        if reply == "always":
            granted = [Rule(request.permission, pattern, "allow", "always") for pattern in request.always]
            self.approved.extend(granted)
            if granted:
                self._keep(request.session_id, granted)
            for other, waiting in list(self._pending.values()):
                if other.session_id != request.session_id or other.id == request.id or waiting.done():
                    continue
                if all(
                    evaluate(other.permission, p, self.approved).action == "allow" for p in other.patterns
                ):
                    self._answer(other, waiting, "always")
                    _settle(waiting, None)

    def _reject_others(self, request: Request) -> None:
        """Reject the asks of ``request``'s session still waiting for an answer (one rejection ends them)."""
        for other, waiting in list(self._pending.values()):
            if other.session_id == request.session_id and other.id != request.id:
                self._answer(other, waiting, "reject")
                _settle(waiting, RejectedError())

    def _answer(self, request: Request, future: asyncio.Future[None], reply: Reply) -> None:
        if not future.done():
            self._publish(
                "permission.replied",
                {"sessionID": request.session_id, "requestID": request.id, "reply": reply},
            )

    def dispose(self) -> None:
        """Reject every pending request (the project is closing or reloading)."""
        for request, future in list(self._pending.values()):
            self._answer(request, future, "reject")
            _settle(future, RejectedError())


def _settle(future: asyncio.Future[None], outcome: BaseException | None) -> None:
    if future.done():
        return
    if outcome is None:
        future.set_result(None)
    else:
        future.set_exception(outcome)


def inherited(parent: Iterable[Rule], subagent: Iterable[Rule], primary_tools: Iterable[str] = ()) -> Ruleset:
    """The session ruleset of a subagent's session (builtin-tools §9 step 5).

    The parent's ``deny`` rules and its ``external_directory`` rules; ``todowrite`` and ``task`` denied
    unless the subagent's own ruleset mentions them; and the tools of config
    ``experimental.primary_tools`` denied (they belong to primary agents).
    """
    own = {rule.permission for rule in subagent}
    rules = [
        replace(rule, source=f"parent: {rule.source}" if rule.source else "parent")
        for rule in parent
        if rule.action == "deny" or rule.permission == "external_directory"
    ]
    for name in ("todowrite", "task"):
        if name not in own:
            rules.append(Rule(name, "*", "deny", "subagent"))
    rules += [Rule(name, "*", "deny", "experimental.primary_tools") for name in primary_tools]
    return rules
