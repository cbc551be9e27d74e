"""The built-in ``question`` tool (builtin-tools spec §14; test list "question.test.ts" in §17), its gating
(core spec §3.1-§3.2), the default rules (spec §1.6), and how the CLI reads answers."""

from __future__ import annotations

from typing import Any

import pytest
from _harness import Asker, Recorder

from opencode_cli import Project
from opencode_cli.errors import InvalidArgumentsError, QuestionDismissedError, ToolError
from opencode_cli.tools._question import DISMISSED, NO_ASKER


def question(text: str, header: str = "Pick", labels: tuple[str, ...] = ("A", "B"), **extra: Any) -> dict:
    return {
        "question": text,
        "header": header,
        "options": [{"label": label, "description": f"{label} option"} for label in labels],
        **extra,
    }


def ask(project: Project, questions: list[dict], asker: Any, **options: Any) -> Any:
    return project.run_tool("question", {"questions": questions}, extra={"question": asker}, **options)


# -- question.test.ts --------------------------------------------------------------------------------------


def test_one_question_answered_title(project: Project) -> None:
    result = ask(
        project, [question("What is your favorite color?", "Color", ("Red", "Blue"))], Asker([["Red"]])
    )
    assert result.title == "Asked 1 question"


def test_header_length_is_not_validated(project: Project) -> None:
    q = question("What is your favorite animal?", "This Header is Over 12", ("Dog", "Cat"))
    result = ask(project, [q], Asker([["Dog"]]))
    assert '"What is your favorite animal?"="Dog"' in result.output


# -- output ------------------------------------------------------------------------------------------------


def test_output_text_lists_every_question(project: Project) -> None:
    questions = [question("First?"), question("Second?", multiple=True), question("Third?")]
    result = ask(project, questions, Asker([["A"], ["A", "B"], []]))
    assert result.output == (
        'User has answered your questions: "First?"="A", "Second?"="A, B", "Third?"="Unanswered". '
        "You can now continue with the user's answers in mind."
    )
    assert result.title == "Asked 3 questions"
    assert result.metadata == {"answers": [["A"], ["A", "B"], []], "truncated": False}


def test_custom_answers_are_reported_as_typed(project: Project) -> None:
    result = ask(project, [question("Name?")], Asker([["Something else entirely"]]))
    assert '"Name?"="Something else entirely"' in result.output


def test_missing_answers_count_as_unanswered(project: Project) -> None:
    result = ask(project, [question("One?"), question("Two?")], Asker([["A"]]))
    assert '"Two?"="Unanswered"' in result.output
    assert result.metadata["answers"] == [["A"], []]


def test_no_questions(project: Project) -> None:
    asker = Asker([])
    result = ask(project, [], asker)
    assert result.title == "Asked 0 questions"
    assert asker.seen == []  # nothing to put to the user


# -- the host asker --------------------------------------------------------------------------------------


def test_asker_receives_the_questions_with_custom_answers_allowed(project: Project) -> None:
    asker = Asker([["A"], ["B"]])
    ask(project, [question("One?", custom=False), question("Two?", multiple=True)], asker)
    [questions] = asker.seen
    assert questions == [
        {
            "question": "One?",
            "header": "Pick",
            "options": [
                {"label": "A", "description": "A option"},
                {"label": "B", "description": "B option"},
            ],
            "multiple": False,
            "custom": True,  # an extra "custom" key from the model is ignored: the tool always allows it
        },
        {
            "question": "Two?",
            "header": "Pick",
            "options": [
                {"label": "A", "description": "A option"},
                {"label": "B", "description": "B option"},
            ],
            "multiple": True,
            "custom": True,
        },
    ]


def test_a_plain_function_asker_works(project: Project) -> None:
    result = ask(project, [question("Q?")], lambda questions: [["B"]] * len(questions))
    assert '"Q?"="B"' in result.output


@pytest.mark.parametrize("dismissal", [None, QuestionDismissedError()])
def test_dismissed(project: Project, dismissal: Any) -> None:
    with pytest.raises(ToolError) as caught:
        ask(project, [question("Q?")], Asker(dismissal))
    assert str(caught.value) == DISMISSED == "The user dismissed this question"


def test_no_asker_is_an_error(project: Project) -> None:
    with pytest.raises(ToolError) as caught:
        project.run_tool("question", {"questions": [question("Q?")]})
    assert str(caught.value) == NO_ASKER


