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
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import INTERRUPTED as INTERRUPTED
from .errors import AbortedError as AbortedError
from .errors import InvalidArgumentsError, ToolError
from .plain_args import check as check_plain
from .toolspec import UNKNOWN, ToolSource, ToolSpec

__all__ = ["AnyTool", "LazyTool", "Tool", "ToolSource", "ToolSpec", "define", "tool"]

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .context import ToolContext


@dataclass
class Attachment:
    """A file handed to the model with a result (``url`` is usually a ``data:`` URL)."""

    mime: str
    url: str
    filename: str | None = None
    type: Literal["file"] = "file"
    id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON shape; keys that are ``None`` are left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class ToolResult:
    """What a tool call produces: the text the model sees, a title, metadata and attachments."""

    output: str = ""
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape (``title``, ``metadata``, ``output``, ``attachments``)."""
        return {
            "title": self.title,
            "metadata": self.metadata,
            "output": self.output,
            "attachments": [a.as_dict() for a in self.attachments],
        }


def _to_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, str):
        return ToolResult(output=value)
    if isinstance(value, Mapping) and "output" in value:
        attachments = [
            a if isinstance(a, Attachment) else Attachment(**a) for a in value.get("attachments") or []
        ]
        return ToolResult(
            output=str(value["output"]),
            title=str(value.get("title") or ""),
            metadata=dict(value.get("metadata") or {}),
            attachments=attachments,
        )
    return ToolResult(output=json.dumps(value, indent=2, default=str, ensure_ascii=False))


def _format_path(loc: tuple[Any, ...] | list[Any]) -> str:
    return "".join(f"[{json.dumps(part)}]" for part in loc) or "(root)"


#: How deep arguments may nest before they are refused (far beyond any real tool's schema).
MAX_DEPTH = 100


#: The types of a JSON scalar, exactly (a subclass may serialise otherwise).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def is_flat_json(value: Any) -> bool:
    """Whether ``value`` is a dict of ASCII string keys to JSON scalars with ASCII text: what most calls
    send, and what needs no walk (no nesting, no lone surrogate) and no JSON round trip to be copied."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(item)
        if kind not in _SCALARS or (kind is str and not item.isascii()):
            return False
        if kind is float and item - item != 0:  # inf or nan: JSON would not give them back as they are
            return False
    return True


def hostile_value(value: Any) -> str | None:
    """Why ``value`` (a call's arguments) cannot be validated at all, or ``None``: nesting deeper than
    :data:`MAX_DEPTH`, or a string (or key) holding a lone surrogate, which is not Unicode text."""
    if is_flat_json(value):
        return None
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, loc = stack.pop()
        if len(loc) > MAX_DEPTH:
            return f"{_format_path(loc[:3])}…: nested deeper than {MAX_DEPTH} levels"
        if isinstance(node, str):
            if _has_surrogate(node):
                return f"{_format_path(loc)}: a string with a lone surrogate is not valid Unicode text"
        elif isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(key, str) and _has_surrogate(key):
                    return f"{_format_path(loc)}: a key with a lone surrogate is not valid Unicode text"
                stack.append((item, (*loc, key)))
        elif isinstance(node, list | tuple):
            stack.extend((item, (*loc, index)) for index, item in enumerate(node))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _brief(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)[: limit * 2] if not isinstance(value, list | dict) else type(value).__name__
    if _has_surrogate(text):
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expected_type(schema: Mapping[str, Any] | None, loc: tuple[Any, ...] | list[Any]) -> str | None:
    """The JSON type the schema expects at ``loc``, e.g. ``"integer"`` or ``"string or null"``."""
    node: Any = schema
    for part in loc:
        if not isinstance(node, Mapping):
            return None
        if isinstance(part, int):
            node = node.get("items")
        else:
            props = node.get("properties") or {}
            if part not in props:
                branches = [
                    b
                    for b in node.get("anyOf", [])
                    if isinstance(b, Mapping) and part in (b.get("properties") or {})
                ]
                node = branches[0]["properties"][part] if branches else None
            else:
                node = props[part]
    return _type_name(node)


def _type_name(node: Any) -> str | None:
    if not isinstance(node, Mapping):
        return None
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v) for v in node["enum"])
    kind = node.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return " or ".join(kind)
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list):
        names = [n for n in (_type_name(b) for b in branches) if n]
        return " or ".join(names) if names else None
    return None


