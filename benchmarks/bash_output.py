"""Peak memory of the bash tool on a command that prints 200 MB, next to capturing it whole.

Each measurement runs in a fresh Python process (so ``ru_maxrss``, the peak resident size of the
process, belongs to that measurement alone):

* ``tool``: the bash tool's ``run`` (scan, permission ask, process group, streaming, spill file, tail
  truncation) in a throwaway project; tracemalloc follows Python's own allocations;
* ``capture``: the same command through ``subprocess.run(capture_output=True)``, the naive way.

Aim: the tool's peak resident size below 100 MB, whatever the output size.

    python benchmarks/bash_output.py [--bytes N] [--only tool,capture]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AIM_MB = 100


def _mb(kilobytes: float) -> float:
    return kilobytes / 1024


def measure_tool(size: int) -> dict[str, float]:
    import asyncio
    import tracemalloc

    from opencode_cli.context import ToolContext
    from opencode_cli.project import Project

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "project" / ".git").mkdir(parents=True)
        env = {
            "HOME": str(root),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHELL": "/bin/bash",
        }
        project = Project(root / "project", trusted=True, env=env, autoload_plugins=False)
        tool = project.registry.get("bash").tool.load()
        updates = 0

        def on_metadata(title: object, metadata: object) -> None:
            nonlocal updates
            updates += 1

        context = ToolContext(
            directory=project.directory,
            worktree=project.worktree,
            truncator=project.generation.truncator,
            env=project.env,
            on_metadata=on_metadata,
        )
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        start = time.perf_counter()
        result = asyncio.run(tool.run({"command": f"yes | head -c {size}"}, context))
        elapsed = time.perf_counter() - start
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        spilled = Path(result.metadata["outputPath"]).stat().st_size
        return {
            "seconds": elapsed,
            "rss_before_mb": _mb(before),
            "rss_peak_mb": _mb(peak),
            "traced_peak_mb": traced_peak / 2**20,
            "spill_mb": spilled / 2**20,
            "output_kb": len(result.output.encode()) / 1024,
            "metadata_updates": updates,
        }


def measure_capture(size: int) -> dict[str, float]:
    start = time.perf_counter()
    done = subprocess.run(["bash", "-c", f"yes | head -c {size}"], capture_output=True, check=True)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": elapsed, "rss_peak_mb": _mb(peak), "captured_mb": len(done.stdout) / 2**20}


def run_child(mode: str, size: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--bytes", str(size)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=200_000_000, help="how much the command prints")
    parser.add_argument("--only", default="tool,capture", help="comma-separated: tool, capture")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure = measure_tool if args.child == "tool" else measure_capture
        print(json.dumps(measure(args.bytes)))
        return
    wanted = args.only.split(",")
    print(f"command: yes | head -c {args.bytes}  ({args.bytes / 1e6:.0f} MB of output)")
    if "tool" in wanted:
        tool = run_child("tool", args.bytes)
        verdict = "ok" if tool["rss_peak_mb"] < AIM_MB else "OVER"
        print(
            f"bash tool : peak RSS {tool['rss_peak_mb']:.1f} MB "
            f"(after imports {tool['rss_before_mb']:.1f} MB), "
            f"tracemalloc peak {tool['traced_peak_mb']:.1f} MB, {tool['seconds']:.2f} s, "
            f"spill file {tool['spill_mb']:.1f} MB, output shown {tool['output_kb']:.1f} KiB, "
            f"{tool['metadata_updates']:.0f} metadata updates  [aim < {AIM_MB} MB: {verdict}]"
        )
    if "capture" in wanted:
        capture = run_child("capture", args.bytes)
        print(
            f"capture   : peak RSS {capture['rss_peak_mb']:.1f} MB, {capture['seconds']:.2f} s "
            f"(subprocess.run(capture_output=True), {capture['captured_mb']:.1f} MB held)"
        )


if __name__ == "__main__":
    main()
