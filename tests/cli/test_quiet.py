"""Quiet by default (issue 36): a warning about a file or a setting is printed once per change of what it
is about, not on every command; ``plugins list`` and ``config`` still show it; and the other noise of the
issue's finding 6 (a call of a tool whose file failed, ``sandbox check`` with the sandbox off, a stray key
under ``[mcp.NAME]``, the note about no model on ``tools list``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

NO_DOC = "from opencode_cli import tool\n\n\n@tool\ndef default(x):\n    return x\n"
BOOM = 'raise RuntimeError("kaboom")\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def warnings_in(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning:")]


def test_a_warning_is_printed_once_per_change_of_its_file(run_process: Any, cli_env: dict[str, str]) -> None:
    project = Path(cli_env["project"])
    nodoc = write(project / ".opencode" / "tool" / "nodoc.py", NO_DOC)
    config = write(project / "opencode.toml", 'modle = "x"\n')
    first = run_process("tools", "list")
    assert first.returncode == 0, first.stderr
    assert len(warnings_in(first.stderr)) == 3  # no description, no type, the misspelt key
    assert f"warning: {nodoc}:4: tool 'nodoc' has no description" in first.stderr
    assert f"warning: {config}: unknown config key 'modle'" in first.stderr
    second = run_process("tools", "run", "nodoc", "x=1")
    assert second.returncode == 0 and warnings_in(second.stderr) == [], second.stderr

    listed = run_process("plugins", "list")  # its listing shows the file's warnings; stderr stays quiet
    assert f"    warning: {nodoc}:4: tool 'nodoc' has no description" in listed.stdout
    assert warnings_in(listed.stderr) == []
    assert "unknown config key 'modle'" in run_process("config", "path").stderr  # config commands: always

    write(nodoc, NO_DOC + "\n# edited\n")
    edited = run_process("tools", "list")
    assert len(warnings_in(edited.stderr)) == 2 and "modle" not in edited.stderr
    os.utime(config)  # saved again, unchanged
    saved = run_process("tools", "list")
    assert warnings_in(saved.stderr) == [
        f"warning: {config}: unknown config key 'modle' (did you mean 'mode'?); it is ignored"
    ]


def test_a_stray_key_under_an_mcp_server_is_warned_about_once_and_refused_by_config_set(
    run_process: Any, cli_env: dict[str, str]
) -> None:
    project = Path(cli_env["project"])
    write(
        project / "opencode.toml",
        '[mcp.ghost]\ntype = "local"\ncommand = ["true"]\nenabled = false\nmodel = "x"\n',
    )
    shown = run_process("tools", "list")
    assert "warning: unknown config key 'mcp.ghost.model'; it is ignored" in shown.stderr
    assert "mcp.ghost.model" not in run_process("tools", "list").stderr
    refused = run_process("config", "set", "mcp.ghost.modle", "x")
    assert refused.returncode == 2
    assert "error: unknown config key 'mcp.ghost.modle'" in refused.stderr
    assert "modle" not in (project / "opencode.toml").read_text()


def test_calling_a_tool_whose_file_failed_names_the_file_and_its_error(
    run_cli: Any, cli_env: dict[str, str]
) -> None:
    boom = write(Path(cli_env["project"]) / ".opencode" / "tool" / "boom.py", BOOM)
    for args in (("tools", "run", "boom"), ("tools", "inspect", "boom_other")):
        result = run_cli(*args)
        assert result.exit_code == 2
        assert f"The tool file {boom} failed to load: {boom}:1: RuntimeError: kaboom" in result.stderr


def test_tools_list_says_nothing_about_a_missing_model(run_cli: Any) -> None:
    result = run_cli("tools", "list")
    assert result.exit_code == 0 and result.stderr == ""
    assert "note: no model named" in run_cli("tools", "list", "--all").stderr


def test_sandbox_check_with_the_sandbox_off_does_not_claim_the_network_is_blocked(run_cli: Any) -> None:
    result = run_cli("sandbox", "check")
    assert result.exit_code == 0, result.output
    assert "mode: off; network: allowed" in result.stdout and "blocked" not in result.stdout
