"""What a Python function tells about the tool it implements, read from the function itself.

Which parameter takes the :class:`~opencode_cli.context.ToolContext` (:func:`is_context_parameter`), the
pydantic model its signature makes (:func:`model_from_signature`), how a call passes the validated
arguments to it (:func:`call_shape`), the ``.txt`` description beside its module
(:func:`sibling_description`) and where it is defined (:func:`source_line`). The ``@tool`` decorator
(:func:`opencode_cli.contract.from_function`) and :class:`opencode_cli.contract.Tool` read a function
through these; the plugin manager names a hook implementation's place with :func:`source_line`.

Nothing here imports pydantic until a model is made.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "CallShape",
    "call_shape",
    "is_context_parameter",
    "model_class",
    "model_from_signature",
    "sibling_description",
    "source_line",
]

#: How to call a tool's function: with the model instance (``"model"``) or with keyword arguments
#: (``"kwargs"``), the name of the parameter that takes the context (or ``None``), and the other names.
CallShape = tuple[Literal["model", "kwargs"], str | None, list[str]]


def is_context_parameter(param: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    """Whether ``param`` takes the call's context: annotated :class:`ToolContext`, or named ``ctx``
    without an annotation (or annotated ``Any``). ``hints`` are the function's evaluated annotations."""
    annotation = hints.get(param.name, param.annotation)
    context = sys.modules.get(f"{__package__}.context")  # no annotation is its class before it is loaded
    if (context is not None and annotation is context.ToolContext) or annotation == "ToolContext":
        return True
    return param.name == "ctx" and annotation in (inspect.Parameter.empty, Any)


def model_class(annotation: Any) -> type[BaseModel] | None:
    """``annotation`` when it is a pydantic model class, else ``None`` (without importing pydantic)."""
    if not isinstance(annotation, type):
        return None
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:  # no class can be a pydantic model before pydantic is imported
        return None
    return annotation if issubclass(annotation, pydantic.BaseModel) else None


def call_shape(function: Callable[..., Any], model: Any, fields: list[str] | None = None) -> CallShape:
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
        if is_context_parameter(param, hints):
            ctx_name = param.name
        else:
            names.append(param.name)
    if len(names) == 1 and (model is not None or fields is not None):
        # ``execute(params: Model)``, or OpenCode's ``execute(args, ctx)`` with no annotation: the whole model
        annotated = model_class(hints.get(names[0]))
        known = fields if fields is not None else getattr(model, "model_fields", {})
        if (annotated is not None and model is not None and issubclass(model, annotated)) or (
            annotated is None and names[0] not in known
        ):
            return "model", ctx_name, names
    return "kwargs", ctx_name, names


def model_from_signature(function: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of ``function``'s parameters (``ctx`` left out); unknown keys are ignored."""
    from pydantic import ConfigDict, create_model

    signature = inspect.signature(function)
    hints = inspect.get_annotations(function, eval_str=True)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if is_context_parameter(param, hints):
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    return create_model(f"{name}_parameters", __config__=ConfigDict(extra="ignore"), **fields)


def sibling_description(function: Callable[..., Any], names: list[str]) -> str | None:
    """The text of the first ``NAME.txt`` beside ``function``'s module, for each of ``names``, or ``None``."""
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
