"""The built-in ``bash`` tool (builtin-tools spec §2; test list "shell.test.ts" in §17).

Every test runs a real shell in a throwaway project. The spec's cases run once per installed shell
(bash always; sh and zsh when present), chosen through ``$SHELL`` in the project's environment.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness

from opencode_cli import Project
from opencode_cli.context import AbortSignal, PermissionRequest
from opencode_cli.errors import AbortedError, InvalidArgumentsError, RejectedError, ToolError
from opencode_cli.flags import Flags
from opencode_cli.paths import tmp_dir
from opencode_cli.session import Decision
from opencode_cli.tools import _bash_prompt, _shell_choice
from opencode_cli.tools import bash as bash_module

TIMEOUT_TEXT = "shell tool terminated command after exceeding timeout"
RETRY_TEXT = "retry with a larger timeout value in milliseconds"
SHELLS = [name for name in ("bash", "sh", "zsh") if shutil.which(name)]


# -- helpers -------------------------------------------------------------------------------------------


def bash_harness(project: Project, reject: bool = False) -> Harness:
    """The shared harness for bash: the project's environment (its ``$SHELL``), updates timed."""
    return Harness(project, "bash", env=True, reject=reject, timed=True)


@pytest.fixture(params=SHELLS)
def shell_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def shell_project(make_project: Any, shell_name: str) -> Project:
    """A git project whose environment's ``$SHELL`` is the shell under test."""
    return make_project(extra_env={"SHELL": shutil.which(shell_name) or shell_name})


@pytest.fixture
def bash_project(make_project: Any) -> Project:
    """A project run with bash (for the cases that are about the tool, not the shell)."""
    return make_project(extra_env={"SHELL": shutil.which("bash") or "/bin/bash"})


@pytest.fixture
def harness(shell_project: Project) -> Harness:
    return bash_harness(shell_project)


@pytest.fixture
def bash(bash_project: Project) -> Harness:
    return bash_harness(bash_project)


def pid_gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (gone, or an exited zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(")") + 2] in "ZX"