def test_a_malformed_answer_from_the_host_is_an_error(project: Project) -> None:
    with pytest.raises(ToolError, match="not a list of answers"):
        ask(project, [question("Q?")], Asker("A"))
    with pytest.raises(ToolError, match="not a list of strings"):
        ask(project, [question("Q?")], Asker([[1]]))


def test_a_bare_string_per_question_is_accepted(project: Project) -> None:
    assert '"Q?"="A"' in ask(project, [question("Q?")], Asker(["A"])).output


def test_no_permission_is_asked(project: Project) -> None:
    prompt = Recorder()
    from opencode_cli.permission import Rule

    ask(project, [question("Q?")], Asker([["A"]]), prompt=prompt, rules=[Rule("*", "*", "ask")])
    assert prompt.requests == []


# -- parameters ------------------------------------------------------------------------------------------


def test_schema_shape(project: Project) -> None:
    schema = project.registry.get("question").tool.load().schema()
    assert schema["required"] == ["questions"]
    item = schema["properties"]["questions"]["items"]
    assert item["required"] == ["question", "header", "options"]
    assert item["properties"]["multiple"] == {
        "type": "boolean",
        "description": item["properties"]["multiple"]["description"],
    }
    option = item["properties"]["options"]["items"]
    assert option["required"] == ["label", "description"]
    assert "max 30 chars" in item["properties"]["header"]["description"]
    assert "1-5 words" in option["properties"]["label"]["description"]
    assert "description" not in item and "description" not in option  # no class docstrings
    assert "$defs" not in schema


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"questions": [{"options": ["a"]}]},
        {"questions": [{"question": "Q", "header": "H"}]},
        {"questions": [{"question": "Q", "header": "H", "options": [{"label": "A"}]}]},
    ],
)
def test_invalid_arguments(project: Project, args: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        project.run_tool("question", args, extra={"question": Asker([])})
    assert "The question tool was called with invalid arguments" in str(caught.value)


def test_invalid_arguments_name_the_json_path(project: Project) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        project.run_tool("question", {"questions": [{"options": ["a"]}]})
    assert '["questions"][0]["question"]' in str(caught.value)


def test_extra_custom_key_is_tolerated(project: Project) -> None:
    result = ask(project, [question("Q?", custom=False, extra_key=1)], Asker([["A"]]))
    assert result.title == "Asked 1 question"


# -- gating and default rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("client", [None, "cli", "app", "desktop"])
def test_offered_to_the_interactive_clients(make_project: Any, client: str | None) -> None:
    project = make_project(extra_env={"OPENCODE_CLIENT": client} if client else {})
    assert "question" not in {h.entry.id for h in project.generation.offer().hidden}
    assert "question" in [d.id for d in project.tools()]


def test_gated_for_other_clients_with_the_reason(make_project: Any) -> None:
    project = make_project(extra_env={"OPENCODE_CLIENT": "acp"})
    reason = {h.entry.id: h.reason for h in project.generation.offer().hidden}["question"]
    assert "OPENCODE_CLIENT is 'acp'" in reason and "OPENCODE_ENABLE_QUESTION_TOOL" in reason
    assert "question" not in [d.id for d in project.tools()]


def test_forced_on_by_the_flag(make_project: Any) -> None:
    project = make_project(extra_env={"OPENCODE_CLIENT": "acp", "OPENCODE_ENABLE_QUESTION_TOOL": "1"})
    assert "question" in [d.id for d in project.tools()]


def test_registered_second_in_opencode_order(project: Project) -> None:
    ids = [entry.id for entry in project.registry.entries.values() if entry.source.kind == "builtin"]
    assert ids[:3] == ["invalid", "question", "bash"]
    expected = ["invalid", "question", "bash", "read", "glob", "grep", "edit", "write", "task", "webfetch"]
    expected += ["todowrite", "websearch", "skill", "apply_patch", "execute", "lsp", "plan_exit"]
    assert ids == [i for i in expected if i in ids]


@pytest.mark.parametrize(
    ("agent", "offered"), [("build", True), ("plan", True), ("general", False), ("explore", False)]
)
def test_denied_for_all_agents_but_build_and_plan(project: Project, agent: str, offered: bool) -> None:
    assert ("question" in [d.id for d in project.tools(agent=agent)]) is offered


# -- the CLI's reading of answers --------------------------------------------------------------------------


def _cli_question(**extra: Any) -> dict[str, Any]:
    return {
        "question": "Colour?",
        "header": "C",
        "options": [{"label": "Red", "description": ""}, {"label": "Dark Blue", "description": ""}],
        "multiple": False,
        "custom": True,
        **extra,
    }


@pytest.mark.parametrize(
    ("extra", "text", "answers", "wants_custom", "error"),
    [
        ({}, "1", ["Red"], False, None),
        ({}, "dark blue", ["Dark Blue"], False, None),
        ({}, "  2 ", ["Dark Blue"], False, None),
        ({}, "3", [], True, None),
        ({}, "4", [], False, "4 is not one of the choices 1-3"),
        ({}, "Green, please", ["Green, please"], False, None),
        ({}, "", [], False, None),
        ({"custom": False}, "3", [], False, "3 is not one of the choices 1-2"),
        ({"custom": False}, "Green", [], False, '"Green" is not one of the choices: Red, Dark Blue'),
        ({"multiple": True}, "1,2", ["Red", "Dark Blue"], False, None),
        ({"multiple": True}, "2, red, 2", ["Dark Blue", "Red"], False, None),
        ({"multiple": True}, "1, mauve", ["Red", "mauve"], False, None),
        ({"multiple": True}, "1,3", ["Red"], True, None),
        ({"multiple": True}, "", [], False, None),
    ],
)
def test_interpret(
    extra: dict[str, Any], text: str, answers: list[str], wants_custom: bool, error: str | None
) -> None:
    from opencode_cli.cli.question_prompt import interpret

    choice = interpret(_cli_question(**extra), text)
    assert (choice.answers, choice.wants_custom, choice.error) == (answers, wants_custom, error)


def test_terminal_asker_uses_answers_then_needs_a_terminal() -> None:
    import asyncio
    import io

    from opencode_cli.cli.question_prompt import NO_TERMINAL, TerminalAsker

    asker = TerminalAsker(["2", "x"], stdin=io.StringIO(), stderr=io.StringIO())
    assert asyncio.run(asker([_cli_question()])) == [["Dark Blue"]]
    assert asker.unused == ["x"]
    assert asyncio.run(asker([_cli_question()])) == [["x"]]
    with pytest.raises(ToolError) as caught:
        asyncio.run(asker([_cli_question()]))
    assert str(caught.value) == NO_TERMINAL
    asker = TerminalAsker(["1"], stdin=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(ToolError, match=r"Only 1 --answer value\(s\) for 2 questions"):
        asyncio.run(asker([_cli_question(), _cli_question(question="Size?")]))


# -- offered only where someone can answer -------------------------------------------------------------


def offered_names(session: Any, **options: Any) -> list[str]:
    return [wire.name for wire in session.resolve(**options)]


def test_a_session_without_an_asker_is_not_offered_question(project: Project) -> None:
    with project.session() as session:
        assert "question" not in offered_names(session)
        assert "question" not in offered_names(session, tools={"question": True})  # nobody could answer
        assert "question" not in offered_names(session, tools={"question": True, "*": True})
        assert "read" in offered_names(session)
    # still registered, and the project's (the registry's) view offers it under the client rule
    assert "question" in project.registry.entries
    assert "question" in project.generation.offer().ids()
    hidden = {h.entry.id: h.reason for h in project.generation.offer(switches={"question": False}).hidden}
    assert hidden["question"] == "switched off for this request"


def test_a_session_with_an_asker_is_offered_question(project: Project) -> None:
    with project.session(extra={"question": Asker([["A"]])}) as session:
        assert "question" in offered_names(session)
        assert "question" not in offered_names(session, tools={"question": False})


def test_a_call_to_question_without_an_asker_is_an_unavailable_tool(project: Project) -> None:
    import asyncio

    from opencode_cli.session import ToolCall

    with project.session() as session:
        part = asyncio.run(session.dispatch(ToolCall("question", '{"questions": []}')))
    assert part.tool == "invalid"
    assert "Model tried to call unavailable tool 'question'. Available tools: " in part.text
    listing = part.text.partition("Available tools: ")[2].removesuffix(".").split(", ")
    assert "question" not in listing and "read" in listing
