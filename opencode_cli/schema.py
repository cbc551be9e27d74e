"""JSON Schema for tools: generation from pydantic models and OpenCode's normalisation (core spec §7.1).

Provider profiles (OpenAI, Gemini, Kimi, strict mode) build on :func:`normalize`; they are applied by the
session layer, never here.
"""

from __future__ import annotations

import copy
import json
from typing import Any

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_SAFE_INTEGER = 2**53 - 1
_NUMBER_WORDS = {"NaN", "Infinity", "-Infinity"}


def from_model(model: type) -> dict[str, Any]:
    """The normalised JSON Schema of a pydantic model's input."""
    raw = model.model_json_schema(mode="validation")  # type: ignore[attr-defined]
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


# -- provider profiles (core spec §7.2) ------------------------------------------------------------------

JSON_TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
COMBINERS = ("anyOf", "oneOf", "allOf")
_NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ITEM_SHAPE_KEYS = frozenset(
    {
        "type", "properties", "items", "prefixItems", "enum", "const", "$ref", "additionalProperties",
        "patternProperties", "required", "not", "if", "then", "else",
    }
)  # fmt: skip


#: The schema profiles: the four a provider gets (:func:`profile_for`), and ``openai-strict`` on request.
PROFILES = ("default", "openai", "openai-strict", "kimi", "gemini")


