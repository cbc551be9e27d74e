"""JSON-Schema normalisation (core spec §7.1; the cases of checklist §11.4 that need no built-in tool)."""

from __future__ import annotations

from typing import Literal

import jsonschema
from pydantic import BaseModel, Field

from opencode_cli.schema import DRAFT_2020_12, MAX_SAFE_INTEGER, from_model, normalize


class Option(BaseModel):
    label: str = Field(description="Display text")
    description: str = ""


class Question(BaseModel):
    question: str
    options: list[Option]


class QuestionParams(BaseModel):
    questions: list[Question]


def branches(prop: dict) -> list:
    """The alternatives a property allows: its ``anyOf`` members, or the property itself."""
    return prop.get("anyOf", [prop])


def has_key(node, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(has_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(has_key(v, key) for v in node)
    return False


def test_inlines_named_child_schemas() -> None:
    schema = from_model(QuestionParams)

    assert "$defs" not in schema and "definitions" not in schema
    assert not has_key(schema, "$ref")
    options = schema["properties"]["questions"]["items"]["properties"]["options"]
    assert options["items"]["properties"]["label"]["type"] == "string"
    assert options["items"]["properties"]["label"]["description"] == "Display text"
    assert next(iter(schema)) == "$schema" and schema["$schema"] == DRAFT_2020_12
    jsonschema.Draft202012Validator.check_schema(schema)


def test_preserves_required_nullable_fields() -> None:
    class Params(BaseModel):
        value: str | None

    prop = from_model(Params)["properties"]["value"]

    assert {"type": "null"} in prop["anyOf"]
    assert {"type": "string"} in prop["anyOf"]


def test_optional_nullable_fields_lose_the_null_branch() -> None:
    class Params(BaseModel):
        value: str | None = None

    schema = from_model(Params)
    prop = schema["properties"]["value"]

    assert "required" not in schema or "value" not in schema["required"]
    assert [{k: v for k, v in b.items() if k != "default"} for b in branches(prop)] == [{"type": "string"}]


def test_defaulted_optional_keys_are_not_nullable() -> None:
    class Params(BaseModel):
        format: Literal["text", "markdown", "html"] = "markdown"

    assert from_model(Params)["properties"]["format"] == {
        "type": "string",
        "enum": ["text", "markdown", "html"],
        "default": "markdown",
    }


def test_keeps_repeated_all_of_constraints() -> None:
    raw = {
        "type": "object",
        "properties": {"name": {"type": "string", "allOf": [{"pattern": "^a"}, {"pattern": "z$"}]}},
        "required": ["name"],
    }

    prop = normalize(raw)["properties"]["name"]

    assert prop["allOf"] == [{"pattern": "^a"}, {"pattern": "z$"}]
    assert prop["type"] == "string"


def test_disjoint_all_of_members_are_merged() -> None:
    raw = {"type": "string", "allOf": [{"minLength": 1}, {"pattern": "^a"}]}

    assert normalize(raw) == {"$schema": DRAFT_2020_12, "type": "string", "minLength": 1, "pattern": "^a"}


def test_all_of_overlapping_the_node_is_kept() -> None:
    raw = {"type": "string", "pattern": "^x", "allOf": [{"pattern": "y$"}]}

    assert normalize(raw)["allOf"] == [{"pattern": "y$"}]


def test_bounds_bare_integer_fields() -> None:
    class Params(BaseModel):
        count: int
        positive: int = Field(default=1, ge=1)
        capped: int = Field(default=0, le=10)

    props = from_model(Params)["properties"]

    assert props["count"]["minimum"] == -9007199254740991
    assert props["count"]["maximum"] == 9007199254740991 == MAX_SAFE_INTEGER
    assert props["positive"]["minimum"] == 1
    assert props["positive"]["maximum"] == MAX_SAFE_INTEGER
    assert props["capped"]["maximum"] == 10
    assert "minimum" not in props["capped"]


def test_integers_in_nested_arrays_are_bounded() -> None:
    class Params(BaseModel):
        matrix: list[list[int]]

    inner = from_model(Params)["properties"]["matrix"]["items"]["items"]
    assert (inner["minimum"], inner["maximum"]) == (-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)


def test_additional_properties_true_is_dropped() -> None:
    raw = {
        "type": "object",
        "additionalProperties": True,
        "properties": {"inner": {"type": "object", "additionalProperties": False}},
    }

    schema = normalize(raw)

    assert "additionalProperties" not in schema
    assert schema["properties"]["inner"]["additionalProperties"] is False


def test_number_with_non_finite_words_becomes_a_number() -> None:
    raw = {
        "description": "a ratio",
        "anyOf": [
            {"type": "number"},
            {"type": "string", "enum": ["NaN"]},
            {"enum": ["Infinity", "-Infinity"]},
        ],
    }

    assert normalize(raw) == {"$schema": DRAFT_2020_12, "type": "number", "description": "a ratio"}


def test_bare_object_or_array_becomes_an_empty_object() -> None:
    raw = {"anyOf": [{"type": "object"}, {"type": "array"}], "description": "anything"}

    assert normalize(raw) == {
        "$schema": DRAFT_2020_12,
        "type": "object",
        "properties": {},
        "description": "anything",
    }


def test_single_object_branch_is_merged_node_keys_win() -> None:
    raw = {
        "description": "outer",
        "anyOf": [{"type": "object", "description": "inner", "properties": {"a": {"type": "string"}}}],
    }

    schema = normalize(raw)

    assert "anyOf" not in schema
    assert schema["description"] == "outer"
    assert schema["properties"] == {"a": {"type": "string"}}


def test_refs_are_inlined_with_sibling_keys_winning() -> None:
    raw = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Thing", "description": "the a thing"},
            "b": {"$ref": "#/definitions/Other"},
            "c": {"$ref": "https://example.com/remote.json"},
        },
        "$defs": {"Thing": {"type": "string", "description": "generic"}},
        "definitions": {"Other": {"type": "boolean"}},
    }

    schema = normalize(raw)

    assert schema["properties"]["a"] == {"type": "string", "description": "the a thing"}
    assert schema["properties"]["b"] == {"type": "boolean"}
    assert schema["properties"]["c"] == {"$ref": "https://example.com/remote.json"}
    assert "$defs" not in schema and "definitions" not in schema


