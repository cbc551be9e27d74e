"""pytest fixtures for people who write opencode tools and plugins.

opencode-tools registers this module as a pytest plugin (entry point ``pytest11``, name ``opencode``), so
installing opencode-tools is enough: the fixtures are there in every test, nothing to import. Turn it off
with ``pytest -p no:opencode``. Importing it costs almost nothing; opencode itself is imported only when a
fixture is used.

Fixtures (see ``docs/plugins.md``, "Testing a plugin"):

``opencode_env``
    HOME and the XDG directories moved into ``tmp_path`` and every ``OPENCODE_*`` variable removed, in
    ``os.environ`` itself (through ``monkeypatch``), so the code of a plugin that reads the environment is
    isolated too. Returns the variables it set.
``opencode_tmp_project``
    A :class:`TempProject`: an empty project directory (its own git worktree root) in that environment,
    with helpers to write files, tool files and ``opencode.toml``.
``opencode_plugins``
    The plugins the ``opencode_project`` fixture registers: ``[]``; override it in your ``conftest.py``.
``make_opencode_project``
    A factory: ``make_opencode_project(plugin, ...)`` builds a :class:`~opencode_cli.project.Project`
    on the temporary project with those plugin objects (modules or instances with ``@hookimpl``
    functions) registered; installed entry-point plugins are not loaded unless ``autoload=True``.
``opencode_project``
    ``make_opencode_project(*opencode_plugins)``.
``opencode_warnings``
    The one-line warnings the projects reported (a plugin that failed to load, say).
``permission_replies``
    A :class:`PermissionReplies`: scripted answers to permission asks, and a record of every ask.
``run_tool``
    A :class:`ToolRunner` on ``opencode_project``: ``run_tool("read", filePath="x")`` runs a call through
    a real session (``tool_execute_before``, validation, the tool, truncation, ``tool_execute_after``)
    and returns the :class:`~opencode_cli.ToolResult`; failures raise with the model-facing message.
    ``run_tool.permission_ask(permission, patterns)`` and ``run_tool.process_env()`` show what the
    ``permission_ask`` and ``shell_env`` hooks make of a request and of a process's environment.
``chat_request``
    A :class:`ChatRequests` on ``opencode_project``: ``chat_request("hello")`` returns what the run loop
    would send a model for that prompt after the chat hooks (``chat_message``, ``chat_system_transform``,
    ``chat_messages_transform``, ``chat_params``, ``chat_headers``), without a model server.
"""

from __future__ import annotations

import functools
import os
import textwrap
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

if TYPE_CHECKING:
    from .permission import Reply, Rule
    from .permission import Request as PermissionRequest
    from .project import Project
    from .registry import ToolDefinition
    from .results import ToolResult
    from .session import Decision, Session, ToolPart

__all__ = ["ChatRequests", "PermissionReplies", "Progress", "TempProject", "ToolRunner"]


# -- the temporary project -------------------------------------------------------------------------------


@dataclass
class TempProject:
    """A throwaway project directory and the private home around it."""

    directory: Path
    """The project directory (a ``.git`` folder makes it its own worktree root: no parent config leaks in)."""
    home: Path
    """``$HOME`` while the test runs."""
    env: dict[str, str]
    """The environment variables the isolation set (HOME and XDG directories)."""

    @property
    def config_dir(self) -> Path:
        """The global config directory, ``$XDG_CONFIG_HOME/opencode`` (not created)."""
        return Path(self.env["XDG_CONFIG_HOME"]) / "opencode"

    @property
    def data_dir(self) -> Path:
        """opencode's data directory, ``$XDG_DATA_HOME/opencode`` (not created)."""
        return Path(self.env["XDG_DATA_HOME"]) / "opencode"

    def write(self, path: str | Path, text: str) -> Path:
        """Write dedented ``text`` to ``path`` (relative to the project directory; parents created)."""
        target = self.directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return target

    def tool_file(self, name: str, source: str) -> Path:
        """Write ``.opencode/tool/NAME.py``: its ``default`` tool is called ``NAME``, others ``NAME_x``."""
        return self.write(Path(".opencode", "tool", f"{name}.py"), source)

    def config(self, toml: str) -> Path:
        """Write the project's ``opencode.toml`` (before the project is first used: config is read once)."""
        return self.write("opencode.toml", toml)


