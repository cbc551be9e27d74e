"""Provider schema profiles (core spec §7.2): a normalised tool schema as each provider's requests take it.

:func:`profile_for` picks the profile of a provider and model, :func:`adapt` applies it (the ``gemini``
profile is :func:`opencode_cli.gemini_schema.gemini_profile`), and OpenAI's opt-in strict mode is
:func:`strict`, undone on received arguments by :func:`strict_nulls_to_absent`.
"""

from __future__ import annotations

from typing import Any

from .schema import COMBINERS

JSON_TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
_NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


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
    if profile == "gemini":  # Google's subset: its converter is loaded for Gemini models only
        from .gemini_schema import gemini_profile

        return gemini_profile(schema)
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
        properties = node.get("properties")
        if isinstance(extra, dict) or "patternProperties" in node:
            return False
        if not isinstance(properties, dict) and (properties is not None or extra is not False):
            return False  # no table of properties: free-form, or not a schema strict mode can close
    return all(
        can_be_strict(list(value.values()))
        if key == "properties" and isinstance(value, dict)
        else can_be_strict(value)
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
