"""``opencode lsp list`` and ``opencode lsp diagnostics`` through typer's runner and as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _lsp_servers import LIB, MAIN, configure, find_program
from typer.testing import CliRunner

from opencode_cli.cli.app import app


def make(cli_env: dict[str, str], tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "lib.py").write_text(LIB)
    (project / "main.py").write_text(MAIN)
    configure(project, "ty", ty={"command": [find_program("ty"), "server"]})
    return project


def test_list_shows_configured_and_builtin_servers(cli_env: dict[str, str], tmp_path: Path) -> None:
    project = make(cli_env, tmp_path)
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        listed = runner.invoke(app, ["lsp", "list", "--json"], env=cli_env)
        text = runner.invoke(app, ["lsp", "list"], env=cli_env)
    finally:
        os.chdir(cwd)
    assert listed.exit_code == 0, listed.output
    rows = {row["name"]: row for row in json.loads(listed.stdout)["servers"]}
    assert rows["ty"]["found"] == find_program("ty") and rows["ty"]["used"] and rows["ty"]["running"] == []
    assert rows["pyright"]["disabled"] and rows["pyright"]["found"] is None
    assert set(rows) >= {"typescript", "gopls", "rust-analyzer"}
    assert text.exit_code == 0 and "ty" in text.stdout and "disabled" in text.stdout


def test_diagnostics_prints_the_block_as_a_real_process(cli_env: dict[str, str], tmp_path: Path) -> None:
    project = make(cli_env, tmp_path)
    (project / "bad.py").write_text("value = nowhere\n")
    (project / "notes.txt").write_text("hi\n")

    def opencode(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "opencode_cli", *args]
        return subprocess.run(command, cwd=project, env=cli_env, capture_output=True, text=True, timeout=60)

    bad = opencode("lsp", "diagnostics", "bad.py")
    assert bad.returncode == 0, bad.stderr
    assert bad.stdout == (
        f'<diagnostics file="{project / "bad.py"}">\nERROR [1:9] Name `nowhere` used when not defined\n'
        "</diagnostics>\n"
    )
    clean = opencode("lsp", "diagnostics", "main.py")
    assert (clean.returncode, clean.stdout) == (0, "") and "no errors" in clean.stderr
    as_json = opencode("lsp", "diagnostics", "bad.py", "--json")
    assert json.loads(as_json.stdout)["diagnostics"][0]["message"] == "Name `nowhere` used when not defined"
    none = opencode("lsp", "diagnostics", "notes.txt")
    assert (none.returncode, none.stderr.strip()) == (1, "error: No LSP server available for this file type.")
    missing = opencode("lsp", "diagnostics", "gone.py")
    assert missing.returncode == 2 and "is not a file" in missing.stderr
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    elsewhere = opencode("lsp", "diagnostics", str(outside))
    assert elsewhere.returncode == 2 and "is outside the project" in elsewhere.stderr
    assert "Traceback" not in none.stderr + missing.stderr + elsewhere.stderr


def test_listing_imports_no_protocol_library(cli_env: dict[str, str], tmp_path: Path) -> None:
    """``tools list`` (with the lsp tool on) and ``lsp list`` import neither pygls nor lsprotocol."""
    project = make(cli_env, tmp_path)
    script = (
        "import sys\n"
        "from opencode_cli.cli import main\n"
        "sys.argv = ['opencode', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('pygls', 'lsprotocol', 'cattrs') if m in sys.modules]\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
    )
    env = {**cli_env, "OPENCODE_EXPERIMENTAL_LSP_TOOL": "1"}
    for args in (["tools", "list"], ["lsp", "list"]):
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "LOADED []" in done.stderr, (args, done.stderr)
        assert done.returncode == 0
    listed = subprocess.run(
        [sys.executable, "-m", "opencode_cli", "tools", "list"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "lsp" in listed.stdout.split()


def test_tools_run_lsp_through_the_runner(cli_env: dict[str, str], tmp_path: Path) -> None:
    project = make(cli_env, tmp_path)
    env = {**cli_env, "OPENCODE_EXPERIMENTAL_LSP_TOOL": "1"}
    cwd = os.getcwd()
    os.chdir(project)
    try:
        args = ["tools", "run", "lsp", "operation=hover", "filePath=main.py", "line=3", "character=7"]
        found = CliRunner().invoke(app, [*args, "--json"], env=env)
        none = CliRunner().invoke(app, ["tools", "run", "lsp", "operation=hover", "filePath=pyproject.toml",
                                        "line=1", "character=1"], env=env)  # fmt: skip
        bad = CliRunner().invoke(app, ["tools", "run", "lsp", "operation=hover", "filePath=main.py", "line=0",
                                       "character=1"], env=env)  # fmt: skip
    finally:
        os.chdir(cwd)
    assert found.exit_code == 0, found.output
    shown = json.loads(found.stdout)
    assert shown["title"] == "hover main.py:3:7" and "def greet" in shown["output"]
    assert (none.exit_code, "No LSP server available for this file type." in none.output) == (1, True)
    assert bad.exit_code == 2


# -- what a server says, and a server that does not start ------------------------------------------------


def fixture_project(cli_env: dict[str, str], **env: str) -> Path:
    """The CLI's project with only the pygls fixture server (``env`` for it) and a clean ``code.fx``."""
    from _lsp_servers import fixture_server

    project = Path(cli_env["project"])
    fixture_server(project, **env)
    (project / "code.fx").write_text("fine\n")
    return project


