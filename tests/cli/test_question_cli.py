"""``question``, ``plan_exit``, ``todowrite`` and ``skill`` through the real ``opencode`` command: on a
pseudo-terminal (pexpect), without a terminal, with ``--answer``; todo lists across processes; gating as
``tools list --all`` shows it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pexpect = pytest.importorskip("pexpect")

PLAN_MODE = {"OPENCODE_EXPERIMENTAL_PLAN_MODE": "1"}
COLOUR = {
    "question": "What is your favourite colour?",
    "header": "Colour",
    "options": [
        {"label": "Red", "description": "the warm one"},
        {"label": "Blue", "description": "the cool one"},
    ],
}
SIZES = {
    "question": "Which sizes?",
    "header": "Sizes",
    "multiple": True,
    "options": [
        {"label": "Small", "description": ""},
        {"label": "Medium", "description": ""},
        {"label": "Large", "description": ""},
    ],
}


def questions(*items: dict[str, Any]) -> str:
    return "questions:=" + json.dumps(list(items))


def spawn(cli_env: dict[str, str], *args: str, extra_env: dict[str, str] | None = None) -> Any:
    env = {k: v for k, v in cli_env.items() if k != "project"}
    env.update(extra_env or {})
    script = str(Path(sys.executable).parent / "opencode")
    return pexpect.spawn(script, list(args), cwd=cli_env["project"], env=env, encoding="utf-8", timeout=30)


def finish(child: Any) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


# -- question on a terminal ------------------------------------------------------------------------------


def test_question_prompt_shows_the_options_and_takes_a_number(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR))
    child.expect(r"\? Colour")
    child.expect("What is your favourite colour\\?")
    child.expect("1. Red - the warm one")
    child.expect("2. Blue - the cool one")
    child.expect("3. Type your own answer")
    child.expect("Choose 1-3: ")
    child.sendline("2")
    output, status = finish(child)
    assert status == 0
    assert (
        'User has answered your questions: "What is your favourite colour?"="Blue". '
        "You can now continue with the user's answers in mind." in output
    )


def test_question_prompt_takes_a_custom_answer(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR))
    child.expect("Choose 1-3: ")
    child.sendline("3")
    child.expect("Your answer: ")
    child.sendline("Green, obviously")
    output, status = finish(child)
    assert status == 0
    assert '"What is your favourite colour?"="Green, obviously"' in output


def test_question_prompt_takes_typed_text_and_labels(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR, SIZES), "--json")
    child.expect(r"\(1/2\)")
    child.expect("Choose 1-3: ")
    child.sendline("red")
    child.expect(r"Sizes \(2/2\)")
    child.expect("Choose one or more of 1-4, separated by commas \\(empty for none\\): ")
    child.sendline("1, large")
    output, status = finish(child)
    assert status == 0
    payload = json.loads(output[output.index("{") :])
    assert payload["title"] == "Asked 2 questions"
    assert payload["metadata"]["answers"] == [["Red"], ["Small", "Large"]]


def test_question_prompt_asks_again_after_a_bad_choice(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR))
    child.expect("Choose 1-3: ")
    child.sendline("7")
    child.expect("7 is not one of the choices 1-3")
    child.expect("Choose 1-3: ")
    child.sendline("")
    child.expect("Please choose one of 1-3.")
    child.expect("Choose 1-3: ")
    child.sendline("1")
    output, status = finish(child)
    assert status == 0 and '="Red"' in output


def test_end_of_input_dismisses(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR))
    child.expect("Choose 1-3: ")
    child.sendeof()
    output, status = finish(child)
    assert status == 1
    assert "The user dismissed this question" in output


def test_interrupt_stops_the_prompt_at_once(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR))
    child.expect("Choose 1-3: ")
    child.sendintr()
    output, status = finish(child)
    assert status == 130 and "interrupted" in output


# -- plan_exit on a terminal -----------------------------------------------------------------------------


def test_plan_exit_yes_on_a_terminal(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "plan_exit", "--agent", "plan", extra_env=PLAN_MODE)
    child.expect(r"\? Build Agent")
    child.expect(
        r"Plan at \.opencode/plans/\S+\.md is complete\. Would you like to switch to the build agent"
    )
    child.expect("1. Yes - Switch to build agent and start implementing the plan")
    child.expect("2. No - Stay with plan agent to continue refining the plan")
    child.expect("Choose 1-2: ")  # no "type your own answer" entry
    assert "Type your own answer" not in child.before
    child.sendline("1")
    output, status = finish(child)
    assert status == 0
    assert "User approved switching to build agent. Wait for further instructions." in output


def test_plan_exit_no_on_a_terminal(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "plan_exit", "--agent", "plan", extra_env=PLAN_MODE)
    child.expect("Choose 1-2: ")
    child.sendline("maybe")
    child.expect('"maybe" is not one of the choices: Yes, No')
    child.expect("Choose 1-2: ")
    child.sendline("no")
    output, status = finish(child)
    assert status == 1
    assert "The user dismissed this question" in output


# -- without a terminal, and --answer ------------------------------------------------------------------------


def test_without_a_terminal_the_question_fails_saying_so(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "question", questions(COLOUR))
    assert result.returncode == 1
    assert "There is no terminal to ask the user" in result.stderr
    assert "--answer" in result.stderr
    assert result.stdout == ""


def test_answers_from_the_command_line(run_process: Callable[..., Any]) -> None:
    result = run_process(
        "tools", "run", "question", questions(COLOUR, SIZES), "--answer", "Blue", "--answer", "1,3", "--json"
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["metadata"]["answers"] == [["Blue"], ["Small", "Large"]]
    assert payload["output"] == (
        'User has answered your questions: "What is your favourite colour?"="Blue", '
        '"Which sizes?"="Small, Large". You can now continue with the user\'s answers in mind.'
    )


def test_an_empty_answer_leaves_the_question_unanswered(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "question", questions(SIZES), "--answer", "")
    assert result.returncode == 0, result.stderr
    assert '"Which sizes?"="Unanswered"' in result.stdout


def test_too_few_answers_without_a_terminal(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "question", questions(COLOUR, SIZES), "--answer", "1")
    assert result.returncode == 1
    assert 'Only 1 --answer value(s) for 2 questions, and there is no terminal to ask "Which sizes?"' in (
        result.stderr
    )


def test_unused_answers_are_warned_about(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "question", questions(COLOUR), "--answer", "1", "--answer", "2")
    assert result.returncode == 0
    assert "warning: 1 --answer value(s) not used" in result.stderr


def test_remaining_questions_are_asked_on_the_terminal(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "run", "question", questions(COLOUR, SIZES), "--answer", "red")
    child.expect(r"Sizes \(2/2\)")
    child.sendline("2")
    output, status = finish(child)
    assert status == 0
    assert '"What is your favourite colour?"="Red", "Which sizes?"="Medium"' in output


@pytest.mark.parametrize(
    ("answer", "code", "text"),
    [
        ("yes", 0, "User approved switching to build agent. Wait for further instructions."),
        ("1", 0, "User approved switching to build agent."),
        ("No", 1, "The user dismissed this question"),
        ("2", 1, "The user dismissed this question"),
        ("later", 1, '"later" is not one of the choices: Yes, No'),
    ],
)
def test_plan_exit_with_answer(run_process: Callable[..., Any], answer: str, code: int, text: str) -> None:
    result = run_process(
        "tools", "run", "plan_exit", "--agent", "plan", "--answer", answer, extra_env=PLAN_MODE
    )
    assert result.returncode == code, result.stderr
    assert text in (result.stdout if code == 0 else result.stderr)


def test_plan_exit_without_a_terminal(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "run", "plan_exit", "--agent", "plan", extra_env=PLAN_MODE)
    assert result.returncode == 1
    assert "There is no terminal to ask the user" in result.stderr


# -- gating in tools list --all --------------------------------------------------------------------------


def hidden(run_process: Callable[..., Any], *args: str, extra_env: dict[str, str] | None = None) -> dict:
    result = run_process("tools", "list", "--all", "--json", *args, extra_env=extra_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    return {
        "offered": [t["id"] for t in data["tools"]],
        "hidden": {h["id"]: h["reason"] for h in data["hidden"]},
    }


def test_list_all_shows_the_gates(run_process: Callable[..., Any]) -> None:
    default = hidden(run_process)  # no terminal: nobody could answer, so it is not offered
    assert default["hidden"]["question"] == "switched off for this request"
    assert default["hidden"]["plan_exit"] == "experimental plan mode is off (OPENCODE_EXPERIMENTAL_PLAN_MODE)"

    other = hidden(run_process, extra_env={"OPENCODE_CLIENT": "acp"})
    assert "question" not in other["offered"]
    assert "OPENCODE_CLIENT is 'acp'" in other["hidden"]["question"]

    plan = hidden(run_process, "--agent", "plan", extra_env=PLAN_MODE)
    assert "plan_exit" in plan["offered"] and "plan_exit" not in plan["hidden"]
    build = hidden(run_process, extra_env=PLAN_MODE)
    assert build["hidden"]["plan_exit"] == "denied wholly by the agent's permission rules"


def test_list_all_text_names_the_reason(run_process: Callable[..., Any]) -> None:
    result = run_process("tools", "list", "--all", extra_env={"OPENCODE_CLIENT": "acp"})
    line = next(line for line in result.stdout.splitlines() if line.startswith("question "))
    assert "(hidden: offered only to the app, cli and desktop clients" in line


# -- todos across processes --------------------------------------------------------------------------------


def test_todos_persist_across_processes(run_process: Callable[..., Any]) -> None:
    todos = [
        {"content": "Write the parser", "status": "in_progress", "priority": "high"},
        {"content": "Document it", "status": "pending", "priority": "low", "id": "ignored"},
    ]
    first = run_process(
        "tools", "run", "todowrite", "todos:=" + json.dumps(todos), "--session", "S1", "--json"
    )
    assert first.returncode == 0, first.stderr
    payload = json.loads(first.stdout)
    assert payload["title"] == "2 todos"
    stored = [{k: item[k] for k in ("content", "status", "priority")} for item in todos]
    assert json.loads(payload["output"]) == stored

    shown = run_process("todos", "show", "--session", "S1", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {"session": "S1", "todos": stored}

    done = [{**stored[0], "status": "completed"}]
    again = run_process("tools", "run", "todowrite", "todos:=" + json.dumps(done), "--session", "S1")
    assert again.returncode == 0 and again.stdout.startswith("[")
    assert json.loads(run_process("todos", "show", "--session", "S1", "--json").stdout)["todos"] == done

    text = run_process("todos", "show", "--session", "S1")
    assert text.stdout == "[x] Write the parser (high)\n"
    assert json.loads(run_process("todos", "show", "--session", "other", "--json").stdout)["todos"] == []
    assert run_process("todos", "show", "--session", "other").stdout == "no todos in session other\n"


def test_todos_show_needs_a_session(run_process: Callable[..., Any]) -> None:
    result = run_process("todos", "show")
    assert result.returncode == 2
    assert "--session" in result.stderr


# -- skills ------------------------------------------------------------------------------------------------


def test_a_broken_skill_is_reported_with_file_and_field(
    run_process: Callable[..., Any], cli_env: dict[str, str]
) -> None:
    folder = Path(cli_env["project"], ".opencode", "skill", "broken")
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\ndescription: no name here\n---\nbody\n")
    result = run_process("tools", "list")
    assert result.returncode == 0
    assert (
        f'warning: skill skipped: {folder / "SKILL.md"}: front matter field "name" is missing'
        in result.stderr
    )


def test_skill_runs_from_the_command_line(run_process: Callable[..., Any], cli_env: dict[str, str]) -> None:
    folder = Path(cli_env["project"], ".opencode", "skills", "deploy")
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it.\n---\nRun make deploy.\n")
    result = run_process("tools", "run", "skill", "name=deploy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('<skill_content name="deploy">\n# Skill: deploy\n\nRun make deploy.\n')
    missing = run_process("tools", "run", "skill", "name=nope")
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Skill "nope" not found. Available skills: customize-opencode, deploy'


# -- question is offered only where someone can answer ------------------------------------------------------


def test_on_a_terminal_the_schema_offers_question(cli_env: dict[str, str]) -> None:
    child = spawn(cli_env, "tools", "schema", "--model", "anthropic/claude-sonnet-4-5")
    output, status = finish(child)
    assert status == 0
    names = [entry["name"] for entry in json.loads(output[output.index("[") :])]
    assert "question" in names


def test_without_a_terminal_tools_run_question_with_answers_still_works(
    run_process: Callable[..., Any],
) -> None:
    result = run_process("tools", "run", "question", questions(COLOUR), "--answer", "2")
    assert result.returncode == 0, result.stderr
    assert '"What is your favourite colour?"="Blue"' in result.stdout
