"""Save-to-reload latency of hot reload: how long after a tool file is saved the new schema is reported.

Measured end to end against a running ``opencode tools watch --json`` subprocess: the clock starts just
before the file is written and stops when the process's ``reload`` line carrying the new schema has been
read from its stdout (so it includes watchfiles' batching of events, the import of the file, the new
registry generation, the schema difference and the JSON line). ``--in-process`` also measures the same
through ``Project.watch()`` in this process (no pipe, no second interpreter).

Each save alternates between two versions of the tool that differ in one parameter, so every save
changes the schema. Aim: median under 300 ms on a 2-core machine.

    python benchmarks/reload.py [--saves N] [--in-process]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

AIM_MS = 300.0

VERSION = '''
from opencode_cli import Field, tool


@tool
def default(text: str = Field(description="Text."){extra}) -> str:
    """Echo the text (save {n})."""
    return text
'''


def source(n: int) -> str:
    extra = f", count{n % 2}: int = {n}" if n % 2 else ""
    return VERSION.format(extra=extra, n=n)


def figures(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    median = statistics.median(ordered)
    print(
        f"  {label:<44} median {median:6.1f} ms   p90 {p90:6.1f} ms   "
        f"min {ordered[0]:6.1f} ms   max {ordered[-1]:6.1f} ms   (n={len(ordered)})"
    )
    verdict = "meets" if median <= AIM_MS else "misses"
    print(f"  {'':<44} aim: median under {AIM_MS:.0f} ms -> {verdict}")


def subprocess_latencies(project: Path, env: dict[str, str], saves: int, pause: float) -> list[float]:
    script = str(Path(sys.executable).parent / "opencode")
    tool_file = project / ".opencode" / "tool" / "echo.py"
    process = subprocess.Popen(
        [script, "tools", "watch", "--json"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def until(condition, timeout: float = 30.0) -> dict:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while True:
            event = json.loads(lines.get(timeout=max(0.01, deadline - time.monotonic())))
            if condition(event):
                return event

    samples = []
    try:
        until(lambda e: e["event"] == "start", timeout=60)
        for n in range(1, saves + 1):
            time.sleep(pause)
            start = time.perf_counter()
            tool_file.write_text(source(n))
            until(lambda e: e["event"] == "reload" and e["changed"])
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return samples


def in_process_latencies(project: Path, env: dict[str, str], saves: int, pause: float) -> list[float]:
    from opencode_cli.project import Project

    tool_file = project / ".opencode" / "tool" / "echo.py"

    async def main() -> list[float]:
        samples = []
        watcher = Project(project, trusted=True, env=env, autoload_plugins=False).watch()
        async with watcher:
            for n in range(1, saves + 1):
                await asyncio.sleep(pause)
                start = time.perf_counter()
                tool_file.write_text(source(n + saves))
                while not (await asyncio.wait_for(anext(watcher), 30)).changed:
                    pass
                samples.append((time.perf_counter() - start) * 1000)
        return samples

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=21, help="saves to time (default 21)")
    parser.add_argument("--pause", type=float, default=0.25, help="seconds between saves (default 0.25)")
    parser.add_argument("--in-process", action="store_true", help="also time Project.watch() in-process")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        project = Path(home) / "project"
        (project / ".git").mkdir(parents=True)
        tool_file = project / ".opencode" / "tool" / "echo.py"
        tool_file.parent.mkdir(parents=True)
        tool_file.write_text(source(0))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")},
            "HOME": home,
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_DATA_HOME": f"{home}/data",
            "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        print(f"save-to-reload latency over {options.saves} saves ({os.cpu_count()} cores)")
        figures(
            "opencode tools watch --json (subprocess)",
            subprocess_latencies(project, env, options.saves, options.pause),
        )
        if options.in_process:
            figures(
                "Project.watch() (in-process)",
                in_process_latencies(project, env, options.saves, options.pause),
            )


if __name__ == "__main__":
    main()
