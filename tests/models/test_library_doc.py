"""docs/library.md runs as written: every Python block of the walk-through is executed, the OpenAI and
``Session.run`` examples against the scripted OpenAI-compatible server, and what they print is checked.
The public names the page uses and ``opencode_cli.__all__`` are kept in step."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from _scripted import ScriptedModel

import opencode_cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "library.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[str]:
    return FENCE.findall(PAGE.read_text(encoding="utf-8"))


def block_with(marker: str) -> str:
    (found,) = [code for code in blocks() if marker in code]
    return found


def run_block(code: str) -> str:
    """Execute a block as a script; what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
    return printed.getvalue()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of its own (no global config of the machine), temporary folders under tmp_path."""
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        monkeypatch.setenv(name, str(folder))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    server = ScriptedModel(tmp_path / "scripted")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
    yield server
    server.stop()


def test_the_callbacks_block_defines_typed_callbacks() -> None:
    namespace: dict = {}
    exec(compile(block_with("def on_metadata"), str(PAGE), "exec"), namespace)
    assert namespace["prompt"].__annotations__["return"] == "Decision"
    assert set(namespace["on_metadata"].__annotations__) == {"title", "metadata", "return"}


def test_openai_loop(endpoint: ScriptedModel) -> None:
    patch = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-Hello, world\n+Goodbye, world\n*** End Patch"
    endpoint.script(
        [
            {"tool_calls": [{"id": "call_1", "name": "read", "arguments": '{"filePath": "hello.txt"}'}]},
            {
                "tool_calls": [
                    {"id": "call_2", "name": "apply_patch", "arguments": json.dumps({"patchText": patch})}
                ]
            },
            {"text": "Done: it says goodbye now."},
        ]
    )
    printed = run_block(block_with("import openai")).splitlines()
    assert printed[0] == "[\"edit ['hello.txt']\"]"  # the session rule made the patch ask, once
    assert printed[1] == "Goodbye, world"
    requests = [entry["body"] for entry in endpoint.requests()]
    assert len(requests) == 3
    # gpt-5 is offered apply_patch in place of edit and write, as OpenCode does
    names = {tool["function"]["name"] for tool in requests[0]["tools"]}
    assert "apply_patch" in names and "edit" not in names and "question" not in names
    results = [message for message in requests[1]["messages"] if message["role"] == "tool"]
    assert results[0]["tool_call_id"] == "call_1" and "1: Hello, world" in results[0]["content"]


def test_anthropic_loop() -> None:
    printed = run_block(block_with("input_schema"))
    assert "1: buy milk" in printed


def test_gemini_loop() -> None:
    printed = run_block(block_with("functionDeclarations"))
    assert "app.py" in printed and "TODO" in printed


def test_hot_reload_between_turns() -> None:
    printed = run_block(block_with("project.watch("))
    assert printed.strip() == "(['shout'], 'HOT')"


def test_in_short_from_sync_code() -> None:
    printed = run_block(block_with("session.run_tool("))
    assert "'read'" in printed and "1: # My project" in printed


def test_in_short_an_async_loop() -> None:
    printed = run_block(block_with("remember=True"))
    assert "1: # My project" in printed
    assert printed.splitlines()[-2:] == ["explore", "['user', 'assistant']"]


def test_the_library_runs_the_loop(endpoint: ScriptedModel) -> None:
    endpoint.script(
        [
            {"tool_calls": [{"id": "call_1", "name": "read", "arguments": '{"filePath": "hello.txt"}'}]},
            {"text": "It says: Hello, world"},
        ]
    )
    printed = run_block(block_with("session.run("))
    assert printed.strip() == "It says: Hello, world"
    second = endpoint.requests()[1]["body"]
    assert any(
        message["role"] == "tool" and "Hello, world" in message["content"] for message in second["messages"]
    )


def test_every_block_of_the_page_is_run_by_a_test() -> None:
    markers = [
        "session.run_tool(",
        "remember=True",
        "def on_metadata",
        "import openai",
        "input_schema",
        "functionDeclarations",
        "project.watch(",
        "session.run(",
    ]
    assert len(blocks()) == len(markers)
    assert all(sum(marker in code for code in blocks()) == 1 for marker in markers)


def imported_names(code: str) -> set[str]:
    tree = ast.parse(code)
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "opencode_cli"
        for alias in node.names
    }


def test_the_page_imports_only_public_names_and_names_them_all() -> None:
    used = set().union(*(imported_names(code) for code in blocks()))
    assert used <= set(opencode_cli.__all__)
    table = PAGE.read_text(encoding="utf-8").split("## The pieces", 1)[1].split("##", 1)[0]
    for name in used:
        assert f"`{name}" in table, f"{name} is used on the page but not in its table of pieces"


def test_the_export_list_of_the_page_is_opencode_cli_all() -> None:
    section = PAGE.read_text(encoding="utf-8").split("## Everything `opencode_cli` exports", 1)[1]
    listed = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
    assert sorted(listed) == sorted(opencode_cli.__all__)
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("name", sorted(set(opencode_cli.__all__) - {"Field"}))
def test_every_public_name_has_a_docstring_and_types(name: str) -> None:
    value = getattr(opencode_cli, name)
    if isinstance(value, type):
        assert value.__doc__, f"opencode_cli.{name} has no docstring"
    elif callable(value) and getattr(value, "__module__", "").startswith("opencode_cli"):
        assert value.__doc__, f"opencode_cli.{name} has no docstring"
        assert "return" in getattr(value, "__annotations__", {}), f"opencode_cli.{name} has no return type"
