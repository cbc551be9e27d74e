"""The repair of a raw call as a function of the call, the tools offered and the rules (core spec §4.2):
whatever a model sends, it never raises, and the call becomes an offered tool or ``invalid``."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.parts import ToolCall
from opencode_cli.permission import Rule
from opencode_cli.registry import INVALID
from opencode_cli.session.repair import repair

OFFERED = {"read": None, "bash": None, "edit": None}
DENY_ALL = [Rule("*", "*", "deny", "agent")]

names = st.one_of(st.sampled_from([*OFFERED, "READ", "Bash", INVALID, "nope"]), st.text(max_size=20))
arguments = st.one_of(
    st.none(),
    st.text(max_size=60),
    st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4).map(json.dumps),
    st.dictionaries(st.text(max_size=8), st.booleans(), max_size=4),
)


@given(names, arguments, st.booleans())
def test_a_call_becomes_an_offered_tool_or_invalid(name: str, raw: object, deny_all: bool) -> None:
    repaired = repair(ToolCall(name, raw), OFFERED, DENY_ALL if deny_all else [])  # type: ignore[arg-type]
    assert repaired.name in OFFERED or repaired.name == INVALID
    if repaired.rerouted:
        assert repaired.name == INVALID and repaired.args["tool"] == name
        assert (repaired.refusal is not None) == deny_all
    else:
        assert repaired.refusal is None and repaired.name.lower() == name.lower()


def test_a_wrong_case_name_is_the_lower_case_tool() -> None:
    assert repair(ToolCall("Read", '{"filePath": "a"}'), OFFERED, []) == (
        "read",
        {"filePath": "a"},
        False,
        None,
    )


def test_an_unknown_name_lists_what_is_available_invalid_only_when_listed() -> None:
    listed = repair(ToolCall("nope", "{}"), OFFERED, [])
    assert listed.args["error"] == (
        "Model tried to call unavailable tool 'nope'. Available tools: bash, edit, invalid, read."
    )
    unlisted = repair(ToolCall("nope", "{}"), OFFERED, [], lists_invalid=False)
    assert unlisted.args["error"].endswith("Available tools: bash, edit, read.")


def test_a_reroute_without_invalid_is_refused_naming_invalid() -> None:
    repaired = repair(ToolCall("read", "{not json"), OFFERED, DENY_ALL)
    assert repaired.rerouted and repaired.refusal == (
        "Model tried to call unavailable tool 'invalid'. Available tools: bash, edit, read."
    )
    assert repaired.args["error"].startswith(
        "Invalid input for tool read: JSON parsing failed: Text: {not json."
    )