@pytest.fixture
def opencode_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Isolate ``os.environ``: HOME and XDG directories inside ``tmp_path``, no ``OPENCODE_*`` variables."""
    root = tmp_path / "opencode-env"
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    values = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "XDG_STATE_HOME": str(root / "state"),
    }
    for key in list(os.environ):
        if key.startswith("OPENCODE_"):
            monkeypatch.delenv(key)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


@pytest.fixture
def opencode_tmp_project(tmp_path: Path, opencode_env: dict[str, str]) -> TempProject:
    """An empty project directory in the isolated environment."""
    directory = tmp_path / "project"
    (directory / ".git").mkdir(parents=True, exist_ok=True)
    return TempProject(directory, Path(opencode_env["HOME"]), dict(opencode_env))


# -- projects with plugins -------------------------------------------------------------------------------


@pytest.fixture
def opencode_warnings() -> list[str]:
    """Warnings reported by the projects of this test, in order."""
    return []


@pytest.fixture
def opencode_plugins() -> list[Any]:
    """The plugins of the ``opencode_project`` fixture; override in ``conftest.py`` to test yours."""
    return []


def _named(plugins: Iterable[Any]) -> list[tuple[str, object]]:
    named: list[tuple[str, object]] = []
    taken: set[str] = set()
    for plugin in plugins:
        if isinstance(plugin, tuple) and len(plugin) == 2 and isinstance(plugin[0], str):
            name, value = plugin
        else:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
            value = plugin
        unique, number = name, 2
        while unique in taken:
            unique, number = f"{name}-{number}", number + 1
        taken.add(unique)
        named.append((unique, value))
    return named


ProjectFactory = Callable[..., "Project"]


@pytest.fixture
def make_opencode_project(
    opencode_tmp_project: TempProject, opencode_warnings: list[str]
) -> Iterable[ProjectFactory]:
    """``make_opencode_project(*plugins, autoload=False, directory=None, env=None) -> Project``.

    ``plugins`` are plugin objects (a module, or an instance whose methods carry ``@hookimpl``), or
    ``(name, plugin)`` pairs; a plugin's name is its ``__name__`` or class name otherwise. They are
    registered after the built-ins, as entry-point plugins are. ``autoload=True`` also loads the
    installed entry-point plugins. ``env`` adds variables to the project's environment only (plugin code
    reading ``os.environ`` does not see them: use ``monkeypatch.setenv``). The kit trusts the projects it
    makes (``Project(trusted=True)``): their tool files and config take effect as written.
    """
    from .project import Project

    made: list[Project] = []

    def factory(
        *plugins: Any,
        autoload: bool = False,
        directory: str | Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Project:
        project = Project(
            directory or opencode_tmp_project.directory,
            env={**os.environ, **(env or {})},
            plugins=_named(plugins),
            autoload_plugins=autoload,
            warn=opencode_warnings.append,
            trusted=True,
        )
        made.append(project)
        return project

    yield factory
    for project in made:
        project.close()


@pytest.fixture
def opencode_project(make_opencode_project: ProjectFactory, opencode_plugins: list[Any]) -> Project:
    """A project with the ``opencode_plugins`` registered."""
    return make_opencode_project(*opencode_plugins)


# -- permission asks -------------------------------------------------------------------------------------

ReplyLike = Any  # "once" | "always" | "reject" | (reply, feedback) | Decision
#: The replies a human can give (typed: a reply found among them is a Reply to the type checker).
_REPLIES: tuple[Reply, ...] = ("once", "always", "reject")


def _decision(value: ReplyLike) -> Decision:
    from .session import Decision

    if isinstance(value, Decision):
        return value
    if isinstance(value, str):
        reply, feedback = value, None
    elif isinstance(value, tuple) and len(value) == 2:
        reply, feedback = value
    else:
        raise TypeError(
            f"a permission reply is 'once', 'always', 'reject', (reply, feedback) or Decision: {value!r}"
        )
    if reply not in _REPLIES:
        raise ValueError(f"a permission reply is 'once', 'always' or 'reject', not {reply!r}")
    return Decision(reply, feedback)


class PermissionReplies:
    """Scripted answers to the permission asks that reach a human, and a record of each ask.

    Only asks the rules leave to ``ask`` get here (the built-in agents allow most things: reading a
    ``.env`` file asks, a path outside the project asks for ``external_directory``; make your own
    permission ask with ``[permission] NAME = "ask"`` in ``opencode.toml`` or ``run_tool.rule(...)``).
    Each ask is answered by, in order: a standing answer for its permission (:meth:`update`), the next
    queued answer (:meth:`append`/:meth:`extend`, consumed in order), else :attr:`default` (reject).
    An answer is ``"once"``, ``"always"``, ``"reject"``, ``(reply, feedback)`` or a ``Decision``; a
    reject with feedback reaches the model as the correction.
    """

    def __init__(self) -> None:
        self.requests: list[PermissionRequest] = []
        """Every ask that reached the prompt, in order."""
        self.answers: list[tuple[PermissionRequest, Decision]] = []
        """Each of those asks with the answer it got."""
        self.default: ReplyLike = "reject"
        """The answer when nothing is scripted (as a host with nobody to ask)."""
        self._queue: deque[Decision] = deque()
        self._standing: dict[str, Decision] = {}

    def append(self, reply: ReplyLike) -> PermissionReplies:
        """Queue one answer for the next ask."""
        self._queue.append(_decision(reply))
        return self

    def extend(self, replies: Iterable[ReplyLike]) -> PermissionReplies:
        """Queue answers, used one per ask in order."""
        for reply in replies:
            self.append(reply)
        return self

    def update(self, standing: Mapping[str, ReplyLike]) -> PermissionReplies:
        """Answer every ask of a permission the same way (keys may use ``*`` wildcards); not consumed."""
        for permission, reply in standing.items():
            self._standing[permission] = _decision(reply)
        return self

    @property
    def remaining(self) -> int:
        """How many queued answers are left."""
        return len(self._queue)

    @property
    def permissions(self) -> list[str]:
        """The permission of each recorded ask, in order (handy in asserts)."""
        return [request.permission for request in self.requests]

    def answer(self, request: PermissionRequest) -> Decision:
        """The scripted answer for ``request`` (recorded)."""
        from .permission import match

        self.requests.append(request)
        standing = [d for p, d in self._standing.items() if match(request.permission, p)]
        if standing:
            decision = standing[-1]
        elif self._queue:
            decision = self._queue.popleft()
        else:
            decision = _decision(self.default)
        self.answers.append((request, decision))
        return decision

    async def __call__(self, request: PermissionRequest) -> Decision:
        """A session's ``prompt``."""
        return self.answer(request)


