"""The catalogue of code mode: typed Python signatures from JSON Schemas, namespaces, calling conventions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.codemode.catalog import bind, catalogue, identifier, python_type, split_key, unique


def test_required_then_optional_with_defaults_and_descriptions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "days": {"type": "integer", "default": 1, "description": "How many days."},
            "city": {"type": "string", "description": "The city's name."},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
        },
        "required": ["city"],
    }
    binding = bind("weather_current", "weather", "current", schema, "Current weather for a city.")

    assert binding.signature == (
        'tools.weather.current(city: str, days: int = 1, units: Literal["metric", "imperial"] | None = None)'
        " -> str"
    )
    assert binding.params == ("city", "days", "units")
    assert binding.description == "Current weather for a city.\ndays: How many days.\ncity: The city's name."
    text = catalogue([binding])
    assert "tools.weather.current(city: str" in text
    assert "\n    Current weather for a city.\n    days: How many days." in text


def test_nested_objects_refs_arrays_and_unions() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["name"],
            },
            "Size": {"type": "string", "enum": ["small", "large"]},
        },
        "properties": {
            "order": {
                "type": "object",
                "properties": {
                    "size": {"$ref": "#/$defs/Size"},
                    "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "tags": {"type": "object", "additionalProperties": {"type": "number"}},
                },
                "required": ["size", "items"],
            },
            "flag": {"type": ["boolean", "null"]},
        },
        "required": ["order"],
    }
    binding = bind("shop_order", "shop", "order", schema)

    assert binding.signature == (
        'tools.shop.order(order: {"size": Literal["small", "large"], '
        '"items": list[{"name": str, "quantity": NotRequired[int]}], '
        '"note": NotRequired[str | None], "tags": NotRequired[dict[str, float]]}, '
        "flag: bool | None = None) -> str"
    )


def test_an_output_schema_types_the_return_and_decodes_json() -> None:
    output = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    binding = bind("demo_answer", "demo", "answer", {"type": "object", "properties": {}}, "", output)

    assert binding.signature == 'tools.demo.answer() -> {"answer": int}'
    assert binding.returns_json


def test_property_names_that_are_not_identifiers_take_one_dict() -> None:
    schema = {"type": "object", "properties": {"file-path": {"type": "string"}}, "required": ["file-path"]}
    binding = bind("fs_read", "fs", "read", schema)

    assert binding.signature == 'tools.fs.read(input: {"file-path": str}, /) -> str'
    assert binding.arguments(({"file-path": "a"},), {}) == {"file-path": "a"}
    with pytest.raises(TypeError, match="one dict"):
        binding.arguments((), {"x": 1})


def test_calls_map_positional_and_keyword_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    binding = bind("s_t", "s", "t", schema)

    assert binding.arguments(("x",), {"b": 2}) == {"a": "x", "b": 2}
    assert binding.arguments(({"a": "x"},), {}) == {"a": "x"}  # the whole input as one dict
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        binding.arguments((), {"c": 1})
    with pytest.raises(TypeError, match="multiple values"):
        binding.arguments(("x",), {"a": "y"})
    with pytest.raises(TypeError, match="positional arguments"):
        binding.arguments(("x", 1, 2), {})


def test_namespace_is_the_longest_configured_server_prefix() -> None:
    assert split_key("weather_current", ["weather"]) == ("weather", "current")
    assert split_key("my_server_get_thing", ["my", "my_server"]) == ("my_server", "get_thing")
    assert split_key("my-srv_tool", ["my-srv"]) == ("my-srv", "tool")
    assert split_key("other_x", ["weather"]) == ("other", "x")


def test_identifiers_and_collisions() -> None:
    assert identifier("my-srv") == "my_srv"
    assert identifier("2fa") == "t2fa"
    assert identifier("_private") == "t_private"
    assert identifier("import") == "import_"
    first = bind("a_b_c", "a", "b_c", None)
    second = bind("a_b_c2", "a", "b_c", None)
    assert [b.path for b in unique([first, second])] == ["tools.a.b_c", "tools.a.b_c_2"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
schemas = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["string", "integer", "number", "boolean", "null", "array", "object", "x"]
            )
            | st.lists(st.sampled_from(["string", "null", "object"]), max_size=3),
            "enum": st.lists(json_values, max_size=3),
            "$ref": st.sampled_from(["#", "#/$defs/A", "#/definitions/B", "#/nowhere", "http://x"]),
            "default": json_values,
            "description": st.text(max_size=20),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(st.text(max_size=6), inner, max_size=3),
            "items": inner,
            "anyOf": st.lists(inner, max_size=3),
            "required": st.lists(st.text(max_size=6), max_size=3),
            "additionalProperties": inner | st.booleans(),
            "$defs": st.dictionaries(st.sampled_from(["A", "B"]), inner, max_size=2),
        },
    ),
    max_leaves=12,
)


@given(schemas)
def test_any_schema_gives_a_signature(schema: dict[str, Any]) -> None:
    # schemas come from servers we do not control: a signature is always written, never an exception
    binding = bind("s_t", "s", "t", schema, "described")
    assert binding.signature.startswith("tools.s.t(") and binding.signature.count("\n") == 0
    assert python_type(schema)
    json.dumps(binding.params)


def test_a_large_tool_set_gives_a_partial_catalogue() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "A query."}}}
    described = "Tool {n}.\n\nLong details of tool {n}."
    many = [bind(f"s_t{n}", "s", f"t{n}", schema, described.format(n=n)) for n in range(50)]

    full = catalogue(many[:2])
    assert "Long details of tool 0." in full and "q: A query." in full
    compact = catalogue(many, budget=1500)
    assert "Long details" not in compact and "tools.s.t0(q: str | None = None) -> str\n    Tool 0." in compact
    assert compact.rstrip().endswith("tools.s.t49") and "more tools, not described here: tools.s.t" in compact
