"""Code mode from the command line, as real processes: what ``tools list`` shows with code mode on and off
(without importing the sandbox), and ``tools run execute`` with its exit codes and no worker left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _codemode import CODE_MODE, write_config
from _processes import alive, run_opencode, wait_gone

LIST_AND_MODULES = (
    "import sys\n"
    "from opencode_cli.cli import main\n"
    "sys.argv = ['opencode', 'tools', 'list', '--json']\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    # --json claims stdout for the listing alone: anything else printed goes to stderr
    "print('LOADED', 'pydantic_monty' in sys.modules, file=sys.stderr)\n"
)


def _env(env: dict[str, str], **extra: str) -> dict[str, str]:
    return {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}


def _list(project_dir: Path, env: dict[str, str]) -> tuple[list[str], bool]:
    done = subprocess.run(
        [sys.executable, "-c", LIST_AND_MODULES],
        cwd=project_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stderr.rpartition("LOADED ")[2].split()[0]
    return [tool["id"] for tool in json.loads(done.stdout)["tools"]], loaded == "True"


def test_tools_list_offers_execute_instead_of_the_mcp_tools(demo: Path, env: dict[str, str]) -> None:
    on, loaded_on = _list(demo, _env(env, **CODE_MODE))
    off, loaded_off = _list(demo, _env(env))

    assert "execute" in on and not [t for t in on if t.startswith("demo_")]
    assert "read_mcp_resource" in on  # the resource tools are still offered
    assert "execute" not in off and "demo_echo" in off
    assert not loaded_on and not loaded_off  # listing never imports the sandbox


def test_tools_run_execute_exit_codes_and_no_worker_left(demo: Path, env: dict[str, str]) -> None:
    env = _env(env, **CODE_MODE)
    code = (
        "texts = await asyncio.gather(tools.demo.echo(text='a'), tools.demo.echo(text='b'))\n'+'.join(texts)"
    )
    ran = run_opencode(demo, env, "tools", "run", "execute", f"code={code}", "--yes", "--json")
    failed = run_opencode(demo, env, "tools", "run", "execute", "code=1/0", "--yes")
    usage = run_opencode(demo, env, "tools", "run", "execute", "--yes")

    assert ran.returncode == 0, ran.stderr
    result: dict[str, Any] = json.loads(ran.stdout)
    assert result["output"] == "a+b" and result["title"] == "execute"
    assert [c["tool"] for c in result["metadata"]["toolCalls"]] == ["demo_echo", "demo_echo"]
    assert failed.returncode == 1 and "ZeroDivisionError" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert usage.returncode == 2
    assert not [pid for pid in _processes_in(demo, b"monty") if alive(pid)]


def test_a_bad_limit_is_a_clear_error(project_dir: Path, env: dict[str, str]) -> None:
    write_config(project_dir, experimental={"code_mode_limits": {"seconds": "soon"}})
    done = run_opencode(project_dir, _env(env, **CODE_MODE), "tools", "run", "execute", "code=1", "--yes")

    assert done.returncode != 0
    assert "experimental.code_mode_limits.seconds must be a positive number" in done.stderr
    assert "Traceback" not in done.stderr


def _processes_in(cwd: Path, name: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if name not in Path(f"/proc/{entry}/cmdline").read_bytes():
                continue
            if Path(os.readlink(f"/proc/{entry}/cwd")) != cwd:
                continue
        except OSError:
            continue
        found.append(int(entry))
    return found


@pytest.mark.slow
def test_a_sandbox_worker_dies_with_us_when_we_are_killed(demo: Path, env: dict[str, str]) -> None:
    script = Path(sys.executable).parent / "opencode"
    code = "code=await tools.demo.slow(seconds=60)"
    process = subprocess.Popen(
        [str(script), "tools", "run", "execute", code, "--yes"],
        cwd=demo,
        env=_env(env, **CODE_MODE),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while not workers and time.monotonic() < deadline and process.poll() is None:
            workers = [pid for pid in _processes_in(demo, b"monty") if _parent(pid) == process.pid]
            time.sleep(0.1)
        assert workers, "the script's sandbox worker never started"
        process.kill()
        process.wait(10)
        assert all(wait_gone(pid) for pid in workers)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return -1