@pytest.fixture
def permission_replies() -> PermissionReplies:
    """Scripted answers to permission asks (default: reject), with every ask recorded."""
    return PermissionReplies()


# -- running tools ---------------------------------------------------------------------------------------


class Progress(NamedTuple):
    """One ``ctx.metadata(title, metadata)`` report of a running tool."""

    title: str | None
    metadata: dict[str, Any] | None


class ToolRunner:
    """Runs tool calls of one project through one session, as a model's calls are run.

    The session lives as long as the runner, so "always" answers and the doom-loop count carry over from
    call to call, as in a conversation; :meth:`new_session` starts afresh.
    """

    def __init__(self, project: Project, prompt: PermissionReplies | None = None) -> None:
        self.project = project
        self.prompt = prompt or PermissionReplies()
        self.agent: str | None = None
        """The agent whose permission rules apply (default ``build``); set before the first call."""
        self.rules: list[Rule] = []
        """Session rules on top of the agent's (see :meth:`rule`), read at each call."""
        self.progress: list[Progress] = []
        """Every ``ctx.metadata`` report so far, in order."""
        self._session: Session | None = None

    @property
    def session(self) -> Session:
        """The session calls run in (created on first use)."""
        if self._session is None:
            self._session = self.project.session(
                self.agent, prompt=self.prompt, on_metadata=self._on_metadata
            )
        self._session.rules = list(self.rules)
        return self._session

    def _on_metadata(self, title: str | None, metadata: dict[str, Any] | None) -> None:
        self.progress.append(Progress(title, None if metadata is None else dict(metadata)))

    def new_session(self) -> Session:
        """Forget the session (its "always" answers stay with the project, as in OpenCode)."""
        if self._session is not None:
            self._session.close()
        self._session = None
        return self.session

    def rule(self, permission: str, action: str = "ask", pattern: str = "*") -> ToolRunner:
        """Add a session rule, e.g. ``run_tool.rule("weather")`` so ``ctx.ask("weather", ...)`` asks."""
        from .permission import Rule

        if action not in ("allow", "ask", "deny"):
            raise ValueError(f"a rule's action is allow, ask or deny, not {action!r}")
        self.rules.append(Rule(permission, pattern, action, "test"))  # type: ignore[arg-type]
        return self

    async def acall(self, tool_id: str, /, **args: Any) -> ToolResult:
        """:meth:`__call__` for async tests."""
        from .truncate import ascending_id

        return await self.session.execute(tool_id, dict(args), call_id=ascending_id("call"))

    def __call__(self, tool_id: str, /, **args: Any) -> ToolResult:
        """Run ``tool_id`` with ``args`` and return its result; a failure raises with the model's text.

        The hooks see a fresh ``call_...`` id, as for a model's call.
        """
        return self.project.portal.call(functools.partial(self.acall, tool_id, **args))

    def dispatch(self, name: str, arguments: str | dict[str, Any] | None = None, /) -> ToolPart:
        """Run a call the way a model's call is run, repair and all; never raises for the call's failures.

        ``arguments`` is a dict or the raw JSON text a model sent; ``part.text`` is what the model sees.
        """
        from .session import ToolCall

        return self.project.portal.call(self.session.dispatch, ToolCall(name, arguments))

    def permission_ask(
        self, permission: str, patterns: list[str], metadata: dict[str, Any] | None = None
    ) -> str:
        """What the ``permission_ask`` hooks answer for a request a rule would put to the user:
        ``"allow"``, ``"deny"`` or ``"ask"``."""
        from .permission import Request

        request = Request("", self.session.id, permission, list(patterns), metadata=dict(metadata or {}))
        return self.project.portal.call(self.session.asks.hook_status, request)

    def process_env(self, tool_id: str = "bash", cwd: str | Path | None = None) -> dict[str, str]:
        """The environment a process started by ``tool_id`` gets, after the ``shell_env`` hooks (what
        bash's shell would run with)."""
        from .truncate import ascending_id

        context = self.session.context(tool_id, ascending_id("call"))
        return self.project.portal.call(context.process_env, cwd)

    def definition(self, tool_id: str, model: str | None = None) -> ToolDefinition:
        """What a model is told about ``tool_id`` (after the ``tool_definition`` hooks)."""
        from .modelref import ModelRef

        registry = self.project.registry
        return registry.definition(registry.get(tool_id), ModelRef.coerce(model))


