"""JSON Schema for tools: generation from pydantic models and OpenCode's normalisation (core spec §7.1).

The provider profiles that reshape a normalised schema live in :mod:`opencode_cli.schema_profiles`, and
Google's OpenAPI-style subset in :mod:`opencode_cli.gemini_schema`; the session layer applies them, never
this module. :func:`describe_changes` says what such a pass changed.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.v1 import BaseModel as BaseModelV1

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_SAFE_INTEGER = 2**53 - 1
#: The keywords whose value is a list of subschemas combined into one.
COMBINERS = ("anyOf", "oneOf", "allOf")
_NUMBER_WORDS = {"NaN", "Infinity", "-Infinity"}


def from_model(model: type[BaseModel] | type[BaseModelV1]) -> dict[str, Any]:
    """The normalised JSON Schema of a pydantic model's input. A model of pydantic's v1 API
    (``pydantic.v1``, which LangChain tools may still use for their ``args_schema``) has no
    ``model_json_schema``: its ``schema()`` is read (draft-7 ``definitions``, inlined by :func:`normalize`;
    a copy: v1 caches the dict it returns)."""
    from pydantic import BaseModel

    raw = model.model_json_schema(mode="validation") if issubclass(model, BaseModel) else dict(model.schema())
    raw.pop("description", None)  # the model's docstring; the tool's own description says it all
    return normalize(_plain_optionals(_drop_generated_titles(raw)))


def _plain_optionals(node: Any) -> Any:
    """Write pydantic's optional ``x: T | None = None`` the way OpenCode's schemas do: plain ``T``.

    pydantic emits ``{"anyOf": [T, {"type": "null"}], "default": null}`` for such a field; Effect
    emits just ``T`` for an optional key. Required fields, and optional ones with another default,
    are left alone (so their null branch is kept or stripped by :func:`normalize` as usual).
    """
    if isinstance(node, list):
        return [_plain_optionals(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _plain_optionals(value) for key, value in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict):
        required = out.get("required") or []
        for name, prop in properties.items():
            if name in required or not isinstance(prop, dict) or prop.get("default", 0) is not None:
                continue
            branches = prop.get("anyOf")
            if isinstance(branches, list) and len(branches) == 2 and sum(map(_is_null, branches)) == 1:
                [kept] = [branch for branch in branches if not _is_null(branch)]
                rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
                properties[name] = {**kept, **rest} if isinstance(kept, dict) else prop
    return out


def _drop_generated_titles(node: Any) -> Any:
    """Remove the ``title`` keys pydantic makes up from class and field names (OpenCode sends none)."""
    if isinstance(node, list):
        return [_drop_generated_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _drop_generated_titles(v) for k, v in node.items()}
    if isinstance(out.get("properties"), dict):
        props = {}
        for name, prop in out["properties"].items():
            if isinstance(prop, dict) and prop.get("title") == name.replace("_", " ").title():
                prop = {k: v for k, v in prop.items() if k != "title"}
            props[name] = prop
        out["properties"] = props
    if out.get("type") == "object" and isinstance(out.get("title"), str) and "properties" in out:
        out.pop("title")
    return out


def normalize(schema: dict[str, Any]) -> dict[str, Any]:
    """Apply OpenCode's post-pass: ``$schema`` first, optional nulls dropped, refs inlined, ints bounded."""
    root: dict[str, Any] = {"$schema": DRAFT_2020_12}
    root.update({k: v for k, v in copy.deepcopy(schema).items() if k != "$schema"})
    defs = root.get("$defs")
    if isinstance(defs, dict) and not defs:
        del root["$defs"]
    root = _normalize(root, strip_null=False)
    definitions = {**(root.get("definitions") or {}), **(root.get("$defs") or {})}
    root = _inline(root, definitions, ())
    if not _has_local_ref(root):
        root.pop("$defs", None)
        root.pop("definitions", None)
    return root