def wait_gone(pid: int, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid_gone(pid):
            return True
        time.sleep(0.05)
    return pid_gone(pid)


# -- shell.test.ts: running ------------------------------------------------------------------------------


def test_echo_runs_with_exit_code_zero(harness: Harness) -> None:
    result = harness.run({"command": "echo test"})
    assert result.metadata["exit"] == 0
    assert "test" in result.metadata["output"]
    assert result.output == "test\n"
    assert result.title == "echo test"
    assert result.metadata["truncated"] is False
    assert "outputPath" not in result.metadata


@pytest.mark.parametrize("unwanted", ["fish", "nu"])
def test_fish_and_nu_fall_back_to_an_acceptable_shell(make_project: Any, unwanted: str) -> None:
    env = {"SHELL": f"/usr/bin/{unwanted}", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    chosen = _shell_choice.choose(env)
    assert _shell_choice.name(chosen) in _shell_choice.ACCEPTED
    description = _bash_prompt.describer(Flags(), env)()
    assert f"Shell: {_shell_choice.name(chosen)}" in description
    project = make_project(extra_env={"SHELL": f"/usr/bin/{unwanted}"})
    result = bash_harness(project).run({"command": "echo fallback"})
    assert result.output == "fallback\n"


def test_shell_choice_takes_shell_when_bash_zsh_or_sh() -> None:
    path = os.environ.get("PATH", "/usr/bin:/bin")
    for name in SHELLS:
        full = shutil.which(name)
        assert _shell_choice.choose({"SHELL": full, "PATH": path}) == full
    assert _shell_choice.name(_shell_choice.choose({"PATH": path})) == "bash"
    assert _shell_choice.name(_shell_choice.choose({"SHELL": "/no/such/zsh", "PATH": path})) == "bash"
    fallback = _shell_choice.choose({"SHELL": "/bin/dash", "PATH": "/nowhere"})
    assert fallback in (shutil.which("bash"), "/bin/sh")


def test_stdout_and_stderr_are_merged(harness: Harness) -> None:
    result = harness.run({"command": "echo stdout_msg && echo stderr_msg >&2"})
    assert "stdout_msg" in result.output and "stderr_msg" in result.output
    assert result.metadata["exit"] == 0


def test_merged_output_keeps_arrival_order(bash: Harness) -> None:
    result = bash.run({"command": "echo 1; echo 2 >&2; echo 3; echo 4 >&2"})
    assert result.output == "1\n2\n3\n4\n"


def test_exit_code_is_in_metadata_not_in_output(harness: Harness) -> None:
    result = harness.run({"command": "exit 42"})
    assert result.metadata["exit"] == 42
    assert result.output == "(no output)"
    assert "42" not in result.output


def test_non_zero_exit_is_not_an_error(bash: Harness) -> None:
    result = bash.run({"command": "echo before; false"})
    assert result.metadata["exit"] == 1
    assert result.output == "before\n"


def test_shell_killed_by_a_signal_reports_128_plus_signal(bash: Harness) -> None:
    result = bash.run({"command": "kill -9 $$"})
    assert result.metadata["exit"] == 137


def test_empty_output_is_no_output(bash: Harness) -> None:
    result = bash.run({"command": "true"})
    assert result.output == "(no output)"
    assert result.metadata == {"output": "(no output)", "exit": 0, "truncated": False}


def test_metadata_updates_arrive_while_the_command_runs(harness: Harness, tmp_path: Path) -> None:
    # "second" is printed only once an update carrying "first" has arrived (it creates the file)
    release = tmp_path / "release"
    updates: list[dict[str, Any]] = []

    def on_metadata(title: str | None, metadata: dict[str, Any] | None) -> None:
        updates.append(dict(metadata or {}))
        if "first" in updates[-1].get("output", ""):
            release.touch()

    command = f"echo first; while [ ! -e {release} ]; do sleep 0.01; done; echo second"
    result = harness.run({"command": command}, on_metadata=on_metadata)
    with_output = [m for m in updates if m.get("output")]
    assert len(with_output) > 1
    assert updates[0] == {"output": ""}
    assert with_output[-1]["output"] == "first\nsecond\n"
    assert result.metadata["output"] == "first\nsecond\n"


def test_streamed_output_arrives_before_the_command_ends(bash: Harness, tmp_path: Path) -> None:
    # The command waits for a file that only the progress callback creates, once it has seen "early":
    # the output can say "released" only if "early" reached the host while the command was still running.
    release = tmp_path / "release"
    seen: list[str] = []

    def on_metadata(title: str | None, metadata: dict[str, Any] | None) -> None:
        output = (metadata or {}).get("output", "")
        if "early" in output and not release.exists():
            seen.append(output)
            release.touch()

    command = (
        f"echo early; i=0; while [ ! -e {release} ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; "
        f"[ -e {release} ] && echo released; echo late"
    )
    result = bash.run({"command": command}, on_metadata=on_metadata)
    assert seen == ["early\n"]
    assert result.output == "early\nreleased\nlate\n"


@pytest.mark.parametrize("interval", [3600.0, 0.0])
def test_metadata_updates_are_throttled(
    bash: Harness, monkeypatch: pytest.MonkeyPatch, interval: float
) -> None:
    # At most one live update per interval: with an hour, only the first (empty) preview and the final
    # one are sent however much the command prints; with none, every piece of output is sent.
    monkeypatch.setattr(bash_module, "METADATA_INTERVAL_SECONDS", interval)
    command = "for i in $(seq 1 40); do echo line $i; sleep 0.01; done"
    bash.run({"command": command})
    outputs = [metadata["output"] for _, metadata in bash.updates]
    assert outputs[-1] == "".join(f"line {i}\n" for i in range(1, 41))
    if interval:
        assert outputs == ["", outputs[-1]]
    else:
        assert len(outputs) > 2
        assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(outputs))


def test_stdin_is_closed(bash: Harness) -> None:
    # ``cat`` and ``read`` see end of input at once (an open stdin would leave them waiting until the
    # timeout ends the command, and the output would say so).
    result = bash.run({"command": 'cat; read -r line; echo "[$line] $?"', "timeout": 30000})
    assert result.output == "[] 1\n"
    assert result.metadata["exit"] == 0


def test_command_runs_in_its_own_process_group(bash: Harness) -> None:
    # The group is led by the launcher, the shell's parent, which stays to reap what the shell starts.
    result = bash.run({"command": "cut -d' ' -f4,5 /proc/$$/stat"})
    parent, group = result.output.split()
    assert group == parent
    assert int(group) != os.getpgid(0)


def test_workdir_relative_to_the_project(bash: Harness) -> None:
    (bash.project.directory / "sub").mkdir()
    result = bash.run({"command": "pwd", "workdir": "sub"})
    assert result.output.strip() == str(bash.project.directory / "sub")
    assert bash.asked("external_directory") == []


def test_default_workdir_is_the_project(bash: Harness) -> None:
    assert bash.run({"command": "pwd"}).output.strip() == str(bash.project.directory)


def test_missing_workdir_is_an_error(bash: Harness) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        bash.run({"command": "pwd", "workdir": "nope"})


def test_environment_is_the_projects(make_project: Any) -> None:
    project = make_project(extra_env={"SHELL": "/bin/bash", "OPENCODE_TEST_MARK": "marked"})
    assert bash_harness(project).run({"command": "echo $OPENCODE_TEST_MARK"}).output == "marked\n"


def test_output_is_decoded_as_utf8_across_chunk_boundaries(bash: Harness) -> None:
    result = bash.run({"command": "printf 'é%.0s' $(seq 1 40000); printf '\\xff\\n'"})
    assert result.output.startswith("...output truncated...")
    assert result.output.endswith("é" * 10 + "\ufffd\n")


def test_invalid_timeout_values_are_rejected(bash: Harness) -> None:
    for value in (0, -5, 1.5, "100"):
        with pytest.raises(InvalidArgumentsError, match=r'\["timeout"\]'):
            bash.run({"command": "true", "timeout": value})
    with pytest.raises(InvalidArgumentsError, match=r'\["command"\]: Field required'):
        bash.run({"timeout": 1000})


def test_negative_timeout_when_validation_is_bypassed(bash: Harness) -> None:
    params = bash_module.parameters().model_construct(command="true", timeout=-3, workdir=None)
    with pytest.raises(ToolError, match=r"Invalid timeout value: -3\. Timeout must be a positive number\."):
        asyncio.run(bash_module.execute(params, bash.context()))


def test_unparsable_command_fails_before_asking(bash: Harness) -> None:
    with pytest.raises(ToolError, match=r"^Failed to parse command$"):
        bash.run({"command": 'echo "unterminated'})
    assert bash.requests == []


def test_rejected_command_does_not_run(bash_project: Project) -> None:
    harness = bash_harness(bash_project, reject=True)
    marker = bash_project.directory / "ran.txt"
    with pytest.raises(RejectedError):
        harness.run({"command": f"touch {marker}"})
    assert not marker.exists()
    assert [r.permission for r in harness.requests] == ["bash"]


def test_through_a_session_with_rules(make_project: Any, project_dir: Path) -> None:
    (project_dir / "opencode.toml").write_text('[permission.bash]\n"*" = "ask"\n"echo *" = "allow"\n')
    project = make_project(extra_env={"SHELL": "/bin/bash"})
    asked: list[PermissionRequest] = []

    async def prompt(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision("reject")

    assert project.run_tool("bash", {"command": "echo allowed"}, prompt=prompt).output == "allowed\n"
    with pytest.raises(RejectedError):
        project.run_tool("bash", {"command": "echo a && touch b"}, prompt=prompt)
    assert [r.patterns for r in asked] == [["echo a", "touch b"]]
    assert not (project_dir / "b").exists()


# -- shell.test.ts: permission requests ---------------------------------------------------------------------


def test_one_bash_request_for_a_simple_command(harness: Harness) -> None:
    harness.run({"command": "echo hello"})
    assert len(harness.requests) == 1
    request = harness.requests[0]
    assert request.permission == "bash"
    assert "echo hello" in request.patterns
    assert request.metadata == {"command": "echo hello"}
    assert request.always == ["echo *"]


def test_one_request_names_every_command_of_a_list(harness: Harness) -> None:
    harness.run({"command": "echo foo && echo bar"})
    assert len(harness.requests) == 1
    assert harness.requests[0].patterns == ["echo foo", "echo bar"]


def test_glob_outside_asks_external_directory(harness: Harness) -> None:
    harness.run({"command": "cat /etc/* > /dev/null 2>&1 || true"})
    external = harness.asked("external_directory")
    assert len(external) == 1 and "/etc/*" in external[0].patterns


def test_cd_to_the_parent_asks_external_directory(harness: Harness) -> None:
    harness.run({"command": "cd ../"})
    external = harness.asked("external_directory")
    parent = str(harness.project.directory.parent)
    assert len(external) == 1 and external[0].patterns == [f"{parent}/*"]
    assert harness.asked("bash") == []


def test_workdir_outside_asks_external_directory(harness: Harness) -> None:
    tmp = os.path.realpath(tempfile.gettempdir())
    result = harness.run({"command": "echo ok", "workdir": tmp})
    external = harness.asked("external_directory")
    assert len(external) == 1 and f"{tmp}/*" in external[0].patterns
    assert result.output == "ok\n"


def test_file_outside_asks_with_patterns_always_and_metadata(harness: Harness, outer: Path) -> None:
    (outer / "outside.txt").write_text("x")
    command = f"cat {outer}/outside.txt"
    harness.run({"command": command})
    external = harness.asked("external_directory")
    assert len(external) == 1
    glob = f"{outer}/*"
    assert external[0].patterns == [glob] and external[0].always == [glob]
    assert external[0].metadata == {"command": command, "directories": [str(outer)], "patterns": [glob]}
    assert [r.permission for r in harness.requests] == ["external_directory", "bash"]


def test_nested_command_substitution_outside(harness: Harness, outer: Path) -> None:
    (outer / "outside.txt").write_text("x")
    command = f'echo $(cat "{outer}/outside.txt")'
    harness.run({"command": command})
    assert harness.asked("external_directory")[0].patterns == [f"{outer}/*"]
    assert f'cat "{outer}/outside.txt"' in harness.asked("bash")[0].patterns


def test_removing_inside_the_project_asks_no_external_directory(harness: Harness) -> None:
    (harness.project.directory / "nested").mkdir()
    harness.run({"command": f"rm -rf {harness.project.directory}/nested"})
    assert harness.asked("external_directory") == []
    assert not (harness.project.directory / "nested").exists()


def test_always_prefix_of_git_log(harness: Harness) -> None:
    harness.run({"command": "git log --oneline -5"})
    assert len(harness.requests) == 1
    always = harness.requests[0].always
    assert always and any(item.endswith("*") for item in always)
    assert always == ["git log *"]


def test_cd_dot_asks_nothing(harness: Harness) -> None:
    harness.run({"command": "cd ."})
    assert harness.asked("bash") == []
    assert harness.requests == []


def test_redirection_keeps_the_whole_statement_as_pattern(harness: Harness) -> None:
    harness.run({"command": "echo test > output.txt"})
    assert harness.asked("bash")[0].patterns == ["echo test > output.txt"]
    assert (harness.project.directory / "output.txt").read_text() == "test\n"


def test_ls_always_prefix(harness: Harness) -> None:
    harness.run({"command": "ls -la"})
    assert harness.requests[0].always[0] == "ls *"


# -- shell.test.ts: abort and timeout ------------------------------------------------------------


def _abort_when(harness: Harness, text: str) -> AbortSignal:
    signal = AbortSignal()
    previous = harness._metadata

    def watch(title: str | None, metadata: dict[str, Any] | None) -> None:
        previous(title, metadata)
        if text in (metadata or {}).get("output", ""):
            signal.abort()

    harness._metadata = watch  # type: ignore[method-assign]
    return signal


def test_abort_keeps_the_output_and_says_so(harness: Harness) -> None:
    signal = _abort_when(harness, "before")
    # the call cannot end by itself (sleep 1000): it ends because the abort stopped the command
    result = harness.run({"command": "echo before && sleep 1000"}, abort=signal)
    assert "before" in result.output
    assert "User aborted the command" in result.output
    assert result.output.endswith("\n\n<shell_metadata>\nUser aborted the command\n</shell_metadata>")
    assert result.metadata["exit"] is None


def test_abort_kills_the_whole_process_group(bash: Harness) -> None:
    signal = _abort_when(bash, "started")
    result = bash.run({"command": "sleep 1000 & echo $!; echo started; sleep 30"}, abort=signal)
    grandchild = int(result.output.split()[0])
    assert wait_gone(grandchild)


def test_abort_before_running_raises_interrupted(bash: Harness) -> None:
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(AbortedError):
        bash.run({"command": "echo never"}, abort=signal)


def test_abort_while_waiting_for_permission(bash_project: Project) -> None:
    signal = AbortSignal()

    async def hang(request: PermissionRequest) -> None:
        signal.abort()
        await asyncio.sleep(30)

    harness = bash_harness(bash_project)
    marker = bash_project.directory / "never.txt"
    with pytest.raises(AbortedError):
        harness.run({"command": f"touch {marker}"}, abort=signal, asker=hang)
    assert not marker.exists()


def test_timeout_stops_the_command_and_says_so(harness: Harness) -> None:
    result = harness.run({"command": "sleep 1000", "timeout": 500})  # ends only through the timeout
    assert TIMEOUT_TEXT in result.output
    assert RETRY_TEXT in result.output
    assert result.output == (
        "(no output)\n\n<shell_metadata>\n"
        + bash_module.TIMEOUT_NOTE.format(timeout=500)
        + "\n</shell_metadata>"
    )
    assert result.metadata["exit"] is None


def test_timeout_allows_a_hundred_milliseconds_more(bash: Harness) -> None:
    start = time.monotonic()
    bash.run({"command": "sleep 5", "timeout": 200})
    assert time.monotonic() - start >= 0.3  # time is what is tested: a lower bound, which load cannot break


def test_no_process_survives_a_timeout(bash: Harness) -> None:
    result = bash.run({"command": "sleep 1000 & echo $!; sleep 60", "timeout": 500})
    grandchild = int(result.output.split()[0])
    assert TIMEOUT_TEXT in result.output
    assert wait_gone(grandchild), f"process {grandchild} survived the timeout"


@pytest.mark.slow
def test_a_process_ignoring_sigterm_is_killed_after_the_grace_period(bash: Harness) -> None:
    command = "(trap '' TERM; sleep 1000 & echo $!; wait) & sleep 1000"
    start = time.monotonic()
    result = bash.run({"command": command, "timeout": 300})
    assert time.monotonic() - start >= 3  # the grace period is what is tested: a lower bound only
    assert TIMEOUT_TEXT in result.output  # and the timeout (not the command's end) stopped it
    grandchild = int(result.output.split()[0])
    assert wait_gone(grandchild)


def test_a_timeout_also_kills_what_left_the_process_group(bash: Harness) -> None:
    # The escapee ignores SIGTERM and runs in a session of its own: the launcher kills it at the end.
    command = "setsid sh -c 'trap \"\" TERM; exec sleep 1000' & echo $!; sleep 60"
    result = bash.run({"command": command, "timeout": 300})
    escapee = int(result.output.split()[0])
    assert wait_gone(escapee)


def test_default_timeout_from_the_environment_flag(make_project: Any) -> None:
    project = make_project(
        extra_env={"SHELL": "/bin/bash", "OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS": "500"}
    )
    description = project.registry.get("bash").tool.description
    assert "commands will time out after 500ms" in description
    result = bash_harness(project).run({"command": "sleep 60"})
    assert "exceeding timeout 500 ms" in result.output


def test_background_job_does_not_hold_the_call(bash: Harness) -> None:
    result = bash.run({"command": "sleep 1000 & echo $!"})  # held by the job, it would never return
    background = int(result.output.split()[0])
    try:
        assert result.metadata["exit"] == 0
        assert not pid_gone(background)  # left running, as upstream does after a normal exit
    finally:
        os.kill(background, 9)


# -- shell.test.ts: output size ------------------------------------------------------------------


def test_many_lines_are_tail_truncated(harness: Harness) -> None:
    result = harness.run({"command": "seq 1 2500"})
    assert result.metadata["truncated"] is True
    assert "...output truncated..." in result.output
    assert "Full output saved to:" in result.output
    path = result.metadata["outputPath"]
    assert result.output.startswith(f"...output truncated...\n\nFull output saved to: {path}\n\n")
    body = result.output.split("\n\n", 2)[2]
    assert body.split("\n")[0] == "502" and body.endswith("2500\n")
    assert len(body.split("\n")) == 2000


def test_one_long_line_is_tail_truncated(bash: Harness) -> None:
    result = bash.run({"command": "head -c 61200 /dev/zero | tr '\\0' 'a'"})
    assert result.metadata["truncated"] is True
    assert "...output truncated..." in result.output
    assert "Full output saved to:" in result.output
    body = result.output.split("\n\n", 2)[2]
    assert body == "a" * 51200
    assert Path(result.metadata["outputPath"]).read_text() == "a" * 61200


def test_a_single_short_line_is_not_truncated(bash: Harness) -> None:
    result = bash.run({"command": "echo 1"})
    assert result.metadata["truncated"] is False
    assert "outputPath" not in result.metadata


def test_saved_file_holds_every_line(harness: Harness) -> None:
    result = harness.run({"command": "seq 1 2100"})
    assert result.metadata["outputPath"]
    lines = Path(result.metadata["outputPath"]).read_text().splitlines()
    assert lines == [str(n) for n in range(1, 2101)]


def test_huge_output_keeps_the_tail_and_spills_everything(bash: Harness) -> None:
    result = bash.run({"command": "seq 1 1000000"})
    saved = Path(result.metadata["outputPath"])
    assert saved.parent == bash.project.generation.truncator.directory
    assert saved.name.startswith("tool_")
    assert saved.read_text() == "".join(f"{n}\n" for n in range(1, 1_000_001))
    assert result.output.endswith("999999\n1000000\n")
    assert len(result.output.encode()) < 60_000
    assert result.metadata["output"].startswith("...\n\n")
    assert len(result.metadata["output"]) == 30_000 + 5


def test_configured_limits_apply(make_project: Any, project_dir: Path) -> None:
    (project_dir / "opencode.toml").write_text("[tool_output]\nmax_lines = 10\nmax_bytes = 1000\n")
    result = bash_harness(make_project(extra_env={"SHELL": "/bin/bash"})).run({"command": "seq 1 50"})
    assert result.metadata["truncated"] is True
    assert result.output.split("\n\n", 2)[2] == "\n".join(str(n) for n in range(42, 51)) + "\n"
    assert Path(result.metadata["outputPath"]).read_text().count("\n") == 50


def test_truncated_output_is_not_truncated_again(bash: Harness) -> None:
    result = bash.run({"command": "seq 1 3000"})
    assert "The tool call succeeded but the output was truncated" not in result.output
    assert result.output.count("Full output saved to:") == 1


def test_abort_of_huge_output_still_reports_the_spill_file(bash: Harness) -> None:
    signal = AbortSignal()
    previous = bash._metadata

    def watch(title: str | None, metadata: dict[str, Any] | None) -> None:
        previous(title, metadata)
        if len((metadata or {}).get("output", "")) >= 30_000:
            signal.abort()

    bash._metadata = watch  # type: ignore[method-assign]
    result = bash.run({"command": "yes 0123456789"}, abort=signal)
    assert result.output.startswith("...output truncated...\n\nFull output saved to: ")
    assert result.output.endswith("<shell_metadata>\nUser aborted the command\n</shell_metadata>")
    assert result.metadata["truncated"] is True
    assert Path(result.metadata["outputPath"]).stat().st_size > 51200


# -- description, parameters, registration ------------------------------------------------------------------


def test_description_names_os_shell_directory_tmp_limits_and_timeout(bash_project: Project) -> None:
    description = bash_project.registry.get("bash").tool.description
    assert "OS: linux" in description or "OS: darwin" in description
    assert re.search(r"Shell: (bash|zsh|sh);", description)
    # where commands run: the project's directory, not this process's (issue 36: a library host's
    # project is rarely its current directory)
    assert os.getcwd() != str(bash_project.directory)
    assert f"Working directory: {bash_project.directory};" in description or (
        f"Working directory: {bash_project.directory}\n" in description
    )
    assert f"Working directory: {os.getcwd()}\n" not in description
    # the scratch directory of the project's environment (Node's os.tmpdir() rules), not this process's
    assert str(tmp_dir(bash_project.env)) in description
    assert "2000 lines or 51200 bytes" in description
    assert "commands will time out after 120000ms (2 minutes)" in description
    assert "workdir" in description and "Git" in description
    assert 3000 < len(description) < 7000


def test_description_of_the_loaded_tool_is_the_same(bash_project: Project) -> None:
    entry = bash_project.registry.get("bash")
    assert entry.tool.load().description == entry.tool.description


def test_parameters_schema(bash_project: Project) -> None:
    schema = bash_project.registry.get("bash").tool.load().schema()
    assert schema["required"] == ["command"]
    assert list(schema["properties"]) == ["command", "timeout", "workdir"]
    assert schema["properties"]["command"] == {"description": "The command to execute", "type": "string"}
    timeout = schema["properties"]["timeout"]
    assert timeout["type"] == "integer" and timeout["exclusiveMinimum"] == 0
    assert "maximum" in timeout and "anyOf" not in timeout
    assert schema["properties"]["workdir"]["type"] == "string"


def test_registered_after_invalid_and_before_read(bash_project: Project) -> None:
    order = [tool for tool in bash_project.registry.entries if tool != "question"]  # question: gated
    assert order[:3] == ["invalid", "bash", "read"]
    assert bash_project.registry.get("bash").source.kind == "builtin"


def test_listing_tools_does_not_import_the_tool_or_its_parser() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from opencode_cli import Project; p = Project(autoload_plugins=False); "
        "[t.description for t in p.tools()]; "
        "print(sorted(m for m in ('opencode_cli.tools.bash', 'tree_sitter', 'asyncio.subprocess') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- bounded memory -----------------------------------------------------------------------------------------


def test_collector_memory_stays_bounded_and_the_spill_file_gets_everything(tmp_path: Path) -> None:
    from opencode_cli.tools import _shell_output
    from opencode_cli.truncate import Truncator

    collector = _shell_output.OutputCollector(Truncator(tmp_path / "out"))
    chunk = ("0123456789abcdef" * 4095 + "\n") * 1  # just under 64 KiB, one line
    for _ in range(200):  # about 13 MB
        collector.add(chunk)
        assert collector._kept_bytes <= 2 * collector.max_bytes + len(chunk)
        assert collector._full_bytes <= collector.max_bytes
        assert len(collector.preview) <= 30_005
    collected = collector.finish()
    assert collected.cut and collected.path is not None
    assert collected.path.stat().st_size == 200 * len(chunk)
    assert collected.text == chunk[-51_200:]  # the last line, cut to its last bytes, then the newline


@pytest.mark.parametrize(
    ("text", "expected", "cut"),
    [
        ("a\nb\nc", "a\nb\nc", False),
        ("x" * 10 + "\n", "xxxxxxxxx\n", True),
        ("x" * 12, "x" * 10, True),
        ("1\n2\n3\n4\n5", "3\n4\n5", True),
        ("é" * 6, "é" * 5, True),
        ("aaaa\n" + "é" * 6, "é" * 5, True),
    ],
)
def test_tail_keeps_the_last_lines_within_both_limits(text: str, expected: str, cut: bool) -> None:
    from opencode_cli.tools._shell_output import tail

    assert tail(text, 3, 10) == (expected, cut)
