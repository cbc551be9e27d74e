"""Fixtures for driving the ``opencode`` command in a throwaway project and home directory."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from opencode_cli.cli.app import app


@pytest.fixture
def run_cli(cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., object]:
    """Invoke the Typer app in-process (CliRunner) from inside the project directory."""
    monkeypatch.chdir(cli_env["project"])
    env = {k: v for k, v in cli_env.items() if k != "project"}
    for key in list(os.environ):
        if key.startswith("OPENCODE_"):
            monkeypatch.delenv(key)

    def invoke(*args: str, extra_env: dict[str, str] | None = None, input: str | None = None) -> object:
        runner = CliRunner()
        return runner.invoke(app, list(args), env={**env, **(extra_env or {})}, input=input)

    return invoke


@pytest.fixture
def run_process(cli_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real ``opencode`` console script as a subprocess inside the project directory."""
    script = Path(sys.executable).parent / "opencode"
    env = {k: v for k, v in cli_env.items() if k != "project"}

    def run(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args],
            cwd=cli_env["project"],
            env={**env, **(extra_env or {})},
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )

    return run