def _is_null(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null" and len(node) == 1


def _normalize(node: Any, strip_null: bool) -> Any:
    if isinstance(node, list):
        return [_normalize(item, False) for item in node]
    if not isinstance(node, dict):
        return node
    required = node.get("required")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            optional = lambda name: not isinstance(required, list) or name not in required  # noqa: E731
            out[key] = {name: _normalize(prop, optional(name)) for name, prop in value.items()}
        else:
            out[key] = _normalize(value, False)
    node = out
    if node.get("additionalProperties") is True:
        del node["additionalProperties"]
    any_of = node.get("anyOf")
    if strip_null and isinstance(any_of, list) and any(_is_null(b) for b in any_of):
        rest = [b for b in any_of if not _is_null(b)]
        node = {k: v for k, v in node.items() if k != "anyOf"}
        if rest:
            node["anyOf"] = rest
        return _normalize(node, False)
    if isinstance(any_of, list):
        node = _simplify_any_of(node, any_of)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and all_of and all(isinstance(m, dict) for m in all_of):
        own = set(node) - {"allOf"}
        seen: set[str] = set()
        disjoint = True
        for member in all_of:
            keys = set(member)
            if keys & seen or keys & own:
                disjoint = False
                break
            seen |= keys
        if disjoint:
            merged = {k: v for k, v in node.items() if k != "allOf"}
            for member in all_of:
                merged.update(member)
            node = merged
    if node.get("type") == "integer" and "maximum" not in node:
        node.setdefault("minimum", -MAX_SAFE_INTEGER)
        node["maximum"] = MAX_SAFE_INTEGER
    return node


def _simplify_any_of(node: dict[str, Any], any_of: list[Any]) -> dict[str, Any]:
    others = {k: v for k, v in node.items() if k != "anyOf"}
    numbers = [b for b in any_of if isinstance(b, dict) and b.get("type") == "number"]
    words = [
        b for b in any_of if isinstance(b, dict) and set(b.get("enum") or []) <= _NUMBER_WORDS and "enum" in b
    ]
    if len(numbers) == 1 and len(numbers) + len(words) == len(any_of) and words:
        return {**numbers[0], **others}
    if len(any_of) == 2 and all(isinstance(b, dict) for b in any_of):
        kinds = {b.get("type") for b in any_of}
        bare_object = any(b.get("type") == "object" and "properties" not in b for b in any_of)
        bare_array = any(b.get("type") == "array" and "items" not in b for b in any_of)
        if kinds == {"object", "array"} and bare_object and bare_array:
            return {"type": "object", "properties": {}, **others}
    if len(any_of) == 1 and isinstance(any_of[0], dict) and any_of[0].get("type") == "object":
        return {**any_of[0], **others}
    return node


def _ref_name(ref: Any) -> str | None:
    if isinstance(ref, str):
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix):
                return ref[len(prefix) :]
    return None


def _inline(node: Any, definitions: dict[str, Any], expanding: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, expanding) for item in node]
    if not isinstance(node, dict):
        return node
    name = _ref_name(node.get("$ref"))
    if name is not None and name in definitions and name not in expanding:
        target = definitions[name]
        merged = (
            {**target, **{k: v for k, v in node.items() if k != "$ref"}} if isinstance(target, dict) else node
        )
        return _inline(merged, definitions, (*expanding, name))
    return {
        key: (value if key in ("$defs", "definitions") else _inline(value, definitions, expanding))
        for key, value in node.items()
    }


def _has_local_ref(node: Any, top: bool = True) -> bool:
    if isinstance(node, list):
        return any(_has_local_ref(item, False) for item in node)
    if isinstance(node, dict):
        if _ref_name(node.get("$ref")) is not None:
            return True
        return any(
            _has_local_ref(value, False)
            for key, value in node.items()
            if not (top and key in ("$defs", "definitions"))
        )
    return False


def describe_changes(before: Any, after: Any, path: str = "") -> list[str]:
    """What a profile changed, one line each: ``- path (dropped)``, ``+ path = value``, ``~ path: a -> b``."""
    if isinstance(before, dict) and isinstance(after, dict):
        lines: list[str] = []
        for key in before:
            child = f"{path}.{key}" if path else str(key)
            if key not in after:
                lines.append(f"- {child} (dropped)")
            else:
                lines.extend(describe_changes(before[key], after[key], child))
        for key in after:
            if key not in before:
                child = f"{path}.{key}" if path else str(key)
                lines.append(f"+ {child} = {_compact(after[key])}")
        return lines
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        pairs = enumerate(zip(before, after, strict=True))
        return [line for i, (a, b) in pairs for line in describe_changes(a, b, f"{path}[{i}]")]
    if before != after:
        return [f"~ {path or '(root)'}: {_compact(before)} -> {_compact(after)}"]
    return []


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
