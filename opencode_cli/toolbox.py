"""A :class:`Toolbox`: a class whose public methods are tools, sharing one setup and one teardown.

The shape an MCP server's tools have (one connection, several tools, one close), for tools of your own: a
database handle, a client with a session, a process kept warm. The setup runs on the first call of any of
its tools, and the teardown when the project closes (also on Ctrl-C, SIGTERM or an error): the toolbox is
one of the project's services (:mod:`opencode_cli.services`), shared by every session::

    class Notes(Toolbox):
        prefix = "notes"  # the tools are notes_add and notes_find (no prefix: add and find)

        async def setup(self) -> None:
            self.db = await open_database()

        async def teardown(self) -> None:
            await self.db.close()

        async def add(self, text: str) -> str:
            \"\"\"Keep a note.\"\"\"
            ...

        def find(self, words: str, ctx: ToolContext) -> list[str]:
            \"\"\"Notes containing these words.\"\"\"
            ...

Each public method (a name not starting with ``_``, defined by the subclass) is a tool, described as
``@tool`` describes a function: the docstring (or a ``.txt`` file named after the tool beside the module),
the typed parameters, ``ctx`` injected. ``setup`` and ``teardown`` may be plain or ``async``; plain ones run
in a worker thread. ``setup`` may take one argument, ``project``: the project that owns the toolbox (its
``env``, ``directory``, ``config``).

A tool file's toolbox (a subclass defined there, or an instance) names its tools after the file
(``notes.py``: ``notes_add``), as the file's other tools are named. An instance is also a plugin:
``Project(plugins=[("notes", Notes())])``, or an entry point naming the instance; a plugin may also
``register(Notes)``, and each project then makes an instance of its own.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from .contract import AnyTool, LazyTool, Tool, from_function
from .hookspecs import hookimpl
from .services import Service

if TYPE_CHECKING:
    from .context import ToolContext
    from .project import Project
    from .registry import RegisterTool

__all__ = ["Toolbox", "tools_of"]


class Toolbox:
    """A class whose public methods are tools with a shared, optional setup and teardown (see the module
    docstring). Register an instance (``register(Notes())``) or the class (``register(Notes)``: each
    project makes its own instance)."""

    prefix: ClassVar[str | None] = None
    """Put before each method's name, with ``_``, to make the tool ids (``None``: the names alone)."""

    def setup(self) -> Any:
        """Get ready (open what the tools share); called once, before the first call of any of the tools.
        Plain or ``async``, and it may take ``project`` (the owner; see the module docstring). One that
        raises fails the call (the model reads the error), and the next call tries again."""

    def teardown(self) -> Any:
        """Release what :meth:`setup` got; called once when the project closes (only after a setup that
        succeeded). Plain or ``async``."""

    @hookimpl
    def register_tools(self, register: RegisterTool) -> None:
        """A toolbox instance is a plugin of its own: it registers its tools."""
        register(self)

    def tools(self, prefix: str | None = None) -> list[Tool]:
        """The tools of this instance, one per public method, in the order the class defines them; ``prefix``
        (default :attr:`prefix`) goes before each method's name."""
        prefix = self.prefix if prefix is None else prefix
        made: list[Tool] = []
        for name, function in _methods(type(self)).items():
            tool_id = f"{prefix}_{name}" if prefix else name
            built = from_function(_without_self(function), id=tool_id, cls=ToolboxTool)
            assert isinstance(built, ToolboxTool)
            built.box, built.method = self, name
            made.append(built)
        return made

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} toolbox>"


#: Names a toolbox has for itself: never tools.
_OWN = frozenset(vars(Toolbox))


def _methods(cls: type[Toolbox]) -> dict[str, Callable[..., Any]]:
    """The public methods of ``cls`` and its bases below :class:`Toolbox`, in definition order (an
    override keeps the place of what it overrides)."""
    found: dict[str, Callable[..., Any]] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass is Toolbox or not issubclass(klass, Toolbox):
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") and name not in _OWN and inspect.isfunction(value):
                found[name] = value
    return found


def _without_self(method: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in for ``method`` whose signature leaves out ``self``: what the tool's parameters and call
    shape are made from (the call itself goes to the bound method of the running instance)."""

    async def async_view(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a toolbox method runs bound to its toolbox")

    def view(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a toolbox method runs bound to its toolbox")

    chosen: Callable[..., Any] = async_view if inspect.iscoroutinefunction(method) else view
    functools.update_wrapper(chosen, method)
    signature = inspect.signature(method)
    # a function takes any attribute; mypy knows a function's declared ones only
    chosen.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # type: ignore[attr-defined]
    return chosen


class ToolboxTool(Tool):
    """One method of a :class:`Toolbox` as a tool: a call gets the running toolbox from the project's
    services (setting it up on first use) and calls the method bound to it."""

    box: Toolbox
    method: str

    @property
    def service_key(self) -> str:
        """The key of the toolbox's service: one per toolbox class and source in a project."""
        return f"toolbox {type(self.box).__qualname__} ({self.source.describe()})"

    async def execute(self, params: Any, ctx: ToolContext) -> Any:
        """Call the method on the project's running toolbox (set up on the first call)."""
        async with self._running(ctx) as box:
            return await self._invoke(getattr(box, self.method), params, ctx)

    @contextlib.asynccontextmanager
    async def _running(self, ctx: ToolContext) -> AsyncIterator[Toolbox]:
        project = ctx.project
        services = project.services
        key = self.service_key
        current = services.peek(key)
        if isinstance(current, ToolboxService) and current.box is not self.box:
            await services.stop(key)  # a reloaded tool file's toolbox replaces the old one
        service = await services.get(key, lambda: ToolboxService(self.box, key, project))
        assert isinstance(service, ToolboxService)
        yield service.box


class ToolboxService(Service):
    """A toolbox as a project's service: :meth:`start` runs its setup, :meth:`stop` its teardown."""

    def __init__(self, box: Toolbox, name: str, project: Project) -> None:
        self.box = box
        self.name = name
        self.project = project
        self._ready = False

    async def start(self) -> None:
        """Run the toolbox's setup (given the project when it takes an argument)."""
        setup = self.box.setup
        await _call(setup, *([self.project] if inspect.signature(setup).parameters else []))
        self._ready = True

    async def stop(self) -> None:
        """Run the toolbox's teardown, once, if its setup succeeded."""
        if self._ready:
            self._ready = False
            await _call(self.box.teardown)


async def _call(function: Callable[..., Any], *args: Any) -> None:
    """Call a setup or teardown: a coroutine function awaited, a plain one in a worker thread."""
    import asyncio

    if inspect.iscoroutinefunction(function):
        await function(*args)
        return
    result = await asyncio.to_thread(function, *args)
    if inspect.isawaitable(result):
        await result


def tools_of(value: Any) -> list[AnyTool]:
    """What ``register(value)`` registers: a tool itself, or the tools of a toolbox (an instance, or a
    class, of which a new instance is made); anything else is a :class:`TypeError`."""
    if isinstance(value, Tool | LazyTool):
        return [value]
    if isinstance(value, Toolbox):
        return list(value.tools())
    if isinstance(value, type) and issubclass(value, Toolbox) and value is not Toolbox:
        return list(value().tools())
    raise TypeError(
        "register() takes a tool (made with @tool or a Tool subclass) or a Toolbox, "
        f"not {type(value).__name__}"
    )