@pytest.fixture
def run_tool(opencode_project: Project, permission_replies: PermissionReplies) -> Iterable[ToolRunner]:
    """Run tools of ``opencode_project``: ``run_tool("id", **args)`` returns the ``ToolResult``."""
    runner = ToolRunner(opencode_project, permission_replies)
    yield runner
    if runner._session is not None:
        runner._session.close()


class ChatRequests:
    """What the run loop would send a model, for testing chat hooks without a model server.

    ``chat_request("hello")`` (or ``await chat_request.aprepare("hello")`` in an async test) returns a
    :class:`~opencode_cli.models.hooks.PreparedRequest`: ``messages`` (system prompt first), ``params``
    (``temperature``, ``top_p``, ``top_k``, ``max_output_tokens``, ``options``), ``headers``, ``system``.
    Each call uses a new session of ``project``; ``model`` is any ``provider/id`` (no server is asked).
    """

    def __init__(self, project: Project) -> None:
        self.project = project

    async def aprepare(self, prompt: str, model: str = "test/test-model") -> Any:
        """The prepared request for ``prompt`` (see the class docstring)."""
        from .modelref import ModelRef
        from .models.base import ModelInfo
        from .models.chat import ChatModel
        from .models.loop import prepare_request
        from .models.provider import Provider

        ref = ModelRef.parse(model)
        provider = Provider()
        provider.name = ref.provider or "test"
        with self.project.session(model=ref) as session:
            return await prepare_request(session, ChatModel(provider, ModelInfo(ref.id)), prompt)

    def __call__(self, prompt: str, model: str = "test/test-model") -> Any:
        import asyncio

        return asyncio.run(self.aprepare(prompt, model))


@pytest.fixture
def chat_request(opencode_project: Project) -> ChatRequests:
    """What the run loop would send for a prompt after the chat hooks: ``chat_request("hello")``."""
    return ChatRequests(opencode_project)


def __getattr__(name: str) -> Any:
    # ``from opencode_cli.testing import Decision`` without importing the session layer at plugin load
    if name == "Decision":
        from .session import Decision

        return Decision
    raise AttributeError(f"module 'opencode_cli.testing' has no attribute {name!r}")
