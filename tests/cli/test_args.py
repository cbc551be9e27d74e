"""``tools run`` argument parsing: the forms, schema-driven coercion, key resolution (with properties)."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.cli.args import ArgsError, coerce, parse_arguments, resolve_key

SCHEMA = {
    "type": "object",
    "properties": {
        "filePath": {"type": "string"},
        "offset": {"type": "integer"},
        "ratio": {"type": "number"},
        "replaceAll": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "format": {"type": "string", "enum": ["text", "markdown", "html"]},
        "anything": {},
    },
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


def parse(*tokens: str, notices: list[str] | None = None) -> dict:
    sink = notices if notices is not None else []
    return parse_arguments(list(tokens), SCHEMA, notice=sink.append)


def test_each_form() -> None:
    assert parse("filePath=README.md", "offset=10", "ratio=0.5", "replaceAll=yes") == {
        "filePath": "README.md",
        "offset": 10,
        "ratio": 0.5,
        "replaceAll": True,
    }
    assert parse('tags:=["a", "b"]', "options:={}", "maybe:=null") == {
        "tags": ["a", "b"],
        "options": {},
        "maybe": None,
    }
    assert parse("tags=[1]") == {"tags": [1]}
    assert parse("maybe=7", "format=html") == {"maybe": 7, "format": "html"}


def test_digit_strings_stay_strings_for_string_fields() -> None:
    assert parse("filePath=007") == {"filePath": "007"}
    assert parse("filePath=") == {"filePath": ""}


def test_json_object_base_is_overridden_by_later_pairs() -> None:
    assert parse('{"filePath": "a", "offset": 1}', "offset=2") == {"filePath": "a", "offset": 2}


def test_file_forms(tmp_path) -> None:
    text = tmp_path / "body.txt"
    text.write_text("hello\nworld\n")
    data = tmp_path / "tags.json"
    data.write_text('["x", "y"]')
    assert parse(f"filePath=@{text}", f"tags:=@{data}") == {"filePath": "hello\nworld\n", "tags": ["x", "y"]}
    with pytest.raises(ArgsError, match="cannot read"):
        parse(f"filePath=@{tmp_path / 'missing'}")


def test_type_errors_name_the_field_and_type() -> None:
    with pytest.raises(ArgsError, match=r"offset: expected integer, got 'ten'"):
        parse("offset=ten")
    with pytest.raises(ArgsError, match="replaceAll: expected boolean"):
        parse("replaceAll=maybe")
    with pytest.raises(ArgsError, match="not valid JSON"):
        parse("tags:=[")
    with pytest.raises(ArgsError, match="use key=value"):
        parse("justaword")


def test_suffix_and_case_resolution() -> None:
    notices: list[str] = []
    assert parse("path=README.md", notices=notices) == {"filePath": "README.md"}
    assert notices == ["note: 'path' taken as 'filePath'"]
    assert parse("OFFSET=3") == {"offset": 3}


def test_unknown_key_lists_close_matches() -> None:
    with pytest.raises(ArgsError) as caught:
        parse("ofset=3")
    assert "Did you mean: offset" in str(caught.value)
    assert "This tool takes: filePath, offset" in str(caught.value)


def test_ambiguous_suffix_is_an_error() -> None:
    with pytest.raises(ArgsError, match="unknown argument 'e'"):
        resolve_key("e", ["filePath", "oldValue", "name"], lambda m: None)


@given(st.text().filter(lambda s: not s.startswith("@")))
def test_any_text_round_trips_for_a_string_field(value: str) -> None:
    assert parse(f"filePath={value}") == {"filePath": value}


@given(st.integers())
def test_integers_round_trip(value: int) -> None:
    assert parse(f"offset={value}") == {"offset": value}


@given(json_values)
def test_json_form_is_never_coerced(value) -> None:
    assert parse(f"anything:={json.dumps(value)}") == {"anything": value}
    assert parse(f"filePath:={json.dumps(value)}") == {"filePath": value}


@given(st.text())
def test_coerce_never_raises_anything_but_args_error(text: str) -> None:
    for node in SCHEMA["properties"].values():
        with contextlib.suppress(ArgsError):
            coerce(text, node)
