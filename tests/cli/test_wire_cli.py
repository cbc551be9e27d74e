"""``opencode tools schema``, ``opencode tools call`` and ``opencode tools inspect --model/--profile``:
the exact ``tools`` payload of a request, raw tool calls as models emit them, and the profile's changes.

In-process through CliRunner, and the issue's two example commands as real processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

NOPE = "The arguments provided to the tool are invalid: Model tried to call unavailable tool 'nope'. "
READ_README = {"name": "Read", "arguments": json.dumps({"filePath": "README.md"})}

LEVEL_TOOL = '''
from typing import Literal

from opencode_cli import Field, tool


@tool
def default(level: Literal[1, 2, 3] = Field(1, description="How loud")) -> str:
    """Set the volume."""
    return f"level {level}"
'''


@pytest.fixture
def project_path(cli_env) -> Path:
    return Path(cli_env["project"])


@pytest.fixture
def level_tool(project_path: Path) -> Path:
    path = project_path / ".opencode" / "tool" / "volume.py"
    path.parent.mkdir(parents=True)
    path.write_text(LEVEL_TOOL)
    return path


def payload(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def functions(result: Any) -> dict[str, dict[str, Any]]:
    return {entry["function"]["name"]: entry["function"] for entry in payload(result)}


# -- tools schema -------------------------------------------------------------------------------------------


def test_schema_for_gpt5_is_the_openai_payload(run_cli) -> None:
    data = payload(run_cli("tools", "schema", "--model", "gpt-5"))

    assert all(set(entry) == {"type", "function"} and entry["type"] == "function" for entry in data)
    tools = {entry["function"]["name"]: entry["function"] for entry in data}
    assert "apply_patch" in tools and not {"edit", "write", "invalid"} & set(tools)
    assert [entry["function"]["name"] for entry in data] == sorted(tools)
    for function in tools.values():
        assert set(function) == {"name", "description", "parameters", "strict"}
        assert function["strict"] is False
        assert "$schema" not in function["parameters"]  # the OpenAI whitelist drops it
        jsonschema.Draft202012Validator.check_schema(function["parameters"])
    assert tools["read"]["parameters"]["properties"]["offset"] == {
        "description": tools["read"]["parameters"]["properties"]["offset"]["description"],
        "type": "integer",
    }


def test_schema_in_anthropic_format(run_cli) -> None:
    data = payload(run_cli("tools", "schema", "--model", "gpt-5", "--format", "anthropic"))

    assert all(
        set(entry) == {"name", "description", "input_schema", "eager_input_streaming"} for entry in data
    )
    assert all(entry["eager_input_streaming"] is True for entry in data)
    read = next(entry for entry in data if entry["name"] == "read")
    assert read["input_schema"]["required"] == ["filePath"]


def test_schema_for_claude_defaults_to_the_anthropic_shape_and_edit_tools(run_cli) -> None:
    data = payload(run_cli("tools", "schema", "--model", "anthropic/claude-sonnet-4-5"))

    by_name = {entry["name"]: entry for entry in data}
    assert {"edit", "write", "read"} <= set(by_name) and "apply_patch" not in by_name
    # the default profile passes the normalised schema through
    assert by_name["read"]["input_schema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert by_name["read"]["input_schema"]["properties"]["offset"]["minimum"] == 0


def test_schema_for_gemini_is_the_gemini_shape_and_profile(run_cli, level_tool) -> None:
    data = payload(run_cli("tools", "schema", "--model", "google/gemini-2.5-pro"))

    [wrapper] = data
    declarations = {d["name"]: d for d in wrapper["functionDeclarations"]}
    assert set(wrapper) == {"functionDeclarations"}
    assert all(set(d) == {"name", "description", "parameters"} for d in declarations.values())
    level = declarations["volume"]["parameters"]["properties"]["level"]
    assert level["enum"] == ["1", "2", "3"] and level["type"] == "string"

    # Google's OpenAPI-style subset: no $schema, bounds or defaults anywhere
    assert "$schema" not in declarations["read"]["parameters"]
    assert declarations["read"]["parameters"]["properties"]["offset"] == {
        "type": "integer",
        "description": declarations["read"]["parameters"]["properties"]["offset"]["description"],
    }
    assert "default" not in level
    text = json.dumps(data)
    assert not any(f'"{key}":' in text for key in ("$schema", "additionalProperties", "$ref", "$defs"))

    # the same model under another format keeps the gemini profile, and the OpenAI payload is not converted
    openai_shape = functions(run_cli("tools", "schema", "--model", "google/gemini-2.5-pro", "-f", "openai"))
    assert openai_shape["volume"]["parameters"]["properties"]["level"]["enum"] == ["1", "2", "3"]
    assert "strict" not in openai_shape["volume"]
    assert openai_shape["read"]["parameters"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert openai_shape["read"]["parameters"]["properties"]["offset"]["minimum"] == 0


def test_schema_in_gemini_format_for_another_profile_is_converted_too(run_cli) -> None:
    [wrapper] = payload(run_cli("tools", "schema", "--model", "gpt-5", "--format", "gemini"))

    declarations = {d["name"]: d for d in wrapper["functionDeclarations"]}
    assert "apply_patch" in declarations
    text = json.dumps(wrapper)
    assert not any(f'"{key}":' in text for key in ("$schema", "additionalProperties", "minimum", "default"))


def test_schema_with_the_openai_strict_profile(run_cli) -> None:
    tools = functions(run_cli("tools", "schema", "--model", "gpt-5", "--profile", "openai-strict"))

    read = tools["read"]
    assert read["strict"] is True
    assert read["parameters"]["additionalProperties"] is False
    assert read["parameters"]["required"] == ["filePath", "offset", "limit"]
    assert {"type": "null"} in read["parameters"]["properties"]["offset"]["anyOf"]
    for function in tools.values():
        params = function["parameters"]
        assert params["additionalProperties"] is False
        assert sorted(params["required"]) == sorted(params["properties"])


def test_schema_respects_the_agent(run_cli) -> None:
    build = functions(run_cli("tools", "schema", "--model", "gpt-5", "--agent", "build"))
    explore = functions(run_cli("tools", "schema", "--model", "gpt-5", "--agent", "explore"))

    assert "apply_patch" in build and "apply_patch" not in explore
    assert "read" in explore


def test_schema_uses_the_configured_model(run_cli, project_path: Path) -> None:
    (project_path / "opencode.toml").write_text('model = "openai/gpt-5"\n')

    assert "apply_patch" in functions(run_cli("tools", "schema"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "xml"), "unknown format 'xml'"),
        (("--agent", "nobody"), "no agent named 'nobody'"),
    ],
)
def test_schema_usage_errors(run_cli, args, message) -> None:
    result = run_cli("tools", "schema", "--model", "gpt-5", *args)

    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


# -- tools call -------------------------------------------------------------------------------------------


def test_call_repairs_the_name_and_runs_read(run_cli) -> None:
    result = run_cli("tools", "call", json.dumps(READ_README))

    assert result.exit_code == 0, result.output
    assert "1: # Demo" in result.stdout and "3: A small project." in result.stdout


def test_call_of_an_unknown_tool_prints_the_invalid_text(run_cli) -> None:
    result = run_cli(
        "tools", "call", '{"name":"nope","arguments":"{}"}', "--model", "anthropic/claude-sonnet-4-5"
    )

    assert result.exit_code == 1
    line = result.stdout.rstrip("\n")
    assert line.startswith(NOPE + "Available tools: ")
    names = line.removeprefix(NOPE + "Available tools: ").removesuffix(".").split(", ")
    assert names == sorted(names) and "invalid" in names and {"read", "edit", "write"} <= set(names)
    assert "apply_patch" not in names  # not offered to Claude
    assert "rerouted to invalid" in result.stderr


def test_call_an_anthropic_tool_use_block(run_cli) -> None:
    block = {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"filePath": "README.md"}}

    result = run_cli("tools", "call", json.dumps(block), "--json")

    [part] = payload(result)["parts"]
    assert part["callID"] == "toolu_01" and part["status"] == "completed"
    assert "1: # Demo" in part["output"]


def test_call_an_anthropic_message_and_a_gemini_function_call(run_cli) -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {"pattern": "*.md"}},
        ],
    }
    gemini = {"functionCall": {"name": "read", "args": {"filePath": "README.md", "limit": 1}}}

    parts = payload(run_cli("tools", "call", json.dumps([message, gemini]), "--json"))["parts"]

    assert [(p["tool"], p["status"]) for p in parts] == [("glob", "completed"), ("read", "completed")]
    assert parts[0]["output"].endswith("README.md")
    assert "1: # Demo" in parts[1]["output"] and "A small" not in parts[1]["output"]


def test_call_a_list_of_calls(run_cli) -> None:
    calls = [
        READ_README,
        {"type": "function", "id": "call_2", "function": {"name": "glob", "arguments": '{"pattern":"*.md"}'}},
        {"name": "nope", "arguments": "{}"},
    ]

    result = run_cli("tools", "call", json.dumps(calls))

    assert result.exit_code == 1
    headers = [line for line in result.stdout.splitlines() if line.startswith("── ")]
    assert len(headers) == 3
    assert headers[0].startswith("── read (called as Read) [") and headers[0].endswith("] completed")
    assert headers[1] == "── glob [call_2] completed"
    assert headers[2].startswith("── invalid (called as nope) [")
    assert "1: # Demo" in result.stdout and NOPE in result.stdout
    assert "1 of 3 call(s) failed or were rerouted to invalid" in result.stderr


def test_call_from_a_file_and_from_stdin(run_cli, tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([READ_README]))

    from_file = run_cli("tools", "call", "--file", str(calls))
    from_stdin = run_cli("tools", "call", input=json.dumps(READ_README))

    assert from_file.exit_code == 0 and "1: # Demo" in from_file.stdout
    assert from_stdin.exit_code == 0 and "1: # Demo" in from_stdin.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": ', "error: not valid JSON: "),
        ("42", "error: a tool call must be a JSON object or a list of them"),
        ('{"arguments": "{}"}', "error: not a tool call: expected"),
        ('{"name": 7, "arguments": "{}"}', 'error: a tool call needs a string "name"'),
        (
            '{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}',
            "the input holds no tool call",
        ),
    ],
)
def test_call_with_input_that_is_not_a_call_exits_2(run_cli, text, message) -> None:
    result = run_cli("tools", "call", text)

    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""


def test_call_with_a_missing_file_exits_2(run_cli, tmp_path: Path) -> None:
    result = run_cli("tools", "call", "--file", str(tmp_path / "missing.json"))

    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot read ") and "missing.json" in result.stderr


def test_call_with_malformed_arguments_shows_the_parse_error(run_cli) -> None:
    result = run_cli("tools", "call", json.dumps({"name": "read", "arguments": '{"filePath": '}))

    assert result.exit_code == 1
    assert result.stdout.startswith(
        "The arguments provided to the tool are invalid: Invalid input for tool read: JSON parsing failed: "
        'Text: {"filePath": .\nError message: '
    )


def test_call_json_shape(run_cli) -> None:
    data = payload(run_cli("tools", "call", json.dumps(READ_README), "--json"))

    assert set(data) == {"parts"}
    [part] = data["parts"]
    keys = "callID requested tool input status outcome title output error metadata attachments"
    assert set(part) == set(keys.split())
    assert (part["requested"], part["tool"], part["status"]) == ("Read", "read", "completed")
    assert part["outcome"] == "completed"
    assert part["input"] == {"filePath": "README.md"} and part["error"] is None
    assert part["callID"].startswith("call_") and part["attachments"] == []
    assert part["metadata"]["truncated"] is False


def test_call_json_error_part(run_cli) -> None:
    result = run_cli("tools", "call", json.dumps({"name": "read", "arguments": "{}"}), "--json")

    assert result.exit_code == 1
    [part] = json.loads(result.stdout)["parts"]
    assert part["status"] == "error" and part["output"] is None
    assert part["error"].startswith("The read tool was called with invalid arguments: ")


def test_call_with_the_openai_strict_profile_maps_nulls(run_cli) -> None:
    call = {"name": "read", "arguments": json.dumps({"filePath": "README.md", "offset": None, "limit": None})}

    data = payload(
        run_cli("tools", "call", json.dumps(call), "--model", "gpt-5", "--profile", "openai-strict", "--json")
    )

    [part] = data["parts"]
    assert part["status"] == "completed" and part["input"] == {"filePath": "README.md"}


def test_call_asks_doom_loop_and_refuses_without_a_terminal(run_cli) -> None:
    call = {"name": "read", "arguments": json.dumps({"filePath": "README.md"})}

    result = run_cli("tools", "call", json.dumps([call, call, call]))

    assert result.exit_code == 1
    assert "permission needed: doom_loop on read" in result.stderr
    assert result.stdout.count("1: # Demo") == 2
    assert "The user rejected permission to use this specific tool call." in result.stdout

    approved = run_cli("tools", "call", json.dumps([call, call, call]), "--yes")
    assert approved.exit_code == 0 and approved.stdout.count("1: # Demo") == 3


# -- tools inspect --model/--profile -------------------------------------------------------------------


def test_inspect_lists_the_changes_of_the_openai_profile(run_cli) -> None:
    data = payload(run_cli("tools", "inspect", "read", "--model", "gpt-5", "--json"))

    assert data["profile"] == "openai" and data["offered"] is True
    assert "- properties.offset.minimum (dropped)" in data["changes"]
    assert "- properties.offset.maximum (dropped)" in data["changes"]
    assert "- $schema (dropped)" in data["changes"]
    assert "minimum" not in data["parameters"]["properties"]["offset"]
    assert data["normalized"]["properties"]["offset"]["minimum"] == 0


def test_inspect_with_a_profile_override(run_cli) -> None:
    data = payload(
        run_cli("tools", "inspect", "read", "--model", "gpt-5", "--profile", "openai-strict", "--json")
    )

    assert data["profile"] == "openai-strict"
    assert "+ additionalProperties = false" in data["changes"]
    assert data["parameters"]["required"] == ["filePath", "offset", "limit"]


def test_inspect_text_shows_the_changes(run_cli) -> None:
    result = run_cli("tools", "inspect", "read", "--model", "gpt-5")

    assert result.exit_code == 0, result.output
    assert "parameters (JSON Schema, openai profile):" in result.stdout
    assert "changes made by the openai profile (" in result.stdout
    assert "  - properties.offset.minimum (dropped)" in result.stdout


def test_inspect_default_profile_changes_nothing(run_cli) -> None:
    data = payload(run_cli("tools", "inspect", "read", "--model", "anthropic/claude-sonnet-4-5", "--json"))

    assert data["profile"] == "default" and data["changes"] == []
    assert data["parameters"] == data["normalized"]


# -- the example commands, as real processes -------------------------------------------------------


def test_example_read_call_as_a_process(run_process) -> None:
    result = run_process("tools", "call", '{"name":"Read","arguments":"{\\"filePath\\":\\"README.md\\"}"}')

    assert result.returncode == 0, result.stderr
    assert "1: # Demo" in result.stdout and "</content>" in result.stdout


def test_example_unknown_call_as_a_process(run_process) -> None:
    result = run_process("tools", "call", '{"name":"nope","arguments":"{}"}')

    assert result.returncode == 1
    assert result.stdout.startswith(NOPE + "Available tools: ")
    assert ", invalid, " in result.stdout and result.stdout.rstrip().endswith(".")


def test_schema_as_a_process(run_process) -> None:
    result = run_process("tools", "schema", "--model", "gpt-5")

    assert result.returncode == 0, result.stderr
    names = [entry["function"]["name"] for entry in json.loads(result.stdout)]
    assert "apply_patch" in names and "edit" not in names


# -- question: offered only where someone can answer -------------------------------------------------------


def test_without_a_terminal_question_is_neither_in_the_schema_nor_listed(run_process) -> None:
    result = run_process("tools", "schema", "--model", "anthropic/claude-sonnet-4-5")
    assert result.returncode == 0, result.stderr
    names = [entry["name"] for entry in json.loads(result.stdout)]
    assert "question" not in names and "read" in names

    listed = run_process("tools", "list", "--json")  # what a session of this command offers, the same
    assert listed.returncode == 0, listed.stderr
    assert "question" not in [entry["id"] for entry in json.loads(listed.stdout)["tools"]]


def test_without_a_terminal_a_call_to_question_is_an_unavailable_tool(run_process) -> None:
    result = run_process("tools", "call", '{"name":"question","arguments":"{\\"questions\\":[]}"}')

    assert result.returncode == 1
    assert result.stdout.startswith(
        "The arguments provided to the tool are invalid: Model tried to call unavailable tool 'question'. "
    )
    listing = result.stdout.rstrip().partition("Available tools: ")[2].removesuffix(".").split(", ")
    assert "question" not in listing and "read" in listing


def test_a_direct_call_to_invalid_is_run(run_process) -> None:
    call = {"name": "invalid", "arguments": json.dumps({"tool": "frob", "error": "bad frob"})}
    result = run_process("tools", "call", json.dumps(call), "--json")

    [part] = json.loads(result.stdout)["parts"]
    assert (part["tool"], part["requested"], part["status"]) == ("invalid", "invalid", "completed")
    assert part["output"] == "The arguments provided to the tool are invalid: bad frob"
    assert "rerouted" not in part["metadata"]
