"""The tool contract: :class:`Tool`, the :func:`tool` decorator, :func:`define`, and the wrap.

A plugin author declares a tool with ``@tool`` on a function, with a :class:`Tool` subclass (a tool with
state of its own), or with a :class:`~opencode_cli.toolbox.Toolbox` (a class whose methods are tools,
sharing a setup and a teardown). :func:`define` (a tool built on first use) is what the built-ins use.
Each produces the same :class:`~opencode_cli.toolspec.ToolSpec` (``tool.spec``), which is what every
listing, definition and wire format reads.

(The module is not called ``tool``: a submodule of that name would shadow the ``tool`` decorator that
``from opencode_cli import tool`` must give.)

Every call goes through :meth:`Tool.run`, which mirrors OpenCode's ``Tool.define`` wrap:

1. **validate** the raw arguments (unknown keys are dropped); on failure raise
   :class:`~opencode_cli.errors.InvalidArgumentsError` with the exact model-facing template;
2. **execute** (a sync function runs in a worker thread, a coroutine is awaited, ``ctx.abort`` cancels);
3. **truncate** the output, unless the tool already put a ``truncated`` key in its metadata.

What a call produces lives in :mod:`opencode_cli.results`, the checking of arguments (and the text a model
reads when they are invalid) in :mod:`opencode_cli.arguments`, and what a function's signature tells in
:mod:`opencode_cli.introspection`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from .arguments import validate as validate_arguments
from .errors import AbortedError, ToolError
from .introspection import (
    CallShape,
    call_shape,
    is_context_parameter,
    model_class,
    model_from_signature,
    sibling_description,
    source_line,
)
from .loops import until_aborted
from .toolspec import UNKNOWN, ToolSource, ToolSpec

__all__ = [
    "AnyTool", "LazyTool", "Tool", "define", "from_function", "in_worker", "lint", "tool", "unless_aborted",
]  # fmt: skip

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .context import ToolContext
    from .results import ToolResult


class _Declared:
    """What a :class:`Tool` and a :class:`LazyTool` share: an id, a source, the :class:`ToolSpec` made
    from them, and the one :meth:`copy`."""

    id: str = ""
    source: ToolSource = UNKNOWN

    def copy(self, **changes: Any) -> Self:
        """A shallow copy with some attributes replaced (a source stamps ``id`` and ``source``); the copy
        makes its own :attr:`spec`."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.__dict__.pop("_spec", None)
        for key, value in changes.items():
            setattr(clone, key, value)
        return clone

    @property
    def spec(self) -> ToolSpec:
        """What a model is told about this tool (made once; read by every listing and definition)."""
        spec = self.__dict__.get("_spec")
        if spec is None:
            spec = self.__dict__["_spec"] = self.spec_for(self.load)
        return spec

    def spec_for(self, loaded: Callable[[], Tool]) -> ToolSpec:
        """The spec, with ``loaded`` giving the built tool for what is not known without building it
        (the registry passes the tool it builds once per generation)."""
        raise NotImplementedError

    def load(self) -> Tool:
        """The tool, built."""
        raise NotImplementedError


