"""Small frictions a new user met (issue 45, item 8), each fixed and pinned here."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from test_plugin_reports import install

ROOT = Path(__file__).resolve().parents[2]


def test_tools_list_and_tools_schema_offer_the_same_tools(run_process: Any) -> None:
    """Without a terminal nobody can answer a question: neither command offers `question`."""
    listed = run_process("tools", "list", "--model", "gpt-5", "--json")
    schema = run_process("tools", "schema", "--model", "gpt-5")
    assert listed.returncode == 0 and schema.returncode == 0, listed.stderr + schema.stderr
    names = [tool["id"] for tool in json.loads(listed.stdout)["tools"]]
    sent = [tool["function"]["name"] for tool in json.loads(schema.stdout)]
    assert "question" not in names and sorted(names) == sorted(sent)
    everything = run_process("tools", "list", "--all")
    assert "question" in everything.stdout and "switched off" in everything.stdout


def test_a_failed_plugins_tool_says_which_plugin_failed_and_why(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    install(site, "weather", "opencode_weather", "raise RuntimeError('no network at import')\n")
    env = {k: v for k, v in cli_env.items() if k not in ("project", "OPENCODE_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = env["OPENCODE_PLUGIN_PATH"] = str(site)
    script = Path(__import__("sys").executable).parent / "opencode"
    done = subprocess.run(
        [str(script), "tools", "run", "weather_now", "city=Oslo"],
        cwd=cli_env["project"], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert "No tool named 'weather_now'." in done.stderr
    assert "Plugins that failed to load (one may provide it): 'weather':" in done.stderr
    assert "no network at import" in done.stderr


def test_tool_file_rows_are_named_from_the_project_root(run_process: Any, cli_env: dict[str, str]) -> None:
    folder = Path(cli_env["project"]) / ".opencode" / "tool"
    folder.mkdir(parents=True)
    (folder / "hello.py").write_text(
        textwrap.dedent(
            '''
            from opencode_cli import tool

            @tool
            def default(name: str) -> str:
                """Say hello."""
                return f"hello {name}"
            '''
        )
    )
    done = run_process("tools", "list", extra_env={"OPENCODE_TRUST": "1"})
    [row] = [line for line in done.stdout.splitlines() if line.startswith("hello ")]
    assert "file .opencode/tool/hello.py" in row and cli_env["project"] not in row


def test_watch_says_nothing_of_entry_point_plugins_when_none_is_loaded(make_project: Any) -> None:
    assert make_project().watch().notice == ""


def test_the_built_site_is_ignored_by_git() -> None:
    if not (ROOT / ".git").exists():
        import pytest

        pytest.skip("not a git checkout: nothing to ignore")
    done = subprocess.run(["git", "check-ignore", "-q", "site/index.html"], cwd=ROOT, timeout=30)
    assert done.returncode == 0


def test_sandbox_check_names_the_external_directory_ask(run_cli: Any) -> None:
    result: Any = run_cli("sandbox", "check", "cat ~/.ssh/id_ed25519")
    assert result.exit_code == 0, result.output
    assert "command: asks external_directory first" in result.output and "/.ssh is outside" in result.output
    data = json.loads(run_cli("sandbox", "check", "cat ~/.ssh/id_ed25519", "--json").output)
    assert data["command"]["external_directory"] == "ask"
    inside: Any = run_cli("sandbox", "check", "cat README.md", "--json")
    assert json.loads(inside.output)["command"]["external_directory"] is None