def check_profile(name: str) -> str:
    """``name`` when it is one of :data:`PROFILES`; else a :class:`~opencode_cli.errors.ConfigError`
    naming the close matches and every profile."""
    import difflib

    from .errors import ConfigError

    if name in PROFILES:
        return name
    close = difflib.get_close_matches(name, PROFILES, n=2, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise ConfigError(f"unknown schema profile '{name}'.{hint} Profiles: {', '.join(PROFILES)}")


def profile_for(provider: str | None, model_id: str) -> str:
    """The schema profile a provider's requests get: ``openai``, ``kimi``, ``gemini`` or ``default``."""
    provider = (provider or "").lower()
    lowered = model_id.lower()
    if provider in ("openai", "azure"):
        return "openai"
    if provider == "moonshotai" or "kimi" in lowered:
        return "kimi"
    if provider == "google" or "gemini" in lowered:
        return "gemini"
    return "default"


def adapt(schema: Any, profile: str) -> Any:
    """The schema as ``profile`` sends it (``default`` returns it unchanged; ``openai-strict`` is opt-in)."""
    if profile == "openai":
        return _openai(schema)
    if profile == "openai-strict":
        return strict(_openai(schema)) if can_be_strict(schema) else _openai(schema)
    if profile == "kimi":
        return _kimi(schema)
    if profile == "gemini":
        return _gemini(schema)
    return schema


def _openai(node: Any) -> Any:
    if isinstance(node, bool):
        return {"type": "string"}
    if isinstance(node, list):
        return [_openai(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    if "$ref" in node:
        out["$ref"] = node["$ref"]
    if isinstance(node.get("description"), str):
        out["description"] = node["description"]
    if "const" in node:
        out["enum"] = [node["const"]]
    elif isinstance(node.get("enum"), list):
        out["enum"] = node["enum"]
    if isinstance(node.get("properties"), dict):
        out["properties"] = {name: _openai(value) for name, value in node["properties"].items()}
    if isinstance(node.get("required"), list):
        out["required"] = [name for name in node["required"] if isinstance(name, str)]
    if "items" in node:
        out["items"] = _openai(node["items"])
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
        out["additionalProperties"] = extra if isinstance(extra, bool) else _openai(extra)
    for key in (*COMBINERS, "$defs", "definitions"):
        if key in node:
            value = node[key]
            out[key] = (
                {k: _openai(v) for k, v in value.items()} if isinstance(value, dict) else _openai(value)
            )
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    valid = [k for k in kinds if k in JSON_TYPES]
    if valid:
        out["type"] = valid[0] if isinstance(kind, str) else valid
    elif "$ref" in node or any(key in node for key in COMBINERS):
        return out
    elif any(key in node for key in ("properties", "required", "additionalProperties")):
        out["type"] = "object"
    elif "items" in node or "prefixItems" in node:
        out["type"] = "array"
    elif "enum" in node or "const" in node or "format" in node:
        out["type"] = "string"
    elif any(key in node for key in _NUMERIC_BOUNDS):
        out["type"] = "number"
    else:
        return {}
    types = out["type"] if isinstance(out["type"], list) else [out["type"]]
    if "object" in types and "properties" not in out:
        out["properties"] = {}
    if "array" in types and "items" not in out:
        out["items"] = {"type": "string"}
    return out


def _kimi(node: Any) -> Any:
    if isinstance(node, list):
        return [_kimi(item) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        return {"$ref": node["$ref"]}
    out = {}
    for key, value in node.items():
        if key == "items" and isinstance(value, list):
            out[key] = _kimi(value[0]) if value else {}
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _kimi(prop) for name, prop in value.items()}
        else:
            out[key] = _kimi(value)
    return out


def _gemini(node: Any) -> Any:
    if isinstance(node, list):
        return [_gemini(item) for item in node]
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
            out[key] = {name: _gemini(prop) for name, prop in value.items()}
        elif isinstance(value, dict | list):
            out[key] = _gemini(value)
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


# -- the Gemini wire conversion ----------------------------------------------------------------------------

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
      ``anyOf: [{"type": "string"}]``, with no ``nullable``: OpenCode marks it nullable and its Google
      converter leaves the mark out); ``["null"]`` alone is ``type: "null"``;
    - an ``anyOf`` with a ``{"type": "null"}`` branch becomes the non-null schema plus ``nullable: true``
      (several non-null branches stay an ``anyOf``);
    - then the ``gemini`` profile's rules apply (string enums, ``items`` for arrays, ``required`` filtered).

    Idempotent: converting a converted schema changes nothing. ``wire.render(tools, "gemini")`` sends every
    tool through it, whatever profile the session used.
    """
    return _gemini(_openapi(schema))


def _is_null_branch(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null"


def _openapi(node: Any) -> Any:
    if isinstance(node, bool):
        return {}  # ``true`` (anything) has no OpenAPI spelling but "no constraint"
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    nullable = node.get("nullable") is True
    for key, value in node.items():
        if key in GEMINI_DROPPED:
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
            merged = {**(branches[0] if isinstance(branches[0], dict) else {}), **others, "nullable": True}
            return _openapi(merged)
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


def strict(node: Any) -> Any:
    """OpenAI strict mode: every object closed and fully required; optional fields become nullable.

    An optional property ``x`` (not in ``required``) is sent as ``anyOf: [x, {"type": "null"}]``; the
    session maps a ``null`` received for it back to "absent" (so the default applies) before validation.
    """
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: strict(value) if key != "properties" else value for key, value in node.items()}
    properties = node.get("properties")
    if isinstance(properties, dict) or out.get("type") == "object":
        properties = properties or {}
        required = set(node.get("required") or [])
        converted = {}
        for name, prop in properties.items():
            prop = strict(prop)
            if name not in required:
                prop = _nullable(prop)
            converted[name] = prop
        out["properties"] = converted
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def can_be_strict(node: Any) -> bool:
    """Whether :func:`strict` keeps the schema's meaning: it has no free-form object (a map of any keys).

    Strict mode closes every object, so ``dict[str, X]`` (``additionalProperties`` a schema), patterned keys
    or an object without ``properties`` would only accept ``{}``. Such a tool is sent ``strict: false``
    with the plain OpenAI schema instead.
    """
    if isinstance(node, list):
        return all(can_be_strict(item) for item in node)
    if not isinstance(node, dict):
        return True
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) or "patternProperties" in node:
            return False
        if not isinstance(node.get("properties"), dict) and extra is not False:
            return False
    return all(
        can_be_strict(value) if key != "properties" else can_be_strict(list(value.values()))
        for key, value in node.items()
        if isinstance(value, dict | list) and key not in ("required", "enum", "const", "default", "examples")
    )


def _nullable(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return prop
    if prop.get("type") == "null" or any(
        isinstance(b, dict) and b.get("type") == "null" for b in prop.get("anyOf", [])
    ):
        return prop
    description = prop.get("description")
    inner = {k: v for k, v in prop.items() if k != "description"}
    out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        out["description"] = description
    return out


def strict_nulls_to_absent(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Undo :func:`strict` on received arguments: drop ``null`` for properties that were optional.

    Nested objects (also inside arrays and ``anyOf`` branches) are handled the same way, as :func:`strict`
    made their optional properties nullable too.
    """
    required = set(schema.get("required") or [])
    properties = schema.get("properties") or {}
    out = {}
    for key, value in args.items():
        prop = properties.get(key)
        if value is None and key in properties and key not in required:
            continue
        out[key] = _nulls_to_absent_in(value, prop)
    return out


def _nulls_to_absent_in(value: Any, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    branches = [schema, *(b for key in COMBINERS for b in schema.get(key) or [] if isinstance(b, dict))]
    if isinstance(value, dict):
        target = next((b for b in branches if isinstance(b.get("properties"), dict)), None)
        return strict_nulls_to_absent(value, target) if target is not None else value
    if isinstance(value, list):
        items = next((b["items"] for b in branches if isinstance(b.get("items"), dict)), None)
        return [_nulls_to_absent_in(item, items) for item in value] if items is not None else value
    return value


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
