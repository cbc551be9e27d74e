"""``opencode tools watch`` as a real subprocess, and ``opencode tools new``."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HELLO = '''
from opencode_cli import Field, tool


@tool
def default(name: str = Field(description="Who to greet.")) -> str:
    """Say hello."""
    return f"hello {name}"
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


class Watch:
    """A running ``opencode tools watch``: its output lines, read by a thread, with a timeout per wait."""

    def __init__(self, cli_env: dict[str, str], *args: str) -> None:
        script = str(Path(sys.executable).parent / "opencode")
        env = {k: v for k, v in cli_env.items() if k != "project"}
        self.process = subprocess.Popen(
            [script, "tools", "watch", *args],
            cwd=cli_env["project"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._collect, daemon=True).start()

    @staticmethod
    def _pump(stream: Any, into: queue.Queue[str]) -> None:
        for line in stream:
            into.put(line.rstrip("\n"))

    def _collect(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.rstrip("\n"))

    def line(self, condition: Callable[[str], bool], timeout: float = 60) -> str:
        """The next stdout line meeting ``condition`` (earlier lines are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line in {timeout} s; output so far: {self.seen}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if condition(line):
                return line

    def event(self, condition: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        """The next JSON line meeting ``condition``."""
        return json.loads(self.line(lambda line: condition(json.loads(line)), timeout))

    def stop(self, signum: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=60)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def watch(cli_env: dict[str, str]) -> Iterator[Callable[..., Watch]]:
    started: list[Watch] = []

    def start(*args: str) -> Watch:
        running = Watch(cli_env, *args)
        started.append(running)
        return running

    yield start
    for running in started:
        running.kill()


@pytest.fixture
def tool_dir(cli_env: dict[str, str]) -> Path:
    return Path(cli_env["project"], ".opencode", "tool")


def test_watch_json_follows_edits_errors_files_and_config(
    watch: Callable[..., Watch], tool_dir: Path, cli_env: dict[str, str]
) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    running = watch("--json")
    start = running.event(lambda e: e["event"] == "start")
    assert start["generation"] == 1 and start["model"] is None and start["not_reloaded"] == []
    assert "hello" in [t["id"] for t in start["tools"]] and "read" in [t["id"] for t in start["tools"]]
    assert start["watching"] and start["errors"] == []

    # an edit: the new schema (how fast is measured by benchmarks/, not here)
    write(hello, HELLO.replace('"Who to greet.")) ->', '"Who."), times: int = 1) ->'))
    event = running.event(lambda e: e["event"] == "reload" and e["changed"])
    [change] = event["changed"]
    assert change["id"] == "hello" and change["description"] is None
    assert '~ properties.name.description: "Who to greet." -> "Who."' in change["parameters"]
    assert any(line.startswith("+ properties.times = ") for line in change["parameters"])

    # a syntax error: the old tool stays, the error names the file and line
    write(hello, HELLO.replace("-> str:", "-> str"))
    event = running.event(lambda e: e["event"] == "reload" and e["errors"])
    assert event["ok"] and event["changed"] == [] and event["removed"] == []
    assert event["errors"][0].startswith(f"{hello}:5: SyntaxError"), event["errors"]
    assert event["kept"] == {str(hello): ["hello"]}

    write(hello, HELLO)
    event = running.event(lambda e: e["event"] == "reload" and e["resolved"])
    assert event["resolved"] == [str(hello)] and event["errors"] == []

    # a new file, then its removal
    extra = write(tool_dir / "extra.py", HELLO.replace("Say hello.", "Extra."))
    event = running.event(lambda e: e["event"] == "reload" and e["added"])
    assert [(t["id"], t["description"]) for t in event["added"]] == [("extra", "Extra.")]
    extra.unlink()
    event = running.event(lambda e: e["event"] == "reload" and e["removed"])
    assert [t["id"] for t in event["removed"]] == ["extra"]

    # opencode.toml
    config = Path(cli_env["project"], "opencode.toml")
    config.write_text("[tool_output]\nmax_lines = 7\n")
    event = running.event(lambda e: e["event"] == "reload" and e["config"])
    assert event["files"] == [str(config)] and event["config"] == ['+ tool_output = {"max_lines": 7}']

    assert running.stop(signal.SIGTERM) == 0
    for line in running.seen:
        json.loads(line)  # every line is one JSON object
    assert not any("entry-point plugins" in line for line in running.stderr)  # none is loaded: no note


def test_watch_prints_blocks_and_ctrl_c_exits_0(watch: Callable[..., Watch], tool_dir: Path) -> None:
    hello = write(tool_dir / "hello.py", HELLO)
    running = watch("--model", "gpt-5")
    running.line(lambda line: line.startswith("watching "))
    assert any(line.startswith("hello ") and "Say hello." in line for line in running.seen)
    assert any(line.startswith("apply_patch ") for line in running.seen)  # gpt-5's rules apply
    assert not any(line.startswith("edit ") for line in running.seen)

    write(hello, HELLO.replace(")) ->", "), loud: bool = False) ->"))
    running.line(lambda line: "generation 2: 1 changed" in line)
    running.line(lambda line: line == "  ~ hello  parameters:")
    running.line(lambda line: line.strip().startswith("+ properties.loud = "))

    write(hello, "from opencode_cli import tool\n\n\n@tool\ndef default(:\n    pass\n")
    error = running.line(lambda line: line.startswith("  ! "))
    assert error.startswith(f"  ! {hello}:5: SyntaxError"), error
    running.line(lambda line: line == "    kept the last good version: hello")

    assert running.stop(signal.SIGINT) == 0


def test_tools_new_writes_a_tool_that_runs_as_written(
    run_process: Callable[..., subprocess.CompletedProcess[str]], cli_env: dict[str, str]
) -> None:
    done = run_process("tools", "new", "greet")
    assert done.returncode == 0, done.stderr
    target = Path(cli_env["project"], ".opencode", "tool", "greet.py")
    assert target.is_file()
    assert done.stdout.splitlines()[0] == f"created {os.path.join('.opencode', 'tool', 'greet.py')}"
    assert "opencode tools run greet" in done.stdout
    text = target.read_text()
    for part in ("Field(description=", '"""Repeat a piece of text', "ctx.metadata(", "await ctx.ask("):
        assert part in text

    done = run_process("tools", "run", "greet", "text=hello", "times:=2", "style=upper", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["output"] == "HELLO\nHELLO"
    assert result["title"] == "2 line(s)"
    assert result["metadata"]["times"] == 2 and result["metadata"]["style"] == "upper"

    done = run_process("plugins", "list", "--json")
    [record] = [r for r in json.loads(done.stdout)["plugins"] if r["kind"] == "file"]
    assert record["status"] == "loaded" and record["tools"] == ["greet"]

    done = run_process("tools", "inspect", "greet", "--json")
    schema = json.loads(done.stdout)["parameters"]
    assert schema["required"] == ["text"]
    assert schema["properties"]["times"]["description"] == "How many times (1 to 10)."

    # the permission the template asks for is the agent's to decide
    done = run_process(
        "tools", "run", "greet", "text=hi", extra_env={"OPENCODE_PERMISSION": '{"greet": "deny"}'}
    )
    assert done.returncode == 1 and "greet" in done.stderr


def test_tools_new_refuses_to_overwrite(run_cli: Callable[..., Any], cli_env: dict[str, str]) -> None:
    target = Path(cli_env["project"], ".opencode", "tool", "greet.py")
    write(target, "# mine\n")
    result = run_cli("tools", "new", "greet")
    assert result.exit_code == 2
    assert f"{target} already exists; not overwriting it" in result.output
    assert target.read_text() == "# mine\n"
    plural = Path(cli_env["project"], ".opencode", "tools", "other.py")
    write(plural, "# mine too\n")
    result = run_cli("tools", "new", "other")
    assert result.exit_code == 2 and "already exists" in result.output


@pytest.mark.parametrize("name", ["my-tool", "1st", "with space", "", "x" * 65, "../escape"])
def test_tools_new_validates_the_name(
    run_cli: Callable[..., Any], cli_env: dict[str, str], name: str
) -> None:
    result = run_cli("tools", "new", name)
    assert result.exit_code == 2
    assert "is not a tool name" in result.output
    assert not Path(cli_env["project"], ".opencode").exists()


def test_tools_new_suggests_a_valid_name(run_cli: Callable[..., Any]) -> None:
    result = run_cli("tools", "new", "my-tool")
    assert "(e.g. my_tool)" in result.output


def test_tools_new_global_and_nearest_opencode_dir(
    run_cli: Callable[..., Any], cli_env: dict[str, str]
) -> None:
    result = run_cli("tools", "new", "everywhere", "--global")
    assert result.exit_code == 0, result.output
    target = Path(cli_env["XDG_CONFIG_HOME"], "opencode", "tool", "everywhere.py")
    assert target.is_file() and f"created {target}" in result.output

    plural = Path(cli_env["project"], ".opencode", "tools")
    plural.mkdir(parents=True)
    result = run_cli("tools", "new", "local")
    assert result.exit_code == 0, result.output
    assert (plural / "local.py").is_file()  # an existing tools/ folder is used

    result = run_cli("tools", "list", "--json")
    ids = [t["id"] for t in json.loads(result.stdout)["tools"]]
    assert "everywhere" in ids and "local" in ids


def test_tools_new_notes_a_shadowed_builtin(run_cli: Callable[..., Any]) -> None:
    result = run_cli("tools", "new", "read")
    assert result.exit_code == 0
    assert "note: it replaces the built-in tool read" in result.output


def test_watch_with_a_broken_config_or_unknown_agent_exits_2(
    run_cli: Callable[..., Any], cli_env: dict[str, str]
) -> None:
    result = run_cli("tools", "watch", "--agent", "nobody")
    assert result.exit_code == 2 and "no agent named 'nobody'" in result.output
    config = Path(cli_env["project"], "opencode.toml")
    config.write_text("[tool_output\n")
    result = run_cli("tools", "watch")
    assert result.exit_code == 2 and f"{config}: invalid TOML" in result.output
