"""Plain arguments (issue 19, item 3: validation without paying for what the call does not need): a call
checked against the recorded facts of a tool's model gets exactly what the model would give it, or is
left to the model, whose error text is then the one the model reads."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from opencode_cli.errors import InvalidArgumentsError
from opencode_cli.plain_args import PlainArguments, check, facts_of
from opencode_cli.tools import _record, _schemas

WITH_FACTS = [tool_id for tool_id in _schemas.RECORDED if _record.live_facts(tool_id) is not None]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["hover", "documentSymbol", "nope", "", "1", "true"]),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def test_the_file_tools_have_facts() -> None:
    assert {"read", "glob", "grep", "edit", "write", "apply_patch", "bash", "skill", "lsp"} <= set(WITH_FACTS)


@pytest.mark.parametrize("tool_id", WITH_FACTS)
@given(data=st.data())
def test_plain_arguments_are_what_the_model_makes_of_them(tool_id: str, data: st.DataObject) -> None:
    model = _record.live_model(tool_id)
    facts = _record.live_facts(tool_id)
    assert facts is not None
    names = list(facts["fields"])
    keys = data.draw(st.lists(st.sampled_from([*names, "extra", "filepath"]), unique=True, max_size=6))
    args = {key: data.draw(VALUES, label=key) for key in keys}
    plain = check(facts, args)
    try:
        validated = model.model_validate(args)
    except Exception:
        assert plain is None, (args, plain)
        return
    if plain is not None:
        for name in names:
            mine, theirs = getattr(plain, name), getattr(validated, name)
            assert type(mine) is type(theirs) and mine == theirs, (name, args)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"filePath": "/a"}, {"filePath": "/a", "offset": None, "limit": None}),
        ({"filePath": "/a", "unknown": 1}, {"filePath": "/a", "offset": None, "limit": None}),
        ({"filePath": "/a", "offset": 3}, None),  # offset has a validator of its own
        ({"filePath": 3}, None),
        ({"offset": 3}, None),
        ({}, None),
    ],
)
def test_read_s_facts(args: dict[str, Any], expected: dict[str, Any] | None) -> None:
    facts = _record.live_facts("read")
    assert facts is not None
    plain = check(facts, args)
    assert (plain.__dict__ if plain is not None else None) == expected


def test_the_error_text_is_the_model_s_whichever_way(make_project: Any) -> None:
    project = make_project()
    tool = project.registry.get("read").tool.load()
    assert tool._plain is not None and tool._plain() is not None  # the facts are in use
    with pytest.raises(InvalidArgumentsError) as plain_way:
        tool.validate({"filePath": 7})
    tool._plain = None
    with pytest.raises(InvalidArgumentsError) as model_way:
        tool.validate({"filePath": 7})
    assert str(plain_way.value) == str(model_way.value)
    assert '["filePath"]: Input should be a valid string' in str(model_way.value)


class Plain(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    count: int = Field(0, ge=0, le=10)
    flag: StrictBool | None = None
    mode: Literal["a", "b"] = "a"
    label: str | None = Field(None, min_length=2, max_length=4)
    total: int = 0


@given(
    st.dictionaries(
        st.sampled_from(["name", "count", "flag", "mode", "label", "total", "other"]), VALUES, max_size=5
    )
)
@example({"name": "x", "total": True})  # pydantic makes 1 of it: a plain int it is not
@example({"name": "x", "count": 11})
@example({"name": "x", "label": "a"})
@example({"name": "x", "mode": "c"})
@example({"name": None})
@settings(max_examples=300)
def test_bounds_literals_and_nulls_agree_with_pydantic(args: dict[str, Any]) -> None:
    facts = facts_of(Plain)
    assert facts is not None
    plain = check(facts, args)
    try:
        validated = Plain.model_validate(args)
    except Exception:
        assert plain is None
        return
    if plain is not None:
        assert plain == PlainArguments(validated.model_dump())
        assert all(type(getattr(plain, k)) is type(getattr(validated, k)) for k in Plain.model_fields)


class Listed(BaseModel):
    items: list[int]


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str


class Whole(BaseModel):
    name: str

    @model_validator(mode="after")
    def _check(self) -> Whole:
        return self


class Factory(BaseModel):
    tags: str = Field(default_factory=str)


class Aliased(BaseModel):
    name: str = Field(alias="Name")


class Checked(BaseModel):
    name: str

    @field_validator("*")
    @classmethod
    def _any(cls, value: Any) -> Any:
        return value


@pytest.mark.parametrize("model", [Listed, Forbidding, Whole, Factory, Aliased])
def test_a_model_the_facts_cannot_say_has_none(model: type[BaseModel]) -> None:
    assert facts_of(model) is None


def test_a_field_validator_marks_its_fields_checked() -> None:
    facts = facts_of(Checked)
    assert facts is not None and facts["fields"]["name"]["checked"] is True
    assert check(facts, {"name": "x"}) is None
