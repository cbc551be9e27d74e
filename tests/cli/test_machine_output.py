"""What a tool prints never reaches machine output (issue 44, edge 7): a tool file's ``print()`` at import, in
its body, from a thread of its own, and a child process writing to the stdout it inherited all go to stderr
under ``tools list --json``, ``tools run --json``, ``tools schema`` and ``mcp serve``
over stdio, each a real process; the SDK's client reads the protocol undisturbed."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from _processes import run_opencode
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

NOISY = '''
import os
import threading

from opencode_cli import tool

print("IMPORT NOISE")


@tool
def default(text: str) -> str:
    """Echo the text, noisily."""
    print("CALL NOISE")
    thread = threading.Thread(target=print, args=("THREAD NOISE",))
    thread.start()
    thread.join()
    os.system("echo CHILD NOISE")
    return text
'''
CALL_NOISE = ["IMPORT NOISE", "CALL NOISE", "THREAD NOISE", "CHILD NOISE"]


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / ".opencode" / "tool").mkdir(parents=True)
    (project_dir / ".opencode" / "tool" / "noisy.py").write_text(NOISY)
    return project_dir


def test_tools_list_and_schema_json_stay_json(project: Path, env: dict[str, str]) -> None:
    listed = run_opencode(project, env, "tools", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "noisy" in [tool["id"] for tool in json.loads(listed.stdout)["tools"]]
    assert "IMPORT NOISE" in listed.stderr
    schema = run_opencode(project, env, "tools", "schema", "--format", "openai")
    assert schema.returncode == 0, schema.stderr
    assert "noisy" in [tool["function"]["name"] for tool in json.loads(schema.stdout)]
    assert "IMPORT NOISE" in schema.stderr


def test_tools_run_json_stays_json(project: Path, env: dict[str, str]) -> None:
    done = run_opencode(project, env, "tools", "run", "noisy", "text=hi", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "hi"
    for line in CALL_NOISE:
        assert line in done.stderr, done.stderr


def test_mcp_serve_over_stdio_keeps_the_protocol(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    script = str(Path(sys.executable).parent / "opencode")
    params = StdioServerParameters(command=script, args=["mcp", "serve"], env=env, cwd=project)
    log = tmp_path / "serve.log"

    async def main() -> str:
        with log.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("noisy", {"text": "hi"})
                assert not result.is_error, result
                return result.content[0].text  # type: ignore[union-attr]

    assert asyncio.run(asyncio.wait_for(main(), 120)) == "hi"
    said = log.read_text()
    for line in CALL_NOISE:
        assert line in said, said