class Tool(_Declared):
    """A tool ready to run.

    Build one with the :func:`tool` decorator, or subclass it and override :meth:`execute` (class
    attributes ``id``, ``description`` and ``parameters`` or ``json_schema`` declare it).
    ``parameters`` is a pydantic model (validation + schema), or ``parameters_from`` a callable that
    makes it on first use; ``json_schema`` is an explicit JSON Schema used instead (validated with
    ``jsonschema``).
    """

    description: str = ""
    json_schema: dict[str, Any] | None = None
    _plain: Callable[[], dict[str, Any] | None] | None = None
    """Loads the facts of the parameters model when they are known ahead (:mod:`opencode_cli.plain_args`)."""

    def __init__(
        self,
        id: str | None = None,
        description: str | None = None,
        *,
        parameters: type[BaseModel] | None = None,
        json_schema: dict[str, Any] | None = None,
        execute: Callable[..., Any] | None = None,
        source: ToolSource | None = None,
        format_validation_error: Callable[[Any], str] | None = None,
        handles_abort: bool = False,
        blocking: bool = True,
        parameters_from: Callable[[], type[BaseModel]] | None = None,
    ) -> None:
        if id is not None:
            self.id = id
        if description is not None:
            self.description = description
        if parameters is not None:
            self.parameters = parameters
        elif parameters_from is not None:
            self.__dict__["_make_parameters"] = parameters_from
        if json_schema is not None:
            self.json_schema = json_schema
        self.source = source or UNKNOWN
        self._function = execute
        self._coroutine = execute is not None and inspect.iscoroutinefunction(execute)
        self._format_validation_error = format_validation_error
        self.handles_abort = handles_abort
        """The tool answers ``ctx.abort`` itself (e.g. with the output so far) instead of being cancelled."""
        self.blocking = blocking
        """A plain (not ``async``) function runs in a worker thread unless it declares it never blocks
        (``@tool(blocking=False)``: quick, no I/O), in which case it is called on the event loop."""
        self._call_shape: CallShape | None = None
        if execute is not None and parameters_from is None:  # else: at the first call (see _shape)
            self._call_shape = call_shape(execute, self.parameters)
        if parameters_from is None and self.parameters is None and self.json_schema is None:
            self.json_schema = {"type": "object", "properties": {}}
        self._schema_cache: dict[str, Any] | None = None
        self.untyped: list[str] = []
        """Parameters taken from the signature without a type annotation (see :func:`lint`)."""

    def __repr__(self) -> str:
        return f"<Tool {self.id!r} ({self.source.describe()})>"

    @property
    def parameters(self) -> type[BaseModel] | None:
        """The parameters as a pydantic model, or ``None`` (a JSON-Schema tool). One given as
        ``parameters_from`` is made on first use, so that listing a tool imports no pydantic."""
        make = self.__dict__.pop("_make_parameters", None)
        if make is not None:
            self.__dict__["_parameters"] = make()
        return self.__dict__.get("_parameters")

    @parameters.setter
    def parameters(self, model: type[BaseModel] | None) -> None:
        self.__dict__.pop("_make_parameters", None)
        self.__dict__["_parameters"] = model

    def load(self) -> Tool:
        """A tool is already loaded (see :class:`LazyTool`)."""
        return self

    def spec_for(self, loaded: Callable[[], Tool]) -> ToolSpec:
        """The spec of this tool: its id, description, schema and source."""
        return ToolSpec(self.id, lambda: self.description, self.schema, self.source)

    # -- schema and validation -------------------------------------------------------------------------

    def schema(self) -> dict[str, Any]:
        """The parameters as JSON Schema, normalised as OpenCode sends them (cached)."""
        if self._schema_cache is None:
            from . import schema as schema_module

            if self.json_schema is not None:
                self._schema_cache = dict(self.json_schema)
            else:
                assert self.parameters is not None
                self._schema_cache = schema_module.from_model(self.parameters)
        return self._schema_cache

    def validate(self, args: Any) -> Any:
        """Validated arguments: a model instance, or a dict for JSON-Schema tools
        (:func:`opencode_cli.arguments.validate`).

        Raises :class:`~opencode_cli.errors.InvalidArgumentsError` with the model-facing template.
        """
        return validate_arguments(
            self.id,
            args,
            facts=self._plain,
            model=lambda: self.parameters,
            json_schema=self.json_schema,
            schema=self.schema,
            format_error=self._format_validation_error,
        )

    # -- execution -------------------------------------------------------------------------------------

    async def execute(self, params: Any, ctx: ToolContext) -> Any:
        """Run the tool on validated parameters. Subclasses override this; the default calls the function."""
        if self._function is None:
            raise ToolError(f"The {self.id} tool has nothing to execute.")
        return await self._invoke(self._function, params, ctx)

    async def _invoke(self, function: Callable[..., Any], params: Any, ctx: ToolContext) -> Any:
        """Call ``function`` (the tool's function, or one of the same signature) on validated parameters:
        a coroutine function awaited, a plain one in a worker thread (or inline when not blocking)."""
        kind, ctx_name, names = self._call_shape or self._shape()
        kwargs: dict[str, Any] = {}
        if kind == "model":
            call_args: tuple[Any, ...] = (params,)
        else:
            call_args = ()
            values = params if isinstance(params, Mapping) else {n: getattr(params, n) for n in names}
            kwargs = {n: values[n] for n in names if n in values}
        if ctx_name is not None:
            kwargs[ctx_name] = ctx
        if self._coroutine:
            return await function(*call_args, **kwargs)
        if self.blocking:
            result = await in_worker(ctx, function, *call_args, **kwargs)
        else:
            result = function(*call_args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _shape(self) -> CallShape:
        """The call shape of a tool whose model is made on first use: from its recorded facts when it has
        them (the model need not be made), else from the model."""
        assert self._function is not None
        facts = self._plain() if self._plain is not None else None
        if facts is not None:
            self._call_shape = call_shape(self._function, None, list(facts["fields"]))
        else:
            self._call_shape = call_shape(self._function, self.parameters)
        return self._call_shape

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """The wrap: validate, execute (abortable), then truncate unless the tool already did."""
        import asyncio

        from .results import as_result, unicode_text  # the call path's: a listing never loads them

        params = self.validate(args)
        ctx.loop = asyncio.get_running_loop()
        if ctx.tool is None:
            ctx.tool = self.id
        if ctx.abort.aborted:
            raise AbortedError()
        if self.handles_abort:
            result = as_result(await self.execute(params, ctx))
        else:
            result = as_result(await until_aborted(self.execute(params, ctx), ctx.abort))
        result.output, result.title = unicode_text(result.output), unicode_text(result.title)
        if "truncated" in result.metadata:
            return result
        cut = ctx.truncator.output(result.output, task_capable=ctx.task_capable)
        result.output = cut.content
        result.metadata["truncated"] = cut.truncated
        if cut.output_path is not None:
            result.metadata["outputPath"] = cut.output_path
        return result


async def in_worker(ctx: ToolContext, function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` in one of the project's worker threads (a warm thread per call); an
    abandoned call (``ctx.abort`` fired and the thread did not return) raises :class:`AbortedError`."""
    work = functools.partial(_stop_iteration_as_error, function, *args, **kwargs)
    try:
        return await ctx.project.workers.run(work, abort=ctx.abort)
    except Exception as error:
        from .workers import Abandoned  # imported when something went wrong, not on every call

        if isinstance(error, Abandoned):
            raise AbortedError(str(error)) from None
        raise


def _stop_iteration_as_error(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` in a worker thread. A ``StopIteration`` it lets out becomes a
    ``RuntimeError``, as it does in a coroutine: a future cannot carry one, and the call would never end."""
    try:
        return function(*args, **kwargs)
    except StopIteration as error:
        raise RuntimeError("the tool raised StopIteration") from error


async def unless_aborted(work: Any, ctx: ToolContext) -> Any:
    """Await ``work``; cancel it and raise :class:`AbortedError` if ``ctx.abort`` fires first
    (:func:`~opencode_cli.loops.until_aborted`, the helper the run loop uses too)."""
    return await until_aborted(work, ctx.abort)


def lint(tool: Tool) -> list[str]:
    """What a model is not told about ``tool``, one line each naming the file and line: a missing
    description, a parameter without a type (the model is shown that it may be anything)."""
    function = getattr(tool, "_function", None)
    where = source_line(function if function is not None else type(tool))
    found = []
    if not tool.description.strip():
        found.append(
            f"{where}: tool '{tool.id}' has no description, so the model is not told what it does "
            "(give it a docstring, a .txt file named after it, or description=...)"
        )
    for name in getattr(tool, "untyped", []):
        found.append(
            f"{where}: tool '{tool.id}': parameter '{name}' has no type, so the model may send anything "
            f"(annotate it, e.g. {name}: str)"
        )
    return found


def tool(
    function: Callable[..., Any] | None = None,
    *,
    id: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | None = None,
    json_schema: dict[str, Any] | None = None,
    blocking: bool = True,
) -> Any:
    """Make a :class:`Tool` from a function; use bare (``@tool``) or with options (``@tool(id="x")``).

    Parameters come from, in order: ``json_schema`` (explicit JSON Schema; the function gets the keys as
    keyword arguments), ``parameters`` (a pydantic model), a single parameter annotated with a pydantic
    model, or the function's signature (type hints and ``Field(description=...)`` defaults). A parameter
    named ``ctx`` or annotated :class:`ToolContext` is injected and never shown to the model.

    The description is ``description``, else a ``.txt`` file beside the module named after the tool
    (the function name, or the module name for a function called ``default``), else the docstring.

    A plain function runs in a worker thread, so a slow one never stalls other calls; one that is quick
    and never waits (no I/O, no sleeping) may say ``blocking=False`` to be called directly on the event
    loop, which saves the thread hop.
    """

    def build(fn: Callable[..., Any]) -> Tool:
        return from_function(
            fn,
            id=id,
            description=description,
            parameters=parameters,
            json_schema=json_schema,
            blocking=blocking,
        )

    if function is not None:
        return build(function)
    return build


def from_function(
    fn: Callable[..., Any],
    *,
    id: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | None = None,
    json_schema: dict[str, Any] | None = None,
    blocking: bool = True,
    cls: type[Tool] | None = None,
) -> Tool:
    """What :func:`tool` makes of ``fn``, as an instance of ``cls`` (default :class:`Tool`; a subclass
    whose ``__init__`` takes :class:`Tool`'s arguments)."""
    name = id or fn.__name__
    model = parameters
    only = None
    from_signature = None
    if json_schema is None and model is None:
        hints = inspect.get_annotations(fn, eval_str=True)
        candidates = [
            p for p in inspect.signature(fn).parameters.values() if not is_context_parameter(p, hints)
        ]
        only = model_class(hints.get(candidates[0].name)) if len(candidates) == 1 else None
        model = only
        if only is None:
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in candidates):
                raise TypeError(
                    f"tool {name!r}: *args and **kwargs parameters cannot be described to a model"
                )
            from_signature = functools.partial(model_from_signature, fn, name)
    names = [name, fn.__name__]
    if fn.__name__ == "default":
        names.append(Path(inspect.getfile(fn)).stem)
    text = description
    if text is None:
        text = sibling_description(fn, names)
    if text is None:
        text = inspect.cleandoc(fn.__doc__) if fn.__doc__ else ""
    built = (cls or Tool)(
        name,
        text,
        parameters=model,
        json_schema=json_schema,
        execute=fn,
        blocking=blocking,
        parameters_from=from_signature,
    )
    if from_signature is not None:
        hints = inspect.get_annotations(fn, eval_str=True)
        built.untyped = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.name not in hints and not is_context_parameter(p, hints)
        ]
    return built


class LazyTool(_Declared):
    """A tool that is imported and built only when first needed (see :func:`define`)."""

    def __init__(
        self,
        id: str,
        init: Callable[[], Any] | str,
        description: str | Path | Callable[[], str] | None = None,
        source: ToolSource | None = None,
        schema: Callable[[], dict[str, Any] | None] | None = None,
        plain: Callable[[], dict[str, Any] | None] | None = None,
    ) -> None:
        self.id = id
        self._init = init
        self._description = description
        self._schema = schema
        self._plain = plain
        self.source = source or UNKNOWN

    def __repr__(self) -> str:
        return f"<LazyTool {self.id!r} ({self.source.describe()})>"

    def schema(self) -> dict[str, Any]:
        """The parameters as JSON Schema: the one given to :func:`define` when it has one (no import),
        else a built tool's."""
        known = self.known_schema()
        return known if known is not None else self.load().schema()

    def known_schema(self) -> dict[str, Any] | None:
        """The JSON Schema given to :func:`define` (``None`` when it was not, or does not know it)."""
        return self._schema() if self._schema is not None else None

    @property
    def description(self) -> str:
        """The description, read without building the tool when it was given to :func:`define`."""
        known = self.known_description()
        return known if known is not None else self.load().description

    def known_description(self) -> str | None:
        """The description given to :func:`define` (a ``.txt`` file is read once), or ``None``."""
        described = self._description
        if isinstance(described, Path):
            self._description = described = described.read_text(encoding="utf-8")
        if isinstance(described, str):
            return described
        if callable(described):
            return described()
        return None

    def spec_for(self, loaded: Callable[[], Tool]) -> ToolSpec:
        """The spec: the description and schema given to :func:`define`, each from ``loaded`` (the built
        tool) when it was not given."""

        def describe() -> str:
            known = self.known_description()
            return known if known is not None else loaded().description

        def parameters() -> dict[str, Any]:
            known = self.known_schema()
            return known if known is not None else loaded().schema()

        return ToolSpec(self.id, describe, parameters, self.source)

    def load(self) -> Tool:
        """Build a fresh :class:`Tool` (each call gives a new object, as OpenCode's ``init()`` does). The
        registry builds one per generation and shares it between calls
        (:meth:`~opencode_cli.registry.ToolEntry.loaded`)."""
        init = self._init
        if isinstance(init, str):
            module_name, _, attribute = init.partition(":")
            init = getattr(importlib.import_module(module_name), attribute)
        built: object = init()  # whatever the plugin's init returned: checked below
        if isinstance(built, Tool | LazyTool):
            loaded = built.load()
            result = loaded.copy(id=self.id, source=self.source)
        elif isinstance(built, Mapping):
            result = Tool(
                self.id,
                built.get("description"),
                parameters=built.get("parameters"),
                json_schema=built.get("json_schema"),
                execute=built["execute"],
                source=self.source,
                format_validation_error=built.get("format_validation_error"),
                handles_abort=bool(built.get("handles_abort", False)),
                parameters_from=built.get("parameters_from"),
            )
        else:
            raise TypeError(
                f"define({self.id!r}): init returned {type(built).__name__}, not a tool or mapping"
            )
        if self._description is not None and not result.description:
            result.description = self.description
        if self._plain is not None and result.json_schema is None:
            result._plain = self._plain
        return result


def define(
    id: str,
    init: Callable[[], Any] | str,
    *,
    description: str | Path | Callable[[], str] | None = None,
    schema: Callable[[], dict[str, Any] | None] | None = None,
    plain: Callable[[], dict[str, Any] | None] | None = None,
) -> LazyTool:
    """Declare a tool whose body is built on first use, as OpenCode's ``Tool.define(id, init)``.

    ``init`` is a zero-argument callable (or a ``"module:attribute"`` string naming one, imported lazily)
    returning a :class:`Tool` or a mapping with ``description``, ``parameters`` (pydantic model; or
    ``parameters_from``, a callable making it on first use, and ``execute`` then takes its instance) or
    ``json_schema``, ``execute`` and optionally ``format_validation_error``. ``description`` (text, a
    path to a ``.txt`` file, or a callable) lets listings show the tool without importing it; ``schema``
    (a callable giving the JSON Schema the built tool has, or ``None`` when it does not know) lets them
    show its parameters without importing it either; ``plain`` (a callable giving the facts of its
    parameters model, or ``None``: see :mod:`opencode_cli.plain_args`) lets a plainly valid call be
    checked without making the model.
    """
    return LazyTool(id, init, description, schema=schema, plain=plain)


#: A tool as a source registers it: built (:class:`Tool`) or built on first use (:class:`LazyTool`).
AnyTool = Tool | LazyTool
