"""Trust given or taken while a project is watched (``tools watch``, ``mcp serve``): the running process
follows the user's record, as a fresh one would, without a restart."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from opencode_cli import Project
from opencode_cli.watch import ChangeReport, Watcher

HELLO = '''
from opencode_cli import tool


@tool
def default(name: str) -> str:
    """Say hello."""
    return f"hello {name}"
'''


async def report_where(watcher: Watcher, wanted: str, timeout: float = 60) -> ChangeReport:
    """The first report whose tools added or removed (``wanted``) are not empty."""
    deadline = time.monotonic() + timeout
    while True:
        report = await asyncio.wait_for(anext(watcher), max(0.05, deadline - time.monotonic()))
        if getattr(report, wanted):
            return report


def opencode(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``opencode ARGS`` as a real process: the user, in another terminal."""
    return subprocess.run(
        [sys.executable, "-m", "opencode_cli", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_trust_and_untrust_from_another_terminal_reach_a_running_watcher(
    project_dir: Path, env: dict[str, str]
) -> None:
    untrusted = {key: value for key, value in env.items() if key != "OPENCODE_TRUST"}
    tool_file = project_dir / ".opencode" / "tool" / "hello.py"
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text(HELLO)
    project = Project(project_dir, env=untrusted, autoload_plugins=False)

    async def main() -> None:
        async with project.watch() as watcher:
            assert "hello" not in watcher.current.tools  # held back: listed as not trusted, not imported
            done = await asyncio.to_thread(opencode, untrusted, "trust", "--yes", str(project_dir))
            assert done.returncode == 0, done.stderr
            report = await report_where(watcher, "added")
            assert [info.id for info in report.added] == ["hello"]
            result = await project.session().execute("hello", {"name": "ada"})
            assert result.output == "hello ada"

            done = await asyncio.to_thread(opencode, untrusted, "untrust", str(project_dir))
            assert done.returncode == 0, done.stderr
            report = await report_where(watcher, "removed")
            assert [info.id for info in report.removed] == ["hello"]
            assert "hello" not in {definition.id for definition in project.tools()}

    try:
        asyncio.run(asyncio.wait_for(main(), 150))
    finally:
        project.close()


def test_a_host_that_chose_watches_no_record(project_dir: Path, env: dict[str, str]) -> None:
    from opencode_cli.trust import record_path
    from opencode_cli.watch import watch_plan

    record = str(record_path(env))
    with Project(project_dir, env=env, trusted=True) as chosen:
        assert record not in watch_plan(chosen).files
    with Project(project_dir, env=env) as following:
        assert record in watch_plan(following).files
