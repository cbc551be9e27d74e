"""A bash call of ``true`` against a plain ``bash -c true`` spawn, sandbox off and on, in the same run.

Each case is a session of its own project calling ``bash`` with ``true`` (``Session.execute``: the hooks,
the permission decision, the sandbox plan, the project's long-lived launcher, the keeper that applies the
rules and reaps, the output and exit reports); the reference is ``subprocess.run(["bash", "-c", "true"])``
from the same process. Rounds interleave the cases, so a busy machine slows them alike; the median round
is reported, with the ratio of each case to the spawn.

Aim (issue 35): a bash call at most 1.5x the spawn's wall time, sandbox off and on. The CPU time of this
process per call is printed too (the launcher's is not ours: it is not our child).

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

AIM_RATIO = 1.5
SPAWN = "bash -c true"
CASES = {
    "off": "",
    "workspace-write": '[sandbox]\nmode = "workspace-write"\n',
    "read=project": '[sandbox]\nmode = "workspace-write"\nread = "project"\n',
    "no binds": '[sandbox]\nmode = "workspace-write"\n',
}
#: Cases run with more environment: ``no binds`` is workspace-write without the configuration's
#: read-only binds (Landlock alone), to show what the private mount namespace costs.
CASE_ENV = {"no binds": {"OPENCODE_SANDBOX_MOUNTS": "0"}}


def _cpu() -> float:
    """CPU seconds used so far by this process alone."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


async def measure(calls: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    from opencode_cli.project import Project

    figures: dict[str, list[float]] = {name: [] for name in [*CASES, SPAWN]}
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
        sessions = {}
        projects = []
        for name, config in CASES.items():
            directory = root / name
            (directory / ".git").mkdir(parents=True)
            (directory / "opencode.toml").write_text(config)
            project = Project(
                directory, trusted=True, env={**env, **CASE_ENV.get(name, {})}, autoload_plugins=False
            )
            projects.append(project)
            session = project.session()
            await session.execute("bash", {"command": "true"})  # warm up (imports, the launcher)
            sessions[name] = session
        try:
            for _ in range(rounds):
                for name, session in sessions.items():
                    start, used = time.perf_counter(), _cpu()
                    for _ in range(calls):
                        result = await session.execute("bash", {"command": "true"})
                        assert result.metadata["exit"] == 0, result.output
                    figures[name].append((time.perf_counter() - start) / calls * 1000)
                    cpu[name].append((_cpu() - used) / calls * 1000)
                start, used = time.perf_counter(), _cpu()
                for _ in range(calls):
                    subprocess.run(["bash", "-c", "true"], check=True)
                figures[SPAWN].append((time.perf_counter() - start) / calls * 1000)
                cpu[SPAWN].append((_cpu() - used) / calls * 1000)
        finally:
            for project in projects:
                await project.aclose()
    return figures, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls per round and case")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (the median is reported)")
    args = parser.parse_args()
    figures, cpu = asyncio.run(measure(args.calls, args.rounds))
    median = {name: statistics.median(values) for name, values in figures.items()}
    for name, value in median.items():
        print(f"{name:>16}: {value:6.2f} ms per call, {statistics.median(cpu[name]):5.2f} ms of our CPU")
    for name in CASES:
        # the ratio of each round (the same moment's load on both sides), then their median
        ratio = statistics.median(a / b for a, b in zip(figures[name], figures[SPAWN], strict=True))
        verdict = "ok" if ratio <= AIM_RATIO else "OVER"
        print(f"bash call, sandbox {name}: {ratio:.2f}x the spawn (aim <= {AIM_RATIO}x): {verdict}")


if __name__ == "__main__":
    main()
