"""The built-ins' schemas against core spec §11.4, every produced schema against the draft 2020-12
meta-schema, and a property test over generated pydantic models: no ``$ref`` ever reaches a provider and
no profile's rules are broken (§7.1, §7.2 and the opt-in ``openai-strict`` profile).

Every case runs: the built-ins are listed here, and a test checks that the registry holds exactly them.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator
from typing import Any, Literal, Optional

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from opencode_cli.errors import InvalidArgumentsError
from opencode_cli.project import Project
from opencode_cli.schema import DRAFT_2020_12, MAX_SAFE_INTEGER, from_model
from opencode_cli.schema_profiles import adapt

PROFILES = ("default", "openai", "openai-strict", "gemini", "kimi")
COMBINERS = ("anyOf", "oneOf", "allOf")
OPENAI_KEYS = frozenset(
    {"$ref", "description", "enum", "properties", "required", "items", "additionalProperties", "type"}
    | set(COMBINERS)
    | {"$defs", "definitions"}
)


#: The built-in tools, in registry order (core spec §3.1); a test checks the registry holds exactly these,
#: so every case below runs (none is skipped) and a new built-in must be added here to be covered.
BUILTINS = [
    "invalid", "question", "bash", "read", "glob", "grep", "edit", "write", "task", "webfetch", "todowrite",
    "websearch", "skill", "apply_patch", "execute", "lsp", "plan_exit",
]  # fmt: skip


def builtin(project: Project, tool_id: str) -> Any:
    return project.registry.get(tool_id).tool.load()


# -- walking schemas -----------------------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_VALUES = (
    "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "additionalItems",
)  # fmt: skip
_SCHEMA_LISTS = (*COMBINERS, "prefixItems", "items")


def nodes(schema: Any, path: str = "#") -> Iterator[tuple[str, Any]]:
    """Every subschema (booleans included) with a JSON-pointer-like path; property names are not nodes."""
    yield path, schema
    if not isinstance(schema, dict):
        return
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, child in schema[key].items():
                yield from nodes(child, f"{path}/{key}/{name}")
    for key in _SCHEMA_VALUES:
        if isinstance(schema.get(key), dict | bool) and key in schema:
            yield from nodes(schema[key], f"{path}/{key}")
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for index, child in enumerate(schema[key]):
                yield from nodes(child, f"{path}/{key}/{index}")


def has_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(has_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(has_key(v, key) for v in node)
    return False


def nullable(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(nullable(branch) for key in COMBINERS for branch in node.get(key) or [])


def openai_violations(schema: Any) -> list[str]:
    found = []
    for path, node in nodes(schema):
        if not isinstance(node, dict):
            if not path.endswith("/additionalProperties"):  # the one place a boolean is kept
                found.append(f"{path}: boolean schema")
            continue
        if extra := set(node) - OPENAI_KEYS:
            found.append(f"{path}: keys outside the whitelist {sorted(extra)}")
        kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
        if "object" in kinds and "properties" not in node:
            found.append(f"{path}: object without properties")
        if "array" in kinds and "items" not in node:
            found.append(f"{path}: array without items")
    return found


def gemini_violations(schema: Any) -> list[str]:
    found = []
    for path, node in nodes(schema):
        if not isinstance(node, dict):
            continue
        combined = any(key in node for key in COMBINERS)
        kind = node.get("type")
        if isinstance(kind, list):
            found.append(f"{path}: array-form type {kind}")
        if "enum" in node:
            if not all(isinstance(value, str) for value in node["enum"]):
                found.append(f"{path}: enum with non-string values {node['enum']}")
            if kind in ("integer", "number"):
                found.append(f"{path}: {kind} enum")
        if kind == "array" and not combined and "items" not in node:
            found.append(f"{path}: array without items")
        if isinstance(kind, str) and kind != "object" and not combined:
            found.extend(f"{path}: {kind} with {key}" for key in ("properties", "required") if key in node)
        listed = node.get("required") if isinstance(node.get("properties"), dict) else None
        if isinstance(listed, list) and (missing := set(listed) - set(node["properties"])):
            found.append(f"{path}: required names missing properties {sorted(missing)}")
    return found


def strict_violations(schema: Any) -> list[str]:
    found = []
    for path, node in nodes(schema):
        if not isinstance(node, dict):
            continue
        kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
        if "object" in kinds or "properties" in node:
            if node.get("additionalProperties") is not False:
                found.append(f"{path}: object not closed")
            properties = list(node.get("properties") or {})
            if sorted(node.get("required") or []) != sorted(properties):
                found.append(f"{path}: required {node.get('required')} != properties {properties}")
    return found


def free_form(schema: Any) -> bool:
    """Whether some object takes keys it does not list (a ``dict[str, X]``): strict mode cannot say that."""
    for _, node in nodes(schema):
        if isinstance(node, dict) and node.get("type") == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) or "patternProperties" in node:
                return True
            if "properties" not in node and extra is not False:
                return True
    return False


RULES = {
    "openai": openai_violations,
    "openai-strict": lambda s: openai_violations(s) + strict_violations(s),
    "gemini": gemini_violations,
}


def check_profiles(schema: dict[str, Any]) -> None:
    """Every profile's output is a valid draft 2020-12 schema that keeps that profile's rules.

    openai-strict falls back to the plain OpenAI schema (sent with ``strict: false``) when the schema has a
    free-form object, which a strict schema would close to ``{}``.
    """
    jsonschema.Draft202012Validator.check_schema(schema)
    for profile in PROFILES:
        adapted = adapt(schema, profile)
        jsonschema.Draft202012Validator.check_schema(adapted)
        assert not has_key(adapted, "$ref"), profile
        if profile == "openai-strict" and free_form(schema):
            assert adapted == adapt(schema, "openai")
            continue
        rules = RULES.get(profile)
        violations = rules(adapted) if rules else []
        assert not violations, f"{profile}: {violations}"


# -- the built-ins (§11.4) -----------------------------------------------------------------------------


def test_the_builtins_are_registered(project: Project) -> None:
    registered = [entry.id for entry in project.registry.entries.values() if entry.source.kind == "builtin"]
    assert registered == BUILTINS, "a built-in was added or removed: update BUILTINS"


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_builtin_schema_is_normalised(project, tool_id: str) -> None:
    schema = builtin(project, tool_id).schema()

    assert next(iter(schema)) == "$schema" and schema["$schema"] == DRAFT_2020_12
    assert schema["type"] == "object"
    # named child schemas are inlined: no $defs or $ref anywhere
    assert not has_key(schema, "$defs") and not has_key(schema, "definitions")
    assert not has_key(schema, "$ref")
    # OpenCode's schemas carry no generated titles
    assert not any(isinstance(n, dict) and "title" in n for _, n in nodes(schema))


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_builtin_integers_are_bounded(project, tool_id: str) -> None:
    schema = builtin(project, tool_id).schema()

    for path, node in nodes(schema):
        if isinstance(node, dict) and node.get("type") == "integer":
            assert "maximum" in node and "minimum" in node, path
            assert -MAX_SAFE_INTEGER <= node["minimum"] <= node["maximum"] <= MAX_SAFE_INTEGER, path


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_builtin_optional_keys_are_not_nullable(project, tool_id: str) -> None:
    schema = builtin(project, tool_id).schema()

    for path, node in nodes(schema):
        if isinstance(node, dict) and isinstance(node.get("properties"), dict):
            required = set(node.get("required") or [])
            for name, prop in node["properties"].items():
                if name not in required:
                    assert not nullable(prop), f"{path}/properties/{name} is optional but nullable"


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_builtin_schemas_validate_under_every_profile(project, tool_id: str) -> None:
    check_profiles(builtin(project, tool_id).schema())


def test_read_offset_keeps_its_bound_and_gains_the_maximum(project) -> None:
    offset = builtin(project, "read").schema()["properties"]["offset"]
    assert offset["type"] == "integer"
    assert (offset["minimum"], offset["maximum"]) == (0, MAX_SAFE_INTEGER)


def test_bash_timeout_is_an_optional_bounded_integer(project) -> None:
    schema = builtin(project, "bash").schema()
    timeout = schema["properties"]["timeout"]
    assert timeout["type"] == "integer" and timeout["maximum"] == MAX_SAFE_INTEGER
    assert schema["required"] == ["command"]


# accept/reject pairs of §11.4, plus type errors
PAIRS: list[tuple[str, dict[str, Any], bool]] = [
    ("apply_patch", {"patchText": "*** Begin Patch\n*** End Patch"}, True),
    ("apply_patch", {}, False),
    ("apply_patch", {"patchText": 42}, False),
    ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"}, False),
    ("bash", {"command": "ls"}, True),
    ("bash", {"command": "ls", "timeout": 5000, "workdir": "/tmp"}, True),
    ("bash", {"timeout": 5000}, False),
    ("bash", {"command": "ls", "timeout": "soon"}, False),
    ("edit", {"filePath": "/a", "oldString": "x", "newString": "y"}, True),
    ("edit", {"filePath": "/a", "oldString": "x", "newString": "y", "replaceAll": True}, True),
    ("edit", {"oldString": "x", "newString": "y"}, False),
    ("edit", {"filePath": "/a", "newString": "y"}, False),
    ("edit", {"filePath": "/a", "oldString": "x"}, False),
    ("glob", {"pattern": "**/*.py"}, True),
    ("glob", {"pattern": "*.py", "path": "/src"}, True),
    ("glob", {"path": "/src"}, False),
    ("grep", {"pattern": "TODO"}, True),
    ("grep", {"pattern": "TODO", "path": "/src", "include": "*.py"}, True),
    ("grep", {"include": "*.py"}, False),
    ("invalid", {"tool": "nope", "error": "unknown"}, True),
    ("invalid", {"tool": "nope"}, False),
    ("invalid", {"error": "unknown"}, False),
    ("read", {"filePath": "/a"}, True),
    ("read", {"filePath": "/a", "offset": 10, "limit": 5}, True),
    ("read", {}, False),
    ("read", {"filePath": "/a", "offset": "middle"}, False),
    ("write", {"filePath": "/a", "content": "x"}, True),
    ("write", {"content": "x"}, False),
    ("question", {}, False),
    ("question", {"questions": "which?"}, False),
    ("skill", {"name": "release"}, True),
    ("skill", {}, False),
    ("task", {}, False),
    ("plan_exit", {}, True),
    ("webfetch", {}, False),
]


@pytest.mark.parametrize(("tool_id", "args", "accepted"), PAIRS)
def test_accept_reject_pairs(project, tool_id: str, args: dict[str, Any], accepted: bool) -> None:
    tool = builtin(project, tool_id)
    schema_says = jsonschema.Draft202012Validator(tool.schema()).is_valid(args)

    if accepted:
        tool.validate(args)
    else:
        with pytest.raises(InvalidArgumentsError) as caught:
            tool.validate(args)
        assert str(caught.value).startswith(f"The {tool_id} tool was called with invalid arguments: ")
        assert str(caught.value).endswith("Please rewrite the input so it satisfies the expected schema.")
    # what the model is shown agrees with what the tool accepts
    assert schema_says is accepted


def test_question_schema_inlines_its_named_children(project) -> None:
    schema = builtin(project, "question").schema()

    assert not has_key(schema, "$defs") and not has_key(schema, "$ref")
    options = schema["properties"]["questions"]["items"]["properties"]["options"]
    assert options["items"]["properties"]["label"]["type"] == "string"


def test_edit_replace_all_is_optional_and_false_by_default(project) -> None:
    params = builtin(project, "edit").validate({"filePath": "/a", "oldString": "x", "newString": "y"})
    assert not params.replaceAll
    schema = builtin(project, "edit").schema()
    assert "replaceAll" in schema["properties"] and "replaceAll" not in schema["required"]


def test_webfetch_format_defaults_to_markdown(project) -> None:
    tool = builtin(project, "webfetch")
    fmt = tool.schema()["properties"]["format"]
    assert fmt == {**fmt, "type": "string", "enum": ["text", "markdown", "html"], "default": "markdown"}
    assert "anyOf" not in fmt
    assert tool.validate({"url": "https://example.com"}).format == "markdown"


# -- generated models ----------------------------------------------------------------------------------

_RESERVED = set(dir(BaseModel)) | {"schema", "json", "dict", "copy", "validate", "construct", "fields"}
field_names = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,7}", fullmatch=True).filter(
    lambda name: name not in _RESERVED and not name.startswith("model_") and not keyword.iskeyword(name)
)
descriptions = st.none() | st.text(min_size=1, max_size=20)

# a type and a strategy for one of its values (``None``: no default can be drawn for it)
Spec = tuple[Any, Any]

base_types: st.SearchStrategy[Spec] = st.one_of(
    st.just((str, st.text(max_size=5))),
    st.just((int, st.integers(-5, 5))),
    st.just((float, st.floats(-1, 1))),
    st.just((bool, st.booleans())),
    st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=3, unique=True).map(
        lambda values: (Literal[tuple(values)], st.sampled_from(values))
    ),
    st.lists(st.integers(-3, 9), min_size=1, max_size=3, unique=True).map(
        lambda values: (Literal[tuple(values)], st.sampled_from(values))
    ),
    st.just((Literal["a", 1, True], st.sampled_from(["a", 1, True]))),
)


def _model_of(name: str, fields: list[tuple[str, Spec, bool, str | None]], data: st.DataObject) -> type:
    definitions: dict[str, Any] = {}
    for field_name, (annotation, values), optional, description in fields:
        default: Any = ...
        if optional:
            default = data.draw(values) if values is not None else None
            if values is None:
                annotation = Optional[annotation]  # noqa: UP045 (a runtime-built annotation)
        definitions[field_name] = (annotation, Field(default, description=description))
    return create_model(name, **definitions)


def _composite(inner: st.SearchStrategy[Spec]) -> st.SearchStrategy[Spec]:
    return st.one_of(
        inner.map(lambda spec: (list[spec[0]], st.just([]))),
        inner.map(lambda spec: (dict[str, spec[0]], st.just({}))),
        inner.map(lambda spec: (Optional[spec[0]], st.none())),  # noqa: UP045
        st.builds(
            lambda fields, name, data: (_model_of(name, fields, data), None),
            st.lists(
                st.tuples(field_names, inner, st.booleans(), descriptions),
                max_size=3,
                unique_by=lambda f: f[0],
            ),
            st.sampled_from(["Item", "Inner", "Options"]),
            st.data(),
        ),
    )


types = st.recursive(base_types, _composite, max_leaves=6)
models = st.builds(
    lambda fields, data: _model_of("Params", fields, data),
    st.lists(
        st.tuples(field_names, types, st.booleans(), descriptions), max_size=5, unique_by=lambda f: f[0]
    ),
    st.data(),
)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(models)
def test_generated_models_never_yield_a_ref_and_keep_every_profile_rule(model: type[BaseModel]) -> None:
    schema = from_model(model)

    assert not has_key(schema, "$ref") and not has_key(schema, "$defs")
    assert schema["$schema"] == DRAFT_2020_12
    check_profiles(schema)
    # optional fields are never sent as nullable (§7.1), required ones as the model says
    required = set(schema.get("required") or [])
    assert required == {name for name, info in model.model_fields.items() if info.is_required()}
    for name, prop in schema["properties"].items():
        if name not in required:
            assert not nullable(prop), name
    for path, node in nodes(schema):
        if isinstance(node, dict) and node.get("type") == "integer":
            assert "maximum" in node and "minimum" in node, path


def test_a_required_nested_nullable_model_survives_every_profile() -> None:
    class Leaf(BaseModel):
        level: Literal[1, 2, 3] = 1
        tags: dict[str, int] = {}

    class Params(BaseModel):
        leaf: Leaf | None
        leaves: list[Leaf] = []

    schema = from_model(Params)
    check_profiles(schema)
    gemini_level = adapt(schema, "gemini")["properties"]["leaves"]["items"]["properties"]["level"]
    assert gemini_level["enum"] == ["1", "2", "3"] and gemini_level["type"] == "string"
