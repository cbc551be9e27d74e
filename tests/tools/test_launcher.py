"""The project's long-lived launcher (issue 35): started on first use, started again when it died, stopped
with the project (and everything it started with it); per-call rules on one launcher; a keeper that
serves again never passes a signal meant for one command on to the next.

Waits poll with a bound; the assertions are about what is alive, never about how long it took.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness
from _processes import wait_for

from opencode_cli import Project
from opencode_cli.context import AbortSignal
from opencode_cli.sandbox import landlock


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class ProjectHarness(Harness):
    def context(self, **changes: Any) -> Any:
        return super().context(**{"project": self.project, **changes})


@pytest.fixture
def project(make_project: Any) -> Project:
    return make_project(extra_env={"SHELL": shutil.which("bash") or "/bin/bash"})


@pytest.fixture
def bash(project: Project) -> Harness:
    return ProjectHarness(project, "bash", env=True)


def test_one_launcher_serves_every_call_and_starts_again_when_it_died(
    project: Project, bash: Harness
) -> None:
    assert bash.run({"command": "echo one"}).output == "one\n"
    assert bash.run({"command": "echo two"}).output == "two\n"
    launcher = project.launcher
    first = launcher.pid
    assert first is not None and launcher.starts == 1
    os.kill(first, signal.SIGKILL)
    assert wait_for(lambda: not alive(first), 20)
    assert bash.run({"command": "echo three"}).output == "three\n"
    assert launcher.starts == 2 and launcher.pid not in (None, first)


def test_the_launcher_stops_with_the_project_and_takes_what_it_started(
    project: Project, bash: Harness
) -> None:
    result = bash.run({"command": "sleep 1000 & echo $!"})
    job = int(result.output)
    launcher = project.launcher.pid
    assert launcher is not None and alive(job)
    project.close()
    assert wait_for(lambda: not alive(job), 20), "the background job outlived the project"
    assert wait_for(lambda: not alive(launcher), 20)


def test_a_stopped_commands_signals_never_reach_the_next_command(bash: Harness) -> None:
    """A command timed out (its keeper got SIGTERM, then the group SIGKILL…) and the next calls run to
    their end on the same launcher: a keeper that was stopped does not serve again."""
    stopped = bash.run({"command": "trap '' TERM; sleep 30", "timeout": 200})
    assert stopped.metadata["exit"] is None
    for _ in range(5):
        result = bash.run({"command": "sleep 0.2; echo done"})
        assert result.metadata["exit"] == 0 and result.output == "done\n"


def test_an_abort_stops_the_command_and_the_launcher_serves_on(bash: Harness) -> None:
    signal_ = AbortSignal()

    def abort_soon(title: Any, metadata: Any) -> None:
        if metadata and "started" in metadata.get("output", ""):
            signal_.abort()

    bash._metadata = abort_soon  # type: ignore[method-assign]
    aborted = bash.run({"command": "echo started; sleep 30"}, abort=signal_)
    assert "User aborted the command" in aborted.output
    bash._metadata = lambda title, metadata: None  # type: ignore[method-assign]
    assert bash.run({"command": "echo after"}).output == "after\n"


@pytest.mark.skipif(landlock.kernel_abi()[0] < 1, reason="needs Landlock")
def test_sandboxed_and_unsandboxed_calls_share_the_launcher(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    """Each call's own rules: one project, its sandbox on, calls with ``OPENCODE_SANDBOX=off`` between."""
    (project_dir / "opencode.toml").write_text('[sandbox]\nmode = "workspace-write"\n')
    outside, temp = tmp_path / "outside", tmp_path / "tmp"
    outside.mkdir()
    temp.mkdir()
    project = make_project(extra_env={"SHELL": shutil.which("bash") or "/bin/bash", "TMPDIR": str(temp)})
    bash = ProjectHarness(project, "bash", env=True)
    for round_ in range(2):
        bash.run({"command": f"echo x > {outside}/confined"})
        assert not (outside / "confined").exists()
        bash.run({"command": f"echo x > {outside}/free{round_}"}, env=bash.env(OPENCODE_SANDBOX="off"))
        assert (outside / f"free{round_}").exists()
    assert project.launcher.starts == 1


def test_where_there_is_no_long_lived_launcher_each_command_has_its_own(
    project: Project, bash: Harness
) -> None:
    """Without ``SOCK_SEQPACKET`` (not Linux) each command starts under a one-shot launcher that reports
    the same way: output, exit code, a stop that takes the whole group, background jobs ended with the
    project."""
    project.launcher.served = False
    assert bash.run({"command": "echo hi; exit 3"}).output == "hi\n"
    assert bash.run({"command": "exit 3"}).metadata["exit"] == 3
    stopped = bash.run({"command": "sleep 30", "timeout": 200})
    assert stopped.metadata["exit"] is None and "terminated command after exceeding timeout" in stopped.output
    job = int(bash.run({"command": "sleep 1000 & echo $!"}).output)
    assert project.launcher.pid is None and alive(job)
    project.close()
    assert wait_for(lambda: not alive(job), 20)