def opencode(project: Path, cli_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in cli_env.items() if k != "project"}
    command = [sys.executable, "-m", "opencode_cli", *args]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_what_a_server_says_for_its_user_is_logged_at_debug_level(cli_env: dict[str, str], caplog) -> None:
    import asyncio
    import logging

    from opencode_cli.lsp.diagnostics import of_file
    from opencode_cli.project import Project

    project = fixture_project(cli_env, FIXTURE_CHATTY="1")
    done = opencode(project, cli_env, "lsp", "diagnostics", "code.fx")
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"no errors in {project / 'code.fx'}\n"  # not "Ignoring notification …" lines

    env = {k: v for k, v in cli_env.items() if k != "project"}

    async def check() -> None:
        async with Project(project, env=env) as opened:
            await of_file(opened, str(project / "code.fx"))

    with caplog.at_level(logging.DEBUG, logger="opencode_cli.lsp"):
        asyncio.run(asyncio.wait_for(check(), 60))
    said = [r.getMessage() for r in caplog.records if r.name.startswith("opencode_cli.lsp")]
    assert "language server fixture: fixture: initialised" in said
    assert "language server fixture: fixture: ready" in said  # window/showMessage
    assert f"language server fixture: fixture: opened {(project / 'code.fx').as_uri()}" in said
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name.startswith("opencode_cli.lsp"))


def test_a_server_found_but_failing_to_start_is_listed_failed_with_its_stderr(
    cli_env: dict[str, str],
) -> None:
    project = fixture_project(cli_env, FIXTURE_FAIL_START="1")
    before = opencode(project, cli_env, "lsp", "list", "--json")
    [row] = [r for r in json.loads(before.stdout)["servers"] if r["name"] == "fixture"]
    assert row["found"] and row["failed"] is None  # never started yet: found

    failed = opencode(project, cli_env, "lsp", "diagnostics", "code.fx")
    assert failed.returncode == 1 and "fixture: cannot find its runtime (exit 1)" in failed.stderr
    listed = opencode(project, cli_env, "lsp", "list", "--json")
    [row] = [r for r in json.loads(listed.stdout)["servers"] if r["name"] == "fixture"]
    reason = "exit code 1: fixture: cannot find its runtime (exit 1)"
    assert row["failed"] == f"language server fixture exited during initialize ({reason})"
    text = opencode(project, cli_env, "lsp", "list")
    [line] = [line for line in text.stdout.splitlines() if line.startswith("fixture ")]
    assert line.split() == ["fixture", "config", "failed:", *row["failed"].split()]

    fixture_project(cli_env)  # repaired: the same command now starts
    assert opencode(project, cli_env, "lsp", "diagnostics", "code.fx").returncode == 0
    again = opencode(project, cli_env, "lsp", "list", "--json")
    [row] = [r for r in json.loads(again.stdout)["servers"] if r["name"] == "fixture"]
    assert row["failed"] is None
