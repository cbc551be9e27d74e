"""`opencode tools list` stays off the paths of the capabilities it does not use (issue 19, item 4): in a
fresh process it imports no tool module and none of the libraries only some commands need."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: Imported only by the commands (or tools) that use them: MCP, models, language servers, web tools,
#: the code-mode sandbox, bash's parser, JSON-Schema validation of plugin tools.
ONLY_WHEN_USED = ("mcp", "openai", "pygls", "httpx", "pydantic_monty", "tree_sitter", "jsonschema")

PROBE = """
import sys
from opencode_cli.cli.app import app
try:
    app({args!r}, standalone_mode=False)
finally:
    print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(args: list[str], cli_env: dict[str, str]) -> set[str]:
    env = {k: v for k, v in cli_env.items() if k != "project"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        cwd=cli_env["project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


@pytest.mark.parametrize(
    "args", [["tools", "list"], ["tools", "list", "--model", "gpt-5", "--json"]], ids=" ".join
)
def test_tools_list_imports_nothing_it_does_not_use(args: list[str], cli_env: dict[str, str]) -> None:
    modules = modules_after(args, cli_env)
    assert "opencode_cli.cli.app" in modules  # the probe did run the command
    loaded = sorted(name for name in ONLY_WHEN_USED if name in modules)
    assert loaded == []
    tool_modules = sorted(
        name
        for name in modules
        if name.startswith("opencode_cli.tools.") and not name.split(".")[-1].startswith("_")
    )
    assert tool_modules == []  # listing reads descriptions, it imports no tool


@pytest.mark.parametrize(
    "args",
    [
        ["tools", "run", "read", "filePath=README.md"],
        ["tools", "run", "glob", "pattern=*.md"],
        ["tools", "run", "bash", "command=true", "--yes"],
        ["tools", "call", '{"name": "read", "arguments": {"filePath": "README.md"}}'],
    ],
    ids=" ".join,
)
def test_a_plainly_valid_call_of_a_file_tool_imports_no_pydantic(
    args: list[str], cli_env: dict[str, str]
) -> None:
    """Its arguments are checked against the recorded facts of the tool's model (opencode_cli.plain_args)."""
    (Path(cli_env["project"]) / "README.md").write_text("# A readme\n")
    modules = modules_after(args, cli_env)
    ran = next(name for name in ("glob", "bash", "read") if name in args or f'"{name}"' in args[-1])
    assert f"opencode_cli.tools.{ran}" in modules  # the tool did run
    assert "pydantic" not in modules and "pydantic_core" not in modules
    assert "opencode_cli.cli.question_prompt" not in modules  # no terminal, no --answer: nobody to ask


def test_a_call_the_facts_cannot_settle_uses_the_model(cli_env: dict[str, str]) -> None:
    (Path(cli_env["project"]) / "README.md").write_text("# A readme\n")
    modules = modules_after(["tools", "run", "read", "filePath=README.md", "offset:=2"], cli_env)
    assert "pydantic" in modules  # offset has a validator of its own: the model decides


@pytest.mark.parametrize(
    "args",
    [["tools", "list"], ["tools", "schema", "--model", "gpt-5"]],
    ids=" ".join,
)
def test_reading_the_offer_starts_no_event_loop_machinery(args: list[str], cli_env: dict[str, str]) -> None:
    """A command that only reads what is offered runs no call: it imports no ``asyncio`` (about 14 ms and
    4 MiB of a cold start; a session module importing it at its top once cost ``tools schema`` that)."""
    modules = modules_after(args, cli_env)
    assert "opencode_cli.cli.app" in modules
    assert "asyncio" not in modules


def test_listing_a_tool_file_loads_no_tool_context(cli_env: dict[str, str]) -> None:
    """Whether a tool file's function takes the context is told without loading the context's module
    (``opencode_cli.context``, about 1 ms): no annotation can be its class before it is loaded."""
    folder = Path(cli_env["project"]) / ".opencode" / "tool"
    folder.mkdir(parents=True)
    (folder / "echo.py").write_text(
        'from opencode_cli import tool\n\n\n@tool\ndef default(text: str) -> str:\n    """Echo."""\n'
        "    return text\n"
    )
    modules = modules_after(["tools", "list"], cli_env)
    assert any(name.endswith("_echo") for name in modules)  # the tool file was loaded
    assert "opencode_cli.context" not in modules


def test_a_raw_call_loads_only_what_its_provider_needs(cli_env: dict[str, str]) -> None:
    """``tools call`` of a read (no model named): no Gemini schema converter, and no :mod:`hashlib` for
    the doom-loop fingerprint."""
    (Path(cli_env["project"]) / "README.md").write_text("# A readme\n")
    modules = modules_after(
        ["tools", "call", '{"name": "read", "arguments": {"filePath": "README.md"}}'], cli_env
    )
    assert "opencode_cli.tools.read" in modules  # the call did run
    assert "opencode_cli.gemini_schema" not in modules and "hashlib" not in modules


#: The ecosystems the bridges reach (opencode_cli.bridges): imported only when installed and configured.
ECOSYSTEMS = ("llm", "langchain_core", "langchain_community", "pydantic_ai", "opencode_cli.bridges")


def test_tools_list_imports_no_ecosystem_none_is_configured_or_seen(cli_env: dict[str, str]) -> None:
    """No ``[llm]``, ``[langchain]`` or ``[pydantic_ai]``, and no llm plugin seen (entry points are not
    searched here): the three bridge plugins load, and import nothing."""
    modules = modules_after(["tools", "list"], cli_env)
    assert "opencode_cli.builtin.llm" in modules  # the bridge plugins did load
    assert [name for name in ECOSYSTEMS if name in modules] == []


def test_installed_llm_plugins_cost_the_llm_import_once(cli_env: dict[str, str]) -> None:
    """Where llm's plugins are installed (the suite's environment has two), the first ``tools list`` imports
    llm to catalogue their tools; the next ones read the catalogue and import no ecosystem (a tool's first
    call imports llm); ``-p no:llm`` does not even read it."""
    llm = pytest.importorskip("llm")
    seen = {k: v for k, v in cli_env.items() if k != "OPENCODE_DISABLE_PLUGIN_AUTOLOAD"}
    seen["OPENCODE_PLUGIN_PATH"] = str(Path(llm.__file__).resolve().parent.parent)
    assert "llm" in modules_after(["tools", "list"], seen)  # the catalogue is made
    modules = modules_after(["tools", "list"], seen)
    assert [name for name in ECOSYSTEMS if name in modules] == []  # the catalogue is read: nothing imported
    switched_off = modules_after(["-p", "no:llm", "tools", "list"], seen)
    assert [name for name in ECOSYSTEMS if name in switched_off] == []


def modules_with(env: dict[str, str], args: list[str], cli_env: dict[str, str]) -> set[str]:
    return modules_after(args, {**cli_env, **env})


@pytest.mark.parametrize(
    "args",
    [
        ["tools", "list"],
        ["tools", "run", "read", "filePath=README.md"],
        ["tools", "call", '{"name": "read", "arguments": {"filePath": "README.md"}}'],
    ],
    ids=" ".join,
)
def test_opentelemetry_installed_but_not_configured_is_not_imported(
    args: list[str], cli_env: dict[str, str]
) -> None:
    """The ``otel`` extra is installed here: without an ``OTEL_*`` exporter or endpoint nothing of it is
    imported (the ``telemetry`` plugin answers from the environment), nor with every exporter ``none``."""
    (Path(cli_env["project"]) / "README.md").write_text("# A readme\n")
    for env in ({}, {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}):
        modules = modules_with(env, args, cli_env)
        assert "opencode_cli.cli.app" in modules
        assert sorted(name for name in modules if name.startswith("opentelemetry")) == []
        assert "opencode_cli.telemetry.instruments" not in modules


def test_opentelemetry_configured_is_imported_by_a_call(cli_env: dict[str, str]) -> None:
    """The other side of the guard above: configured (spans to stderr), a call loads the instruments."""
    (Path(cli_env["project"]) / "README.md").write_text("# A readme\n")
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    modules = modules_with(env, ["tools", "run", "read", "filePath=README.md"], cli_env)
    assert {"opencode_cli.telemetry.instruments", "opentelemetry.sdk.trace"} <= modules