def describe_pydantic_errors(errors: list[dict[str, Any]], schema: Mapping[str, Any] | None) -> str:
    """One clause per error: the field's path, what is wrong, the expected type, the input received."""
    parts = []
    for error in errors:
        loc = tuple(error.get("loc") or ())
        expected = _expected_type(schema, loc)
        where = _format_path(loc)
        if error.get("type") == "missing":
            parts.append(f"{where}: Field required" + (f" (expected {expected})" if expected else ""))
            continue
        clause = f"{where}: {error.get('msg', 'invalid value')}"
        if expected:
            clause += f" (expected {expected}, received {_brief(error.get('input'))})"
        else:
            clause += f" (received {_brief(error.get('input'))})"
        parts.append(clause)
    return "; ".join(parts)


def _ctx_parameter(param: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    annotation = hints.get(param.name, param.annotation)
    from .context import ToolContext

    if annotation is ToolContext or annotation == "ToolContext":
        return True
    return param.name == "ctx" and annotation in (inspect.Parameter.empty, Any)


def _model_class(annotation: Any) -> type[BaseModel] | None:
    if not isinstance(annotation, type):
        return None
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:  # no class can be a pydantic model before pydantic is imported
        return None
    return annotation if issubclass(annotation, pydantic.BaseModel) else None


class _Declared:
    """What a :class:`Tool` and a :class:`LazyTool` share: an id, a source, the :class:`ToolSpec` made
    from them, and the one :meth:`copy`."""

    id: str = ""
    source: ToolSource = UNKNOWN

    def copy(self, **changes: Any) -> Any:
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
        self._call_shape: tuple[str, str | None, list[str]] | None = None
        if execute is not None and parameters_from is None:  # else: at the first call (see _shape)
            self._call_shape = _call_shape(execute, self.parameters)
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
        """Validated arguments: a model instance, or a dict for JSON-Schema tools.

        Raises :class:`InvalidArgumentsError` with the model-facing template.
        """
        if not isinstance(args, Mapping):
            raise InvalidArgumentsError(self.id, f"(root): expected object, received {_brief(args)}")
        problem = hostile_value(args)
        if problem is not None:
            raise InvalidArgumentsError(self.id, problem)
        facts = self._plain() if self._plain is not None else None
        if facts is not None:
            plain = check_plain(facts, args)
            if plain is not None:
                return plain
        parameters = self.parameters
        if parameters is not None:
            try:
                return parameters.model_validate(dict(args))
            except RecursionError:
                raise InvalidArgumentsError(self.id, "(root): nested too deeply") from None
            except ValueError as error:  # pydantic's ValidationError is one
                from pydantic import ValidationError

                if not isinstance(error, ValidationError):
                    raise
                detail = (
                    self._format_validation_error(error)
                    if self._format_validation_error
                    else describe_pydantic_errors(error.errors(include_url=False), self.schema())
                )
                raise InvalidArgumentsError(self.id, detail) from None
        try:
            return self._validate_json(dict(args))
        except RecursionError:
            raise InvalidArgumentsError(self.id, "(root): nested too deeply") from None

    def _validate_json(self, args: dict[str, Any]) -> dict[str, Any]:
        import jsonschema

        schema = self.json_schema or {}
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and not schema.get("additionalProperties"):
            args = {k: v for k, v in args.items() if k in properties}
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        errors = sorted(validator_class(schema).iter_errors(args), key=lambda e: list(e.absolute_path))
        if errors:
            parts = []
            for error in errors:
                loc = list(error.absolute_path)
                if error.validator == "required":
                    missing = error.message.split("'")[1] if "'" in error.message else ""
                    loc.append(missing)
                    expected = _expected_type(schema, loc)
                    parts.append(
                        f"{_format_path(loc)}: Field required"
                        + (f" (expected {expected})" if expected else "")
                    )
                    continue
                expected = _expected_type(schema, loc)
                received = _brief(error.instance)
                parts.append(
                    f"{_format_path(loc)}: {error.message}"
                    + (
                        f" (expected {expected}, received {received})"
                        if expected
                        else f" (received {received})"
                    )
                )
            raise InvalidArgumentsError(self.id, "; ".join(parts))
        return args

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
            work = functools.partial(_stop_iteration_as_error, function, *call_args, **kwargs)
            from .workers import Abandoned

            try:  # the project's workers: a warm thread per call
                result = await ctx.project.workers.run(work, abort=ctx.abort)
            except Abandoned as abandoned:
                raise AbortedError(str(abandoned)) from None
        else:
            result = function(*call_args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _shape(self) -> tuple[str, str | None, list[str]]:
        """The call shape of a tool whose model is made on first use: from its recorded facts when it has
        them (the model need not be made), else from the model."""
        assert self._function is not None
        facts = self._plain() if self._plain is not None else None
        if facts is not None:
            self._call_shape = _call_shape(self._function, None, list(facts["fields"]))
        else:
            self._call_shape = _call_shape(self._function, self.parameters)
        return self._call_shape

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """The wrap: validate, execute (abortable), then truncate unless the tool already did."""
        import asyncio

        params = self.validate(args)
        ctx.loop = asyncio.get_running_loop()
        if ctx.tool is None:
            ctx.tool = self.id
        if ctx.abort.aborted:
            raise AbortedError()
        if self.handles_abort:
            result = _to_result(await self.execute(params, ctx))
        else:
            result = _to_result(await unless_aborted(self.execute(params, ctx), ctx))
        result.output, result.title = unicode_text(result.output), unicode_text(result.title)
        if "truncated" in result.metadata:
            return result
        cut = ctx.truncator.output(result.output, task_capable=ctx.task_capable)
        result.output = cut.content
        result.metadata["truncated"] = cut.truncated
        if cut.output_path is not None:
            result.metadata["outputPath"] = cut.output_path
        return result


def unicode_text(text: str) -> str:
    """``text`` as valid Unicode, what every wire can carry: a file name that is not UTF-8 (a lone
    surrogate for each such byte, as the OS gives it) shows U+FFFD in each byte's place, as ``glob``
    lists it; any other lone surrogate becomes U+FFFD too."""
    if not isinstance(text, str) or text.isascii() or not _has_surrogate(text):
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


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
    from .loops import until_aborted

    return await until_aborted(work, ctx.abort)


def _call_shape(
    function: Callable[..., Any], model: Any, fields: list[str] | None = None
) -> tuple[str, str | None, list[str]]:
    """How to call ``function``: with the model instance or with keyword arguments, and where ctx goes.
    ``fields`` names the model's fields when the model itself is not at hand."""
    signature = inspect.signature(function)
    try:
        hints = inspect.get_annotations(function, eval_str=True)
    except Exception:
        hints = {}
    ctx_name = None
    names = []
    for param in signature.parameters.values():
        if _ctx_parameter(param, hints):
            ctx_name = param.name
        else:
            names.append(param.name)
    if len(names) == 1 and (model is not None or fields is not None):
        # ``execute(params: Model)``, or OpenCode's ``execute(args, ctx)`` with no annotation: the whole model
        annotated = _model_class(hints.get(names[0]))
        known = fields if fields is not None else getattr(model, "model_fields", {})
        if (annotated is not None and model is not None and issubclass(model, annotated)) or (
            annotated is None and names[0] not in known
        ):
            return "model", ctx_name, names
    return "kwargs", ctx_name, names


def _model_from_signature(function: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of ``function``'s parameters (``ctx`` left out); unknown keys are ignored."""
    from pydantic import ConfigDict, create_model

    signature = inspect.signature(function)
    hints = inspect.get_annotations(function, eval_str=True)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if _ctx_parameter(param, hints):
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    return create_model(f"{name}_parameters", __config__=ConfigDict(extra="ignore"), **fields)


def _sibling_description(function: Callable[..., Any], names: list[str]) -> str | None:
    try:
        module_file = inspect.getfile(inspect.unwrap(function))
    except TypeError:
        return None
    folder = Path(module_file).parent
    for name in names:
        candidate = folder / f"{name}.txt"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return None


def source_line(function: Any) -> str:
    """``file:line`` where a function or class is defined; ``<unknown>`` when Python cannot tell."""
    target = inspect.unwrap(function) if inspect.isfunction(function) else function
    try:
        path = inspect.getsourcefile(target) or inspect.getfile(target)
        code = getattr(target, "__code__", None)
        line = code.co_firstlineno if code is not None else inspect.getsourcelines(target)[1]
    except (TypeError, OSError):
        return "<unknown>"
    return f"{path}:{line}"


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
        candidates = [p for p in inspect.signature(fn).parameters.values() if not _ctx_parameter(p, hints)]
        only = _model_class(hints.get(candidates[0].name)) if len(candidates) == 1 else None
        model = only
        if only is None:
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in candidates):
                raise TypeError(
                    f"tool {name!r}: *args and **kwargs parameters cannot be described to a model"
                )
            from_signature = functools.partial(_model_from_signature, fn, name)
    names = [name, fn.__name__]
    if fn.__name__ == "default":
        names.append(Path(inspect.getfile(fn)).stem)
    text = description
    if text is None:
        text = _sibling_description(fn, names)
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
            if p.name not in hints and not _ctx_parameter(p, hints)
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
        built = init()
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
