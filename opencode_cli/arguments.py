"""A call's arguments, checked, and described to the model when they are invalid.

:func:`validate` is the first step of the wrap (core spec §1): arguments that are not an object, or that
no validator should see (:func:`hostile_value`: nested too deeply, text that is not Unicode), are refused;
a plainly valid call is settled by the recorded facts of the tool's model (:mod:`opencode_cli.plain_args`);
the rest go to the pydantic model, or to ``jsonschema`` for a tool declared by JSON Schema. Each error
becomes a clause of the detail of :class:`~opencode_cli.errors.InvalidArgumentsError`
(:func:`describe_pydantic_errors`): the field's path, what is wrong, the type the schema expects and the
value received. :func:`is_flat_json` spots the common call that needs no walk at all.

:meth:`opencode_cli.contract.Tool.validate` calls :func:`validate`; the MCP client and ``mcp serve`` use
:func:`hostile_value` on what crosses their wire, the session :func:`is_flat_json` to copy arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import InvalidArgumentsError
from .plain_args import check as check_plain

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["MAX_DEPTH", "describe_pydantic_errors", "hostile_value", "is_flat_json", "validate"]

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


def validate(
    tool_id: str,
    args: Any,
    *,
    facts: Callable[[], dict[str, Any] | None] | None,
    model: Callable[[], type[BaseModel] | None],
    json_schema: Mapping[str, Any] | None,
    schema: Callable[[], Mapping[str, Any]],
    format_error: Callable[[Any], str] | None = None,
) -> Any:
    """The arguments of a call of ``tool_id``, validated: what the plain facts of its model give (``facts``
    loads them, see :mod:`opencode_cli.plain_args`), else an instance of ``model()`` (a pydantic model),
    else, when that is ``None``, a dict valid against ``json_schema`` (unknown keys dropped).

    Raises :class:`~opencode_cli.errors.InvalidArgumentsError` with one clause per problem; a pydantic
    error is worded by ``format_error`` when the tool has one, else against ``schema()``.
    """
    if type(args) is not dict and not isinstance(args, Mapping):  # a dict, nearly always: no ABC check
        raise InvalidArgumentsError(tool_id, f"(root): expected object, received {_brief(args)}")
    problem = hostile_value(args)
    if problem is not None:
        raise InvalidArgumentsError(tool_id, problem)
    known = facts() if facts is not None else None
    if known is not None:
        plain = check_plain(known, args)
        if plain is not None:
            return plain
    parameters = model()
    try:
        if parameters is not None:
            return _validate_model(tool_id, parameters, args, schema, format_error)
        return _validate_json(tool_id, json_schema or {}, dict(args))
    except RecursionError:
        raise InvalidArgumentsError(tool_id, "(root): nested too deeply") from None


def _validate_model(
    tool_id: str,
    model: type[BaseModel],
    args: Mapping[str, Any],
    schema: Callable[[], Mapping[str, Any]],
    format_error: Callable[[Any], str] | None,
) -> Any:
    try:
        return model.model_validate(dict(args))
    except ValueError as error:  # pydantic's ValidationError is one
        from pydantic import ValidationError

        if not isinstance(error, ValidationError):
            raise
        detail = (
            format_error(error)
            if format_error
            else describe_pydantic_errors(error.errors(include_url=False), schema())
        )
        raise InvalidArgumentsError(tool_id, detail) from None


def _validate_json(tool_id: str, schema: Mapping[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    import jsonschema

    properties = schema.get("properties")
    if isinstance(properties, Mapping) and not schema.get("additionalProperties"):
        args = {k: v for k, v in args.items() if k in properties}
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(validator_class(schema).iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        raise InvalidArgumentsError(tool_id, _describe_jsonschema_errors(errors, schema))
    return args


def describe_pydantic_errors(errors: Iterable[Mapping[str, Any]], schema: Mapping[str, Any] | None) -> str:
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


def _describe_jsonschema_errors(errors: Iterable[Any], schema: Mapping[str, Any]) -> str:
    """The clauses of :func:`describe_pydantic_errors` for ``jsonschema``'s errors (sorted by path)."""
    parts = []
    for error in errors:
        loc = list(error.absolute_path)
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else ""
            loc.append(missing)
            expected = _expected_type(schema, loc)
            parts.append(
                f"{_format_path(loc)}: Field required" + (f" (expected {expected})" if expected else "")
            )
            continue
        expected = _expected_type(schema, loc)
        received = _brief(error.instance)
        parts.append(
            f"{_format_path(loc)}: {error.message}"
            + (f" (expected {expected}, received {received})" if expected else f" (received {received})")
        )
    return "; ".join(parts)


def _format_path(loc: tuple[Any, ...] | list[Any]) -> str:
    return "".join(f"[{json.dumps(part)}]" for part in loc) or "(root)"


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
