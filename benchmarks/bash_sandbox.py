"""What the Landlock sandbox adds to a bash call: a trivial command (``true``) run through the bash tool
with the sandbox off and on, in the same run, interleaved round by round.

Both go through the launcher (the reaper that makes a command die with us, started for every command),
so the difference is the sandbox alone: building the plan (real paths), the ``sandbox`` permission
decision, and in the child ``no_new_privs`` + one Landlock ruleset. ``read = "project"`` (more rules) is
measured too. For reference, ``bash -c true`` started directly (no tool, no launcher) is printed.

Aim (issue 27): at most 5 ms added per call by the sandbox. Wall time on a busy machine is noisy, so the
CPU time per call (ours and the children's, once reaped) is printed too.

    python benchmarks/bash_sandbox.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

AIM_MS = 5.0
CASES = {
    "off": "",
    "workspace-write": '[sandbox]\nmode = "workspace-write"\n',
    "read=project": '[sandbox]\nmode = "workspace-write"\nread = "project"\n',
}


async def measure(calls: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    from opencode_cli.context import ToolContext
    from opencode_cli.project import Project

    figures: dict[str, list[float]] = {name: [] for name in [*CASES, "bash -c true"]}
    cpu: dict[str, list[float]] = {name: [] for name in figures}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        env = {
            "HOME": str(root),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHELL": "/bin/bash",
            "TMPDIR": str(root / "tmp"),
        }
        (root / "tmp").mkdir()
        runs = {}
        for name, config in CASES.items():
            directory = root / name
            (directory / ".git").mkdir(parents=True)
            (directory / "opencode.toml").write_text(config)
            project = Project(directory, env=env, autoload_plugins=False)
            tool = project.registry.get("bash").tool.load()
            context = ToolContext(
                directory=project.directory,
                worktree=project.worktree,
                truncator=project.truncator,
                env=project.env,
                project=project,
            )
            await tool.run({"command": "true"}, context)  # warm up (imports, first plan)
            runs[name] = (tool, context)
        for _ in range(rounds):
            for name, (tool, context) in runs.items():
                start, used = time.perf_counter(), _cpu()
                for _ in range(calls):
                    result = await tool.run({"command": "true"}, context)
                    assert result.metadata["exit"] == 0, result.output
                figures[name].append((time.perf_counter() - start) / calls * 1000)
                cpu[name].append((_cpu() - used) / calls * 1000)
            start, used = time.perf_counter(), _cpu()
            for _ in range(calls):
                subprocess.run(["bash", "-c", "true"], check=True)
            figures["bash -c true"].append((time.perf_counter() - start) / calls * 1000)
            cpu["bash -c true"].append((_cpu() - used) / calls * 1000)
    return figures, cpu


def _cpu() -> float:
    """CPU seconds used so far by this process and its reaped children (load-independent, unlike time)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls per round and case")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the median is reported)")
    args = parser.parse_args()
    figures, cpu = asyncio.run(measure(args.calls, args.rounds))
    median = {name: statistics.median(values) for name, values in figures.items()}
    for name, value in median.items():
        print(f"{name:>16}: {value:6.2f} ms per call, {statistics.median(cpu[name]):6.2f} ms of CPU")
    for name in ("workspace-write", "read=project"):
        added = median[name] - median["off"]
        verdict = "ok" if added <= AIM_MS else "OVER"
        print(f"sandbox {name} adds {added:+.2f} ms per call (aim <= {AIM_MS:.0f} ms): {verdict}")


if __name__ == "__main__":
    main()
