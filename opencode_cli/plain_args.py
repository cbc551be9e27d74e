"""Plain arguments: a call whose arguments are plainly valid, checked without pydantic.

Most calls a model makes are plainly valid: every required key present, each value of exactly the type its
field declares, within its bounds. Validating those needs nothing of pydantic, whose import alone costs
more than the rest of a cold ``opencode tools run``. So a tool may carry the *facts* of its parameters
model (recorded ahead of time, see :mod:`opencode_cli.tools._schemas`), and :func:`check` decides from
them alone. It answers only when the answer is sure: the same values the model would produce, or
``None``, and then the model itself validates (and words any error, so the text a model reads never
depends on which path was taken).

Facts (:func:`facts_of`, made from a live model) are plain JSON::

    {"extra": "ignore", "fields": {"filePath": {"types": ["string"], "required": true},
                                   "offset": {"types": ["integer"], "nullable": true, "default": null,
                                              "minimum": 0, "checked": true}}}

A field marked ``checked`` has a validator of its own: a call that gives it is left to the model. A model
whose fields are anything but strings, integers and booleans (optionally ``None``, a ``Literal`` of
strings, with ``ge``/``gt``/``le``/``lt`` and length bounds) has no facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: JSON type names and the Python type a plainly valid value has (exactly: no subclass, no ``bool`` for int).
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool}
_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "minLength", "maxLength")


class PlainArguments:
    """Validated arguments read as attributes, as a tool reads its parameters model's instance."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        inside = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"PlainArguments({inside})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlainArguments) and other.__dict__ == self.__dict__

    __hash__ = None  # type: ignore[assignment]  # unhashable (compared by value); typeshed says a method


def check(facts: Mapping[str, Any], args: Mapping[str, Any]) -> PlainArguments | None:
    """``args`` validated by ``facts``, or ``None`` when they are not plainly valid (the model decides)."""
    if facts.get("extra") != "ignore":
        return None
    values: dict[str, Any] = {}
    for name, field in facts["fields"].items():
        if name not in args:
            if field.get("required"):
                return None
            values[name] = field.get("default")
            continue
        value = args[name]
        if field.get("checked"):
            return None
        if value is None:
            if not field.get("nullable"):
                return None
        elif not _plain(value, field):
            return None
        values[name] = value
    return PlainArguments(values)


def _plain(value: Any, field: Mapping[str, Any]) -> bool:
    kind = type(value)
    if not any(_PYTHON_TYPES.get(name) is kind for name in field["types"]):
        return False
    if "enum" in field and value not in field["enum"]:
        return False
    size = len(value) if kind is str else value
    if kind is bool and any(bound in field for bound in _BOUNDS):
        return False
    return (
        ("minimum" not in field or size >= field["minimum"])
        and ("exclusiveMinimum" not in field or size > field["exclusiveMinimum"])
        and ("maximum" not in field or size <= field["maximum"])
        and ("exclusiveMaximum" not in field or size < field["exclusiveMaximum"])
        and ("minLength" not in field or size >= field["minLength"])
        and ("maxLength" not in field or size <= field["maxLength"])
    )


# -- recording (imports pydantic) ----------------------------------------------------------------------


def facts_of(model: Any) -> dict[str, Any] | None:
    """The facts of a pydantic model class, or ``None`` when it has a field they cannot say all of."""
    import types
    import typing

    import annotated_types

    config = model.model_config
    if config.get("extra", "ignore") != "ignore" or _has_model_validators(model):
        return None
    changing = ("strict", "str_strip_whitespace", "str_to_lower", "str_to_upper", "validate_default")
    if any(config.get(key) for key in changing):
        return None
    validated = _validated_fields(model)
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.alias not in (None, name) or info.validation_alias is not None or info.default_factory:
            return None
        if info.validate_default:
            return None
        annotation = info.annotation
        nullable = False
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            members = [m for m in typing.get_args(annotation) if m is not type(None)]
            nullable = len(members) < len(typing.get_args(annotation))
            if len(members) != 1:
                return None
            annotation = members[0]
        described = _describe_type(annotation)
        if described is None:
            return None
        field: dict[str, Any] = dict(described)
        if nullable:
            field["nullable"] = True
        if info.is_required():
            field["required"] = True
        else:
            default = info.default
            if not (default is None or type(default) in (str, int, bool)):
                return None
            field["default"] = default
        for item in info.metadata:
            bound = _describe_bound(item, annotated_types)
            if bound is None:
                return None
            field.update(bound)
        if field["types"] == ["string"] and any(b in field for b in _BOUNDS[:4]):
            return None  # numeric bounds on a string: not something a plain check reads
        if field["types"] != ["string"] and any(b in field for b in ("minLength", "maxLength")):
            return None
        if name in validated:
            field["checked"] = True
        fields[name] = field
    return {"extra": "ignore", "fields": fields}


def _describe_type(annotation: Any) -> dict[str, Any] | None:
    import typing

    from pydantic import StrictBool, StrictInt, StrictStr

    plain = {str: "string", int: "integer", bool: "boolean"}
    strict = {StrictStr: "string", StrictInt: "integer", StrictBool: "boolean"}
    if annotation in plain:
        return {"types": [plain[annotation]]}
    if annotation in strict:
        return {"types": [strict[annotation]]}
    if typing.get_origin(annotation) is typing.Literal:
        choices = list(typing.get_args(annotation))
        if choices and all(type(choice) is str for choice in choices):
            return {"types": ["string"], "enum": choices}
    return None


def _describe_bound(item: Any, annotated_types: Any) -> dict[str, Any] | None:
    names = {
        annotated_types.Ge: ("ge", "minimum"),
        annotated_types.Gt: ("gt", "exclusiveMinimum"),
        annotated_types.Le: ("le", "maximum"),
        annotated_types.Lt: ("lt", "exclusiveMaximum"),
        annotated_types.MinLen: ("min_length", "minLength"),
        annotated_types.MaxLen: ("max_length", "maxLength"),
    }
    for kind, (attribute, key) in names.items():
        if type(item) is kind:
            value = getattr(item, attribute)
            return {key: value} if type(value) is int else None
    return None


def _validated_fields(model: Any) -> set[str]:
    decorators = model.__pydantic_decorators__
    names: set[str] = set()
    for decorator in decorators.field_validators.values():
        fields = decorator.info.fields
        names.update(model.model_fields if "*" in fields else fields)
    return names


def _has_model_validators(model: Any) -> bool:
    decorators = model.__pydantic_decorators__
    return bool(decorators.model_validators or decorators.root_validators or decorators.validators)
