"""Bad input returns (issue 33, finding 9): a lone surrogate in any argument of any tool, MCP tools
included, is a clear error within the call's bounds, never a call that waits forever; a file name that is
not UTF-8, listed by one tool, can be given back to another in the form it was listed in; over stdio
``mcp serve`` a lone surrogate is named as such (not "nested too deeply")."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.arguments import hostile_value
from opencode_cli.errors import ToolError
from opencode_cli.mcp.requests import sendable
from opencode_cli.mcp.serve.limits import check_line, error_reply
from opencode_cli.results import unicode_text
from opencode_cli.session import ToolCall

DEMO_SERVER = Path(__file__).resolve().parent / "mcp" / "servers" / "demo_server.py"
SCRIPT = Path(sys.executable).parent / "opencode"
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)  # surrogates too
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=10,
)


def _encodes(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- arguments --------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_what_is_sent_to_an_mcp_server_is_always_encodable_or_refused_with_a_reason(value: Any) -> None:
    """The guard before an MCP request: what passes can be written as JSON text (UTF-8); what cannot is
    refused with a one-line reason naming where the surrogate is."""
    try:
        sendable(value, "the arguments of probe")
    except ToolError as error:
        assert not _encodes(value)
        text = str(error)
        assert text.startswith("Cannot send the arguments of probe to the MCP server: ")
        assert "lone surrogate" in text and "\n" not in text
        text.encode("utf-8")  # the error itself is Unicode
    else:
        assert _encodes(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=4))
def test_a_tools_call_line_over_stdio_serve_is_taken_or_refused_clearly(arguments: dict[str, Any]) -> None:
    """Every ``tools/call`` line, whatever its arguments: the SDK takes it, or it gets an error reply
    (one line, Unicode) with the request's id; a lone surrogate is named, never "nested too deeply"."""
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "read", "arguments": arguments},
        }
    )
    problem = check_line(line)
    if _encodes(arguments):
        assert problem is None
        return
    assert problem is not None and problem.id == 7
    assert "lone surrogate" in problem.message and "nested too deeply" not in problem.message
    reply = json.loads(error_reply(problem))
    assert reply["id"] == 7 and reply["error"]["message"] == problem.message


def test_a_path_holding_udcff_over_stdio_serve_is_named_a_lone_surrogate() -> None:
    line = (
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call",'
        ' "params": {"name": "read", "arguments": {"filePath": "bad\\udcffname.txt"}}}'
    )
    problem = check_line(line)
    assert problem is not None and problem.id == 3
    assert problem.message == (
        'Invalid request: ["params"]["arguments"]["filePath"]: a string with a lone surrogate is not valid'
        " Unicode text"
    )


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT | st.binary(max_size=20).map(os.fsdecode))
def test_a_results_text_is_always_unicode_and_a_file_name_shows_as_glob_lists_it(text: str) -> None:
    shown = unicode_text(text)
    shown.encode("utf-8")
    if _encodes(text):
        assert shown == text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return
    assert shown == raw.decode("utf-8", "replace")  # glob's form of a name that is not UTF-8


def test_hostile_value_names_a_surrogate_anywhere() -> None:
    assert (
        hostile_value({"a": [{"b": "\ud800"}]})
        == '["a"][0]["b"]: a string with a lone surrogate is not valid Unicode text'
    )
    assert hostile_value({"\udcff": 1}) == "(root): a key with a lone surrogate is not valid Unicode text"


# -- an MCP server's tool -----------------------------------------------------------------------------------


def test_a_lone_surrogate_sent_to_an_mcp_tool_returns_the_invalid_arguments_text(
    cli_env: dict[str, str],
) -> None:
    """``opencode tools call`` of an MCP server's tool with ``{"text": "\\ud800"}`` (valid JSON) used to
    wait forever; it now ends at once with the invalid-arguments text, and the server still answers."""
    project = Path(cli_env["project"])
    config = {"mcp": {"demo": {"type": "local", "command": [sys.executable, str(DEMO_SERVER), "stdio"]}}}
    (project / "opencode.json").write_text(json.dumps(config))
    env = {k: v for k, v in cli_env.items() if k != "project"}

    def call(arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), "tools", "call", '{"name": "demo_echo", "arguments": ' + arguments + "}"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,  # a bound for a hang, not a measurement
        )

    done = call('{"text": "\\ud800"}')
    assert "Traceback" not in done.stderr
    assert done.returncode == 1
    assert done.stdout.startswith(
        'The demo_echo tool was called with invalid arguments: ["text"]: a string with a lone surrogate'
    )
    fine = call('{"text": "fine"}')
    assert fine.returncode == 0 and fine.stdout.strip() == "fine"


# -- a listed name given back --------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_name_that_is_not_utf8_listed_by_glob_or_read_can_be_read_back(make_project) -> None:
    project = make_project()
    raw = os.fsencode(project.directory) + b"/caf\xe9-\xff.txt"
    with open(raw, "wb") as out:
        out.write(b"the bytes of a name\n")

    async def main() -> tuple[Any, Any, list[Any]]:
        async with project.session() as session:
            listed = await session.dispatch(ToolCall("glob", {"pattern": "*.txt"}))
            directory = await session.dispatch(ToolCall("read", {"filePath": "."}))
            reads = []
            names = [line for line in listed.text.splitlines() if line.endswith(".txt")]
            names += [line for line in directory.text.splitlines() if line.endswith(".txt")]
            for name in names:
                session.step()
                reads.append(await session.dispatch(ToolCall("read", {"filePath": name})))
            return listed, directory, reads

    listed, directory, reads = asyncio.run(main())
    assert listed.status == "completed" and directory.status == "completed"
    assert len(reads) == 2
    for part in reads:
        assert part.status == "completed", part.text
        assert "1: the bytes of a name" in part.text
        assert "caf\ufffd-\ufffd.txt" in part.text  # shown as listed: valid Unicode
        part.text.encode("utf-8")