def test_recursive_refs_are_left_and_defs_kept() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    schema = from_model(Node)

    assert schema["type"] == "object"
    assert schema["properties"]["name"] == {"type": "string"}
    assert has_key(schema["properties"], "$ref")
    assert "Node" in schema["$defs"]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"name": "root", "children": [{"name": "leaf"}]})
    assert not validator.is_valid({"name": "root", "children": [{"oops": 1}]})


def test_nested_required_lists_decide_null_stripping() -> None:
    raw = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "object",
                "properties": {
                    "kept": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "stripped": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
                "required": ["kept"],
            },
            "loose": {
                "type": "object",
                "properties": {"x": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "null"}]}},
            },
        },
        "required": ["outer"],
    }

    props = normalize(raw)["properties"]

    assert {"type": "null"} in props["outer"]["properties"]["kept"]["anyOf"]
    assert branches(props["outer"]["properties"]["stripped"]) == [{"type": "string"}]
    assert branches(props["loose"]["properties"]["x"]) == [{"type": "integer", "maximum": 3}]


def test_normalize_does_not_mutate_its_input() -> None:
    raw = {"type": "object", "additionalProperties": True, "properties": {"n": {"type": "integer"}}}
    snapshot = {"type": "object", "additionalProperties": True, "properties": {"n": {"type": "integer"}}}

    normalize(raw)

    assert raw == snapshot


def test_generated_schemas_validate_what_the_model_accepts() -> None:
    class Params(BaseModel):
        path: str
        limit: int = Field(default=10, ge=1)
        mode: Literal["a", "b"] = "a"
        tags: list[str] | None = None

    validator = jsonschema.Draft202012Validator(from_model(Params))

    for good in ({"path": "x"}, {"path": "x", "limit": 5, "mode": "b", "tags": ["t"]}):
        Params.model_validate(good)
        assert validator.is_valid(good)
    for bad in ({}, {"path": "x", "limit": 0}, {"path": "x", "mode": "c"}):
        assert not validator.is_valid(bad)
