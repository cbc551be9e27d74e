"""Gemini's schemas: the ``gemini`` profile, and the conversion to Google's OpenAPI-style subset.

:func:`gemini_profile` is what the ``gemini`` profile (:func:`opencode_cli.schema_profiles.adapt`) does
to a schema; :func:`to_gemini` is the whole conversion a Gemini function declaration's parameters get
(``wire.render(tools, "gemini")``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .schema import COMBINERS

# -- the gemini profile ------------------------------------------------------------------------------------

#: Keys that give an array's ``items`` a shape; ``items`` with none of them is sent as strings.
_ITEM_SHAPE_KEYS = frozenset(
    {
        "type", "properties", "items", "prefixItems", "enum", "const", "$ref", "additionalProperties",
        "patternProperties", "required", "not", "if", "then", "else",
    }
)  # fmt: skip


def gemini_profile(node: Any) -> Any:
    """The schema as the ``gemini`` profile sends it, at every depth: ``enum`` values as strings (a numeric
    ``type`` beside them becomes ``string``), an array-form ``type`` as an ``anyOf`` of its non-null members
    (``nullable`` when ``null`` was one), ``items`` for every plain array (``string`` when absent or
    shapeless), an object's ``required`` filtered to its properties, and no ``properties``/``required`` on a
    typed non-object."""
    if isinstance(node, list):
        return [gemini_profile(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "enum" and isinstance(value, list):
            out["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in value]
        elif key == "type" and isinstance(value, list):
            members = [t for t in value if t != "null"]
            if members:
                out["anyOf"] = [{"type": t} for t in members]
                if "null" in value:
                    out["nullable"] = True
            elif "null" in value:
                out["type"] = "null"
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: gemini_profile(prop) for name, prop in value.items()}
        elif isinstance(value, dict | list):
            out[key] = gemini_profile(value)
        else:
            out[key] = value
    if "enum" in out and out.get("type") in ("integer", "number"):
        # string values need a string type, wherever ``type`` stands (pydantic writes it after ``enum``)
        out["type"] = "string"
    combined = any(key in out for key in COMBINERS)
    if (
        out.get("type") == "object"
        and isinstance(out.get("properties"), dict)
        and isinstance(out.get("required"), list)
    ):
        out["required"] = [name for name in out["required"] if name in out["properties"]]
    if out.get("type") == "array" and not combined:
        items = out.get("items")
        if items is None:  # OpenCode sets {} there, which then gets a type as any items without a shape
            out["items"] = {"type": "string"}
        elif (
            isinstance(items, dict)
            and not (set(items) & _ITEM_SHAPE_KEYS)
            and not any(key in items for key in COMBINERS)
        ):
            out["items"] = {**items, "type": "string"}
    if isinstance(out.get("type"), str) and out["type"] != "object" and not combined:
        out.pop("properties", None)
        out.pop("required", None)
    return out


# -- the wire conversion ------------------------------------------------------------------------------------

#: Keys no schema of a Gemini function declaration carries (Google takes an OpenAPI-style subset).
GEMINI_DROPPED = frozenset(
    {
        "$schema", "$ref", "$defs", "definitions", "additionalProperties", "default",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip
#: Keys whose value is a map of names to schemas (the names are data, never schema keywords).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
#: Keys whose value is one schema, where ``true``/``false`` are schemas too.
_SCHEMA_SLOTS = frozenset({"items", "not", "if", "then", "else", "contains", "propertyNames"})
#: Keys whose value is data, not a schema.
_VALUE_KEYS = frozenset({"enum", "const", "required", "examples", "example", "propertyOrdering"})


def to_gemini(schema: Any) -> Any:
    """A tool's parameters as a Gemini function declaration carries them (the one Gemini conversion).

    Google's ``functionDeclarations`` take an OpenAPI-style subset of JSON Schema, so, at every depth:

    - ``$ref`` is dropped and the node keeps its other keys (an MCP tool's ``{"$ref": …, "description": …}``
      becomes its description alone; nothing is inlined), as OpenCode's Google provider sends it;
    - the keys of :data:`GEMINI_DROPPED` are removed (``$schema``, ``additionalProperties``, ``$defs``,
      ``default``, the numeric bounds);
    - ``const`` becomes a one-value ``enum``;
    - an array-form ``type`` becomes an ``anyOf`` of its non-null members (``["string", "null"]`` gives
      ``anyOf: [{"type": "string"}]``, with no ``nullable``: OpenCode's gemini profile marks it nullable and
      its Google converter leaves the mark out); ``["null"]`` alone is ``type: "null"``;
    - a ``nullable`` already in the schema is left out (the gemini profile's mark, above); only an
      ``anyOf`` with a ``{"type": "null"}`` branch is marked: it becomes the non-null schema plus
      ``nullable: true`` (several non-null branches stay an ``anyOf``);
    - then the ``gemini`` profile's rules apply (string enums, ``items`` for arrays, ``required`` filtered).

    A session's wire tools went through the gemini profile first: converting them gives what converting
    the schema itself does. ``wire.render(tools, "gemini")`` sends every tool through it, whatever profile
    the session used.
    """
    return gemini_profile(_openapi(schema))


def _is_null_branch(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null"


def _openapi(node: Any) -> Any:
    if isinstance(node, bool):
        return {}  # ``true`` (anything) has no OpenAPI spelling but "no constraint"
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    nullable = False  # a null branch marks it; a ``nullable`` already there is left out, as Google's SDK does
    for key, value in node.items():
        if key in GEMINI_DROPPED or key == "nullable":
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "enum" and "const" in node:
            continue
        elif key in _VALUE_KEYS:
            out[key] = copy.deepcopy(value)
        elif key == "type" and isinstance(value, list):
            members = [t for t in value if t != "null"]
            if members:
                out["anyOf"] = [{"type": t} for t in members]
            elif value:
                out["type"] = "null"
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _openapi(prop) for name, prop in value.items()}
        elif key == "anyOf" and isinstance(value, list):
            branches = [b for b in value if not _is_null_branch(b)]
            if len(branches) == len(value) or not branches:
                out[key] = [_openapi(b) for b in value]
                continue
            nullable = True
            if len(branches) > 1:
                out[key] = [_openapi(b) for b in branches]
                continue
            # one schema and null: that schema, the node's own keys winning
            others = {k: v for k, v in node.items() if k != "anyOf"}
            merged = _openapi({**(branches[0] if isinstance(branches[0], dict) else {}), **others})
            return {**merged, "nullable": True}
        elif isinstance(value, dict) or (isinstance(value, bool) and key in _SCHEMA_SLOTS):
            out[key] = _openapi(value)
        elif isinstance(value, list):
            out[key] = [_openapi(item) if isinstance(item, dict) else item for item in value]
        else:
            out[key] = value
    if out.get("type") == "array" and "items" not in out and not any(key in out for key in COMBINERS):
        out["items"] = {}  # the profile then gives it a type, as it does to every untyped ``items``
    if nullable:
        out["nullable"] = True
    return out
