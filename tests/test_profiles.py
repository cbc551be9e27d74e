"""Provider schema profiles (core spec §7.2, test list §11.12) and the opt-in OpenAI strict profile."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.schema import adapt, profile_for, strict, strict_nulls_to_absent


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
    assert adapt({"type": "array"}, "gemini") == {"type": "array", "items": {}}
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
