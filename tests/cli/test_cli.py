"""The ``opencode`` command, in-process through CliRunner and as a real process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from opencode_cli import __version__

TOOL_FILE = '''
from opencode_cli import Field, ToolContext, tool


@tool
def default(text: str = Field(description="Text to shout"), times: int = 1) -> str:
    """Shout the text back."""
    return " ".join([text.upper()] * times)


@tool
def many(count: int, ctx: ToolContext) -> str:
    """Print many numbered lines."""
    ctx.metadata(title=f"printing {count}")
    return "\\n".join(f"line {i}" for i in range(count))


helper = "not a tool"
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project_path(cli_env) -> Path:
    return Path(cli_env["project"])


def test_list_shows_offered_tools_in_order(run_cli) -> None:
    result = run_cli("tools", "list")
    assert result.exit_code == 0, result.output
    ids = [line.split()[0] for line in result.stdout.splitlines()]
    order = ["question", "bash", "read", "glob", "grep", "edit", "write", "task", "apply_patch"]
    assert "read" in ids and "invalid" not in ids
    assert [i for i in ids if i in order] == [i for i in order if i in ids]


def test_list_all_adds_hidden_tools_with_reason(run_cli) -> None:
    result = run_cli("tools", "list", "--all")
    assert result.exit_code == 0
    assert "invalid" in result.stdout and "never offered to a model" in result.stdout


def test_list_json_shape(run_cli) -> None:
    result = run_cli("tools", "list", "--json", "--all", "--model", "gpt-5")
    data = json.loads(result.stdout)
    assert data["model"] == "openai/gpt-5" and data["agent"] == "build"
    read = next(t for t in data["tools"] if t["id"] == "read")
    assert read["source"] == {"kind": "builtin", "name": "opencode"}
    assert read["description"] and read["shadowed"] == []
    hidden = {h["id"]: h["reason"] for h in data["hidden"]}
    assert "never offered" in hidden["invalid"]
    assert {"edit", "write"} <= set(hidden) and "apply_patch" not in hidden


def test_model_filter_on_tools_from_files(run_cli, project_path) -> None:
    for name in ("edit", "write", "apply_patch"):
        write(project_path / ".opencode" / "tool" / f"{name}.py", TOOL_FILE)
    gpt = run_cli("tools", "list", "--model", "gpt-5", "--json")
    ids = [t["id"] for t in json.loads(gpt.stdout)["tools"]]
    assert "apply_patch" in ids and "edit" not in ids and "write" not in ids
    claude = run_cli("tools", "list", "--model", "anthropic/claude-sonnet-4-5", "--json")
    ids = [t["id"] for t in json.loads(claude.stdout)["tools"]]
    assert "edit" in ids and "write" in ids and "apply_patch" not in ids


def test_tool_file_tools_listed_and_run(run_cli, project_path) -> None:
    write(project_path / ".opencode" / "tool" / "shout.py", TOOL_FILE)
    listing = run_cli("tools", "list", "--json")
    by_id = {t["id"]: t for t in json.loads(listing.stdout)["tools"]}
    assert set(by_id) >= {"shout", "shout_many"} and "shout_helper" not in by_id
    assert by_id["shout"]["source"]["kind"] == "file"
    ran = run_cli("tools", "run", "shout", "text=hi", "times=3")
    assert ran.exit_code == 0 and ran.stdout == "HI HI HI\n"


def test_inspect_shows_description_source_and_schema(run_cli, project_path) -> None:
    write(project_path / ".opencode" / "tool" / "shout.py", TOOL_FILE)
    result = run_cli("tools", "inspect", "shout", "--json")
    data = json.loads(result.stdout)
    assert data["description"] == "Shout the text back."
    assert data["source"]["kind"] == "file" and data["source"]["path"].endswith("shout.py")
    params = data["parameters"]
    assert params["properties"]["text"] == {"type": "string", "description": "Text to shout"}
    assert params["required"] == ["text"]
    text = run_cli("tools", "inspect", "read")
    assert text.exit_code == 0 and "filePath" in text.stdout and "built-in" in text.stdout


def test_run_read_with_suffix_key(run_cli, project_path) -> None:
    result = run_cli("tools", "run", "read", "path=README.md")
    assert result.exit_code == 0, result.output
    assert f"<path>{project_path / 'README.md'}</path>" in result.stdout
    assert "1: # Demo" in result.stdout
    assert "'path' taken as 'filePath'" in result.stderr


def test_run_json_output(run_cli) -> None:
    result = run_cli("tools", "run", "read", '{"filePath": "README.md"}', "--json")
    data = json.loads(result.stdout)
    assert set(data) == {"title", "metadata", "output", "attachments"}
    assert data["title"] == "README.md" and data["metadata"]["truncated"] is False


def test_invalid_arguments_exit_2_with_template(run_cli) -> None:
    result = run_cli("tools", "run", "read", "filePath=README.md", 'offset:="ten"')
    assert result.exit_code == 2
    assert result.stderr.startswith("The read tool was called with invalid arguments: ")
    assert result.stderr.rstrip().endswith("Please rewrite the input so it satisfies the expected schema.")


def test_missing_required_argument_exit_2(run_cli) -> None:
    result = run_cli("tools", "run", "read")
    assert result.exit_code == 2 and '["filePath"]: Field required' in result.stderr


def test_argument_type_error_exit_2(run_cli) -> None:
    result = run_cli("tools", "run", "read", "filePath=README.md", "offset=ten")
    assert result.exit_code == 2 and "offset: expected integer" in result.stderr


def test_unknown_key_and_unknown_tool(run_cli) -> None:
    unknown_key = run_cli("tools", "run", "read", "filePath=README.md", "lmit=3")
    assert unknown_key.exit_code == 2 and "Did you mean: limit" in unknown_key.stderr
    unknown_tool = run_cli("tools", "run", "raed", "filePath=x")
    assert unknown_tool.exit_code == 2 and "No tool named 'raed'. Did you mean: read?" in unknown_tool.stderr


def test_tool_error_exit_1(run_cli) -> None:
    result = run_cli("tools", "run", "read", "filePath=missing.md")
    assert result.exit_code == 1
    assert "File not found:" in result.stderr


def test_truncated_output_and_full(run_cli, project_path, cli_env) -> None:
    write(project_path / ".opencode" / "tool" / "shout.py", TOOL_FILE)
    result = run_cli("tools", "run", "shout_many", "count=3000")
    assert result.exit_code == 0
    assert "...1000 lines truncated..." in result.stdout
    assert "line 1999\n" in result.stdout and "line 2000" not in result.stdout
    spill = next(Path(cli_env["XDG_DATA_HOME"], "opencode", "tool-output").glob("tool_*"))
    assert spill.read_text().count("\n") == 2999
    full = run_cli("tools", "run", "shout_many", "count=3000", "--full")
    assert full.stdout.rstrip("\n").splitlines()[-1] == "line 2999"


def test_outside_read_refused_without_terminal_then_allowed(run_cli, tmp_path) -> None:
    outside = tmp_path / "outside" / "secret.txt"
    write(outside, "classified\n")
    refused = run_cli("tools", "run", "read", f"filePath={outside}")
    assert refused.exit_code == 1
    assert "The user rejected permission to use this specific tool call." in refused.stderr
    assert "--yes" in refused.stderr and "classified" not in refused.stdout
    allowed = run_cli("tools", "run", "read", f"filePath={outside}", "--yes")
    assert allowed.exit_code == 0 and "1: classified" in allowed.stdout


def test_outside_read_allowed_by_config_rule(run_cli, project_path, tmp_path) -> None:
    outside = tmp_path / "outside" / "notes.txt"
    write(outside, "hello\n")
    write(
        project_path / "opencode.toml", f'[permission.external_directory]\n"{outside.parent}/*" = "allow"\n'
    )
    result = run_cli("tools", "run", "read", f"filePath={outside}")
    assert result.exit_code == 0 and "1: hello" in result.stdout


def test_broken_tool_file_never_breaks_listing(run_cli, project_path) -> None:
    write(project_path / ".opencode" / "tool" / "broken.py", "from opencode_cli import tool\n\ndef oops(:\n")
    write(project_path / ".opencode" / "tools" / "raises.py", "raise RuntimeError('no database')\n")
    listing = run_cli("tools", "list")
    assert listing.exit_code == 0 and "read" in listing.stdout
    assert "broken.py" in listing.stderr and "failed to load" in listing.stderr
    plugins = json.loads(run_cli("plugins", "list", "--json").stdout)["plugins"]
    by_name = {p["name"]: p for p in plugins}
    assert by_name["broken"]["status"] == "failed" and "broken.py:3" in by_name["broken"]["error"]
    assert by_name["raises"]["status"] == "failed"
    assert "raises.py:1: RuntimeError: no database" in by_name["raises"]["error"]
    assert by_name["core"]["status"] == by_name["files"]["status"] == "loaded"
    assert by_name["core"]["tools"] == ["invalid"] and "read" in by_name["files"]["tools"]


def test_plugins_list_text(run_cli) -> None:
    result = run_cli("plugins", "list")
    assert result.exit_code == 0
    assert f"files {__version__}  [builtin]  loaded" in result.stdout
    assert "register_tools" in result.stdout


def test_config_set_get_path(run_cli, project_path, cli_env) -> None:
    assert run_cli("config", "set", "tool_output.max_lines", "10").exit_code == 0
    assert run_cli("config", "get", "tool_output.max_lines").stdout == "10\n"
    assert run_cli("config", "set", "model", "openai/gpt-5").exit_code == 0
    assert (
        project_path / "opencode.toml"
    ).read_text() == 'model = "openai/gpt-5"\n\n[tool_output]\nmax_lines = 10\n'
    assert run_cli("config", "get", "model").stdout == "openai/gpt-5\n"
    listing = json.loads(run_cli("tools", "list", "--json").stdout)
    assert listing["model"] == "openai/gpt-5"
    assert run_cli("config", "set", "--global", "tool_output.max_bytes", "2048").exit_code == 0
    assert Path(cli_env["XDG_CONFIG_HOME"], "opencode", "opencode.toml").is_file()
    paths = json.loads(run_cli("config", "path", "--json").stdout)
    assert paths["write"] == str(project_path / "opencode.toml")
    assert next(f["source"] for f in paths["files"]) == "global"
    missing = run_cli("config", "get", "nope.never")
    assert missing.exit_code == 2 and "unknown config key 'nope'" in missing.stderr  # no such key at all
    unset = run_cli("config", "get", "subagent_depth.never")
    assert unset.exit_code == 2 and "config key 'subagent_depth.never' is not set" in unset.stderr


def test_config_limits_apply_to_output(run_cli, project_path) -> None:
    write(project_path / ".opencode" / "tool" / "shout.py", TOOL_FILE)
    write(project_path / "opencode.toml", "[tool_output]\nmax_lines = 5\n")
    result = run_cli("tools", "run", "shout_many", "count=20")
    assert "...15 lines truncated..." in result.stdout


def test_malformed_config_is_a_clear_error(run_cli, project_path) -> None:
    write(project_path / "opencode.toml", "[tool_output\nmax_lines = 3\n")
    result = run_cli("tools", "list")
    assert result.exit_code == 2
    assert str(project_path / "opencode.toml") in result.stderr and "line 1" in result.stderr
    assert "Traceback" not in result.output


def test_misspelt_config_key_warns(run_cli, project_path) -> None:
    write(project_path / "opencode.toml", '[tool_ouput]\nmax_lines = 3\n[provider.openai]\napi = "x"\n')
    result = run_cli("tools", "list")
    assert result.exit_code == 0
    assert "unknown config key 'tool_ouput' (did you mean 'tool_output'?)" in result.stderr
    assert "provider" not in result.stderr


def test_bad_flag_value_is_a_clear_error(run_cli) -> None:
    result = run_cli("tools", "list", extra_env={"OPENCODE_ENABLE_QUESTION_TOOL": "maybe"})
    assert result.exit_code == 2 and "OPENCODE_ENABLE_QUESTION_TOOL" in result.stderr


def test_unknown_agent(run_cli) -> None:
    result = run_cli("tools", "list", "--agent", "biuld")
    assert result.exit_code == 2 and "did you mean build" in result.stderr


def test_real_process_list_and_read(run_process, project_path) -> None:
    listing = run_process("tools", "list", "--model", "gpt-5")
    assert listing.returncode == 0, listing.stderr
    assert "read" in [line.split()[0] for line in listing.stdout.splitlines()]
    ran = run_process("tools", "run", "read", "path=README.md")
    assert ran.returncode == 0, ran.stderr
    assert "1: # Demo" in ran.stdout and "(End of file - total 3 lines)" in ran.stdout
    bad = run_process("tools", "run", "read", "filePath=README.md", 'limit:="x"')
    assert bad.returncode == 2 and "The read tool was called with invalid arguments" in bad.stderr
    refused = run_process("tools", "run", "read", "filePath=/etc/hostname")
    assert refused.returncode == 1 and "--yes" in refused.stderr


def test_python_dash_m(cli_env) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "opencode_cli", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and result.stdout.startswith("opencode-tools ")


def test_the_distribution_is_opencode_tools_and_both_entries_name_it(run_process) -> None:
    """The name on the package index is ours (issue 36): ``opencode-tools``, the ``opencode`` command and
    ``python -m opencode_cli`` both print it with the installed version."""
    from importlib import metadata

    version = metadata.version("opencode-tools")
    assert metadata.distribution("opencode-tools").entry_points.select(group="console_scripts")["opencode"]
    done = run_process("--version")
    assert done.returncode == 0 and done.stdout == f"opencode-tools {version}\n"
