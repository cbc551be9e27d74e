"""A server's elicitation and sampling requests answered in the CLI, on a pseudo-terminal (pexpect):
the form through the ``question`` prompt, the sampling request through the ``mcp_sampling`` ask, which
shows the server, the messages and the token limit; the model is the scripted server of
``tests/models``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_server_asks import ScriptedModel, call_of, configure, local_config

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow


def spawn(project_dir: Path, env: dict[str, str], *args: str) -> Any:
    script = str(Path(sys.executable).parent / "opencode")
    return pexpect.spawn(script, list(args), cwd=project_dir, env=env, encoding="utf-8", timeout=60)


def finish(child: Any) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def test_an_elicitation_is_answered_on_the_terminal(project_dir: Path, env: dict[str, str]) -> None:
    configure(project_dir)
    child = spawn(project_dir, env, "tools", "run", "asking_book")
    child.expect(r"\? MCP server asking\r\nBook a table for tonight\?")
    child.expect("1. Answer - fill in the form")
    child.expect("3. Cancel")
    child.sendline("1")
    child.expect(r"Name: who the table is for")
    child.sendline("Zoe")
    child.expect(r"Guests: how many people\r\n  1. 2 - default")
    child.sendline("1")  # the default
    child.expect(r"2. pasta - default")
    child.sendline("fish")
    child.expect(r"Terrace: sit outside\r\n  1. Yes\r\n  2. No - default")
    child.sendline("1")
    child.expect(r"Note\r\n  1. \(leave empty\)")
    child.sendline("1")
    output, status = finish(child)
    assert status == 0, output
    said = output.split("booking: accept ", 1)[1].strip()
    assert json.loads(said) == {"name": "Zoe", "guests": 2, "meal": "fish", "terrace": True, "note": None}


def test_enter_takes_each_question_s_marked_default(project_dir: Path, env: dict[str, str]) -> None:
    configure(project_dir)
    child = spawn(project_dir, env, "tools", "run", "asking_book")
    child.expect(r"3. Cancel - dismiss without answering\r\nChoose 1-3 \[1\]: ")
    child.sendline("")  # Answer
    child.expect(r"Name: who the table is for")
    child.expect(r"Choose 1: ")  # no default: only the own-answer entry
    child.sendline("Zoe")
    child.expect(r"Guests: how many people\r\n  1. 2 - default")
    child.expect(r"Choose 1-3 \[1\]: ")
    child.sendline("")
    child.expect(r"2. pasta - default")
    child.expect(r"Choose 1-3 \[2\]: ")
    child.sendline("")
    child.expect(r"2. No - default")
    child.expect(r"Choose 1-3 \[2\]: ")
    child.sendline("")
    child.expect(r"Note\r\n  1. \(leave empty\)")
    child.expect(r"Choose 1-2 \[1\]: ")
    child.sendline("")
    output, status = finish(child)
    assert status == 0, output
    said = output.split("booking: accept ", 1)[1].strip()
    assert json.loads(said) == {"name": "Zoe", "guests": 2, "meal": "pasta", "terrace": False, "note": None}


def test_a_url_elicitation_required_error_is_shown_on_the_terminal(
    project_dir: Path, env: dict[str, str]
) -> None:
    configure(project_dir)
    child = spawn(project_dir, {**env, "OPENCODE_NO_BROWSER": "1"}, "tools", "run", "asking_authorize")
    child.expect(
        r"\? MCP server asking\r\nAuthorize access to your calendar\r\nhttps://auth\.example/authorize\?s=9"
    )
    child.expect("1. Open the URL - open it in a browser")
    child.sendline("")  # the default: open it
    output, status = finish(child)
    assert status == 1, output
    assert output.count("MCP error -32042") == 1, output
    assert "The server sends the user to https://auth.example/authorize?s=9" in output
    assert "the user agreed to open it; call the tool again once they have finished there." in output


def test_an_elicitation_cancelled_with_end_of_input(project_dir: Path, env: dict[str, str]) -> None:
    configure(project_dir)
    child = spawn(project_dir, env, "tools", "run", "asking_book")
    child.expect("3. Cancel")
    child.sendeof()
    output, status = finish(child)
    assert status == 0 and "booking: cancel" in output, output


def test_a_sampling_request_is_asked_on_the_terminal_and_answered_by_the_model(
    project_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    model = ScriptedModel(tmp_path / "scripted")
    try:
        model.script(
            [
                {"tool_calls": [call_of("c1", "asking_haiku", topic="frogs")]},
                {"text": "Old pond, a frog jumps"},
                {"text": "The server got its haiku."},
            ]
        )
        configure(project_dir, **local_config(model.url))
        child = spawn(project_dir, env, "run", "ask the server for a haiku")
        child.expect(r'MCP server "asking" asks the model to answer \(at most 50 tokens\):')
        child.expect(r"system: You are a poet\.\r\n  user: Write a haiku about frogs\.")
        child.expect(r"Allow mcp_sampling on asking\? \[o\]nce")
        child.sendline("o")
        output, status = finish(child)
        assert status == 0, output
        assert "The server got its haiku." in output
        third = model.requests()[2]["body"]["messages"]
        assert "haiku (local/scripted-model): Old pond, a frog jumps" in json.dumps(third)
    finally:
        model.stop()
