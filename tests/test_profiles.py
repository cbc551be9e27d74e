"""Provider schema profiles (core spec §7.2, test list §11.12) and the opt-in OpenAI strict profile."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.gemini_schema import to_gemini
from opencode_cli.schema_profiles import adapt, profile_for, strict, strict_nulls_to_absent


@pytest.mark.parametrize(
    ("provider", "model", "profile"),
    [
        ("openai", "gpt-5", "openai"),
        ("azure", "gpt-4o", "openai"),
        ("google", "gemini-2.5-pro", "gemini"),
        ("openrouter", "google/gemini-2.5-flash", "gemini"),
        ("moonshotai", "kimi-k2", "kimi"),
        ("openrouter", "moonshotai/Kimi-K2", "kimi"),
        ("anthropic", "claude-sonnet-4-5", "default"),
        (None, "llama3", "default"),
    ],
)
def test_profile_for(provider, model, profile) -> None:
    assert profile_for(provider, model) == profile


# -- gemini ------------------------------------------------------------------------------------------


def test_gemini_adds_missing_items_and_keeps_existing_item_type() -> None:
    assert adapt({"type": "array"}, "gemini") == {"type": "array", "items": {"type": "string"}}
    assert adapt({"type": "array", "items": {"type": "number"}}, "gemini")["items"] == {"type": "number"}


def test_gemini_nested_arrays_get_string_items() -> None:
    two_d = adapt({"type": "array", "items": {"type": "array", "items": {}}}, "gemini")
    assert two_d["items"]["items"] == {"type": "string"}
    three_d = adapt(
        {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {}}}}, "gemini"
    )
    assert three_d["items"]["items"]["items"] == {"type": "string"}
    explicit = adapt({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "gemini")
    assert explicit["items"]["items"] == {"type": "number"}
    mixed = adapt(
        {
            "type": "object",
            "properties": {"grid": {"type": "array", "items": {"type": "array", "items": {}}}},
        },
        "gemini",
    )
    assert mixed["properties"]["grid"]["items"]["items"] == {"type": "string"}


def test_gemini_never_adds_keys_to_combiner_nodes() -> None:
    node = {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}
    assert adapt(node, "gemini")["items"] == {"anyOf": [{"type": "string"}, {"type": "number"}]}
    combiner = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert adapt(combiner, "gemini") == combiner


def test_gemini_drops_properties_from_non_objects_and_filters_required() -> None:
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "properties": {"x": {}}, "required": ["x"]},
            "inner": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]},
        },
        "required": ["name", "missing"],
    }
    out = adapt(node, "gemini")
    assert out["required"] == ["name"]
    assert out["properties"]["name"] == {"type": "string"}
    assert out["properties"]["inner"]["required"] == ["a"]


def test_gemini_enums_become_strings() -> None:
    assert adapt({"type": "integer", "enum": [1, 2]}, "gemini") == {"type": "string", "enum": ["1", "2"]}
    # whatever the key order: pydantic writes ``type`` after ``enum`` (OpenCode only rewrote a type that came
    # first, which Effect's schemas always do), and an integer type with string values matches nothing
    assert adapt({"enum": [1, 2], "type": "integer"}, "gemini") == {"enum": ["1", "2"], "type": "string"}
    assert adapt({"enum": [0.5], "type": "number"}, "gemini")["type"] == "string"
    assert adapt({"enum": ["a"], "type": "string"}, "gemini") == {"enum": ["a"], "type": "string"}


def test_gemini_type_arrays() -> None:
    assert adapt({"type": ["string", "null"]}, "gemini") == {"anyOf": [{"type": "string"}], "nullable": True}
    assert adapt({"type": ["null"]}, "gemini") == {"type": "null"}


def test_other_providers_untouched() -> None:
    node = {"type": "array", "properties": {"x": {}}}
    assert adapt(node, "default") == node


# -- openai ------------------------------------------------------------------------------------------


def test_openai_keeps_only_the_whitelist() -> None:
    node = {
        "$schema": "x",
        "type": "object",
        "title": "T",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 5, "default": 1, "description": "count"},
            "c": {"const": "fixed"},
            "s": {"type": "string", "format": "uri", "pattern": "^h"},
            "b": True,
            "free": {},
            "list": {"type": "array"},
            "bag": {"type": "object"},
            "odd": {"minimum": 1},
        },
        "required": ["n", 5],
    }
    out = adapt(node, "openai")
    assert out == {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "description": "count"},
            "c": {"enum": ["fixed"], "type": "string"},
            "s": {"type": "string"},
            "b": {"type": "string"},
            "free": {},
            "list": {"type": "array", "items": {"type": "string"}},
            "bag": {"type": "object", "properties": {}},
            "odd": {"type": "number"},
        },
        "required": ["n"],
    }


def test_kimi_reduces_refs_and_tuple_items() -> None:
    node = {"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "x"}}}
    assert adapt(node, "kimi")["properties"]["a"] == {"$ref": "#/$defs/A"}
    assert adapt({"type": "array", "items": [{"type": "string"}, {"type": "number"}]}, "kimi") == {
        "type": "array",
        "items": {"type": "string"},
    }
    assert adapt({"type": "array", "items": []}, "kimi")["items"] == {}


# -- openai strict -----------------------------------------------------------------------------------

READ_LIKE = {
    "type": "object",
    "properties": {
        "filePath": {"type": "string"},
        "offset": {"type": "integer", "description": "start"},
        "nested": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
    },
    "required": ["filePath"],
}


def test_strict_closes_objects_and_makes_optionals_nullable() -> None:
    out = strict(READ_LIKE)
    assert out["additionalProperties"] is False
    assert out["required"] == ["filePath", "offset", "nested"]
    assert out["properties"]["offset"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "description": "start",
    }
    nested = out["properties"]["nested"]["anyOf"][0]
    assert nested["additionalProperties"] is False and nested["required"] == ["deep"]
    assert strict_nulls_to_absent({"filePath": "a", "offset": None}, READ_LIKE) == {"filePath": "a"}


def _strict_valid(node) -> bool:
    if isinstance(node, list):
        return all(_strict_valid(n) for n in node)
    if not isinstance(node, dict):
        return True
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            return False
        if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
            return False
    return all(_strict_valid(v) for v in node.values())


def test_strict_leaves_alone_an_object_whose_properties_are_not_a_table() -> None:
    """A server's schema is not ours to trust: ``properties`` a list is sent as the plain OpenAI schema,
    not a traceback."""
    odd = {"type": "object", "properties": ["path"], "additionalProperties": False}
    assert adapt(odd, "openai-strict") == adapt(odd, "openai")
    nested = {"type": "object", "properties": {"x": {"type": "string", "properties": ["y"]}}}
    assert adapt(nested, "openai-strict")["properties"]["x"]["anyOf"][0] == {"type": "string"}


schemas = st.deferred(
    lambda: st.one_of(
        st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {}]),
        st.builds(lambda items: {"type": "array", "items": items}, schemas),
        st.builds(
            lambda props, data: {
                "type": "object",
                "properties": props,
                "required": data.draw(st.lists(st.sampled_from(sorted(props) or ["x"]), unique=True))
                if props
                else [],
            },
            st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), schemas, max_size=4),
            st.data(),
        ),
    )
)


@given(schemas)
def test_strict_output_is_always_strict_valid(schema) -> None:
    out = strict(adapt(schema, "openai"))
    assert _strict_valid(out)
    jsonschema.Draft202012Validator.check_schema(out)


# -- the Gemini wire conversion (issue 14 item 4) ----------------------------------------------------

#: Keys no schema of a Gemini function declaration may carry (``const`` is sent as a one-value ``enum``).
GEMINI_BANNED = frozenset(
    {"$schema", "additionalProperties", "$ref", "$defs", "definitions", "default", "minimum", "maximum"}
    | {"exclusiveMinimum", "const"}
)
_NAME_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_DATA = ("enum", "const", "required", "examples", "default")


def schema_nodes(node, path: str = "$"):
    """Every schema inside ``node`` with its path; property names and enum values are data, not keys."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key, value in node.items():
        if key in _NAME_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from schema_nodes(sub, f"{path}.{key}.{name}")
        elif key in _DATA:
            continue
        elif isinstance(value, dict):
            yield from schema_nodes(value, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from schema_nodes(item, f"{path}.{key}[{i}]")


def gemini_violations(schema) -> list[str]:
    found = []
    for path, node in schema_nodes(schema):
        found += [f"{path}.{key}" for key in sorted(GEMINI_BANNED & set(node))]
        if isinstance(node.get("type"), list):
            found.append(f"{path}.type is a list")
        nulls = [isinstance(b, dict) and b.get("type") == "null" for b in node.get("anyOf") or []]
        if any(nulls) and not all(nulls):
            found.append(f"{path}.anyOf has a null branch")
    return found


def test_gemini_conversion_drops_what_google_refuses() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "timeout": {"type": "integer", "exclusiveMinimum": 0, "minimum": -5, "maximum": 5, "default": 1},
            "format": {"type": "string", "enum": ["text", "html"], "default": "text"},
            # property names are data: a property may be called ``default``
            "default": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    assert to_gemini(schema) == {
        "type": "object",
        "properties": {
            "timeout": {"type": "integer"},
            "format": {"type": "string", "enum": ["text", "html"]},
            "default": {"type": "object"},
        },
    }


def test_gemini_conversion_turns_const_into_a_one_value_enum() -> None:
    assert to_gemini({"const": "fixed", "type": "string"}) == {"enum": ["fixed"], "type": "string"}
    assert to_gemini({"type": "integer", "const": 3}) == {"type": "string", "enum": ["3"]}
    nested = to_gemini({"type": "object", "properties": {"kind": {"const": "a", "description": "d"}}})
    assert nested["properties"]["kind"] == {"enum": ["a"], "description": "d"}


def test_gemini_conversion_marks_nullable_unions() -> None:
    union = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": "maybe"}
    assert to_gemini(union) == {"type": "string", "minLength": 1, "description": "maybe", "nullable": True}
    # an array-form type is OpenCode's anyOf of its members, and its nullable mark never reaches Google
    assert to_gemini({"type": ["integer", "null"], "minimum": 0}) == {"anyOf": [{"type": "integer"}]}
    several = to_gemini({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    assert several == {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}
    assert to_gemini({"type": ["string", "integer"]}) == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    # a union without null is left alone
    plain = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert to_gemini(plain) == plain


def test_gemini_conversion_drops_refs_and_keeps_their_siblings() -> None:
    """What OpenCode 1.18.33 sends for an MCP tool's schema (issue 36, finding 9): a ``$ref`` is dropped,
    not inlined, and the node keeps its other keys."""
    schema = {
        "type": "object",
        "$defs": {"Option": {"type": "object", "properties": {"label": {"type": "string"}}}},
        "properties": {
            "first": {"$ref": "#/$defs/Option", "description": "the first"},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Option"}, {"type": "null"}], "description": "or not"},
            "gone": {"$ref": "https://example.com/elsewhere.json", "description": "unresolvable"},
            "loop": {"$ref": "#", "description": "the root again"},
        },
    }
    assert to_gemini(schema) == {
        "type": "object",
        "properties": {
            "first": {"description": "the first"},
            "maybe": {"description": "or not", "nullable": True},
            "gone": {"description": "unresolvable"},
            "loop": {"description": "the root again"},
        },
    }


def test_gemini_conversion_of_an_mcp_tools_nullable_string_is_opencodes() -> None:
    schema = {
        "type": "object",
        "properties": {"note": {"type": ["string", "null"], "description": "optional note"}},
        "required": ["note"],
    }
    assert to_gemini(schema) == {
        "type": "object",
        "properties": {"note": {"anyOf": [{"type": "string"}], "description": "optional note"}},
        "required": ["note"],
    }


def test_gemini_profile_is_unchanged_by_the_conversion() -> None:
    # the profile also feeds OpenAI-format payloads (OpenAI-compatible endpoints): it keeps what it kept
    schema = {"$schema": "x", "type": "integer", "minimum": 0, "default": 3}
    assert adapt(schema, "gemini") == schema


def _without_nullable(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: _without_nullable(value) for key, value in node.items() if key != "nullable"}


_BANNED_NAMES = ["default", "minimum", "const", "$ref", "a", "b"]
_REFS = ["#/$defs/Leaf", "#/$defs/Node", "#", "#/$defs/missing", "#/definitions/Old"]
_leaves = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean"])},
        optional={
            "minimum": st.integers(-5, 5),
            "maximum": st.integers(-5, 5),
            "exclusiveMinimum": st.integers(-5, 5),
            "default": st.integers(),
            "description": st.text(max_size=5),
        },
    ),
    st.builds(lambda value: {"const": value}, st.one_of(st.text(max_size=3), st.integers(), st.none())),
    st.builds(
        lambda values: {"enum": values}, st.lists(st.one_of(st.text(max_size=3), st.integers()), min_size=1)
    ),
    st.builds(
        lambda kind: {"type": [kind, "null"]}, st.sampled_from(["string", "integer", "object", "array"])
    ),
    st.builds(lambda ref: {"$ref": ref}, st.sampled_from(_REFS)),
    st.just({}),
    st.booleans(),
)
json_schemas = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(
            lambda props, extra: {"type": "object", "properties": props, "additionalProperties": extra},
            st.dictionaries(st.sampled_from(_BANNED_NAMES), inner, max_size=3),
            st.one_of(st.booleans(), inner),
        ),
        st.builds(
            lambda branches: {"anyOf": [*branches, {"type": "null"}]}, st.lists(inner, min_size=1, max_size=3)
        ),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(
            lambda target, description: {"$ref": target, "description": description},
            st.sampled_from(_REFS),
            st.text(max_size=3),
        ),
    ),
    max_leaves=8,
)
root_schemas = st.builds(
    lambda props, leaf, node, old: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": props,
        "$defs": {
            "Leaf": leaf,
            "Node": {"type": "object", "properties": {"next": node, "self": {"$ref": "#/$defs/Node"}}},
        },
        "definitions": {"Old": old},
    },
    st.dictionaries(st.sampled_from(_BANNED_NAMES), json_schemas, max_size=4),
    json_schemas,
    json_schemas,
    json_schemas,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(root_schemas, json_schemas))
def test_gemini_conversion_never_sends_a_banned_key_and_the_sessions_profile_changes_nothing(schema) -> None:
    before = copy.deepcopy(schema)
    out = to_gemini(schema)

    assert gemini_violations(out) == []
    # a session's wire tools are the gemini profile's, converted: as if converted directly (the profile's
    # nullable mark beside an array-form type's anyOf is left out, as OpenCode's Google provider does)
    assert to_gemini(adapt(schema, "gemini")) == out
    again = to_gemini(out)  # converted once more: only the nullable marks go (Google's SDK reads none)
    assert gemini_violations(again) == [] and _without_nullable(again) == _without_nullable(out)
    assert schema == before  # the input is left alone
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        assert set(out["properties"]) == set(schema["properties"])  # names are never mistaken for keys
