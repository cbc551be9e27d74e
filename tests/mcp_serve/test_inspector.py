"""A real third-party client: the MCP Inspector's CLI mode lists and calls the served tools."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _serve import SERVE, HttpServer, ensure_inspector

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # may install the Inspector with npm


def _inspect(argv: list[str], cwd: Path, env: dict[str, str]) -> dict:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 5), f"{done.returncode}\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "notes.txt").write_text("one needle\ntwo\n")
    return project_dir


def test_inspector_lists_and_calls_over_stdio(project: Path, env: dict[str, str]) -> None:
    inspector = ensure_inspector()
    command = [*inspector, "--cli", *SERVE]
    listed = _inspect([*command, "--method", "tools/list"], project, env)
    names = {tool["name"] for tool in listed["tools"]}
    assert {"read", "grep", "bash"} <= names and "invalid" not in names
    called = _inspect(
        [*command, "--method", "tools/call", "--tool-name", "read", "--tool-arg", "filePath=notes.txt"],
        project,
        env,
    )
    assert called["isError"] is False and "1: one needle" in called["content"][0]["text"]
    missing = _inspect(
        [*command, "--method", "tools/call", "--tool-name", "read", "--tool-arg", "filePath=nope.txt"],
        project,
        env,
    )
    assert missing["isError"] is True and "File not found" in missing["content"][0]["text"]


def test_inspector_calls_over_http(project: Path, env: dict[str, str]) -> None:
    inspector = ensure_inspector()
    served = HttpServer(project, env)
    try:
        called = _inspect(
            [
                *inspector,
                "--cli",
                served.url,
                "--transport",
                "http",
                "--method",
                "tools/call",
                "--tool-name",
                "grep",
                "--tool-arg",
                "pattern=needle",
            ],
            project,
            env,
        )
    finally:
        served.stop()
    assert called["isError"] is False and "notes.txt" in called["content"][0]["text"]
