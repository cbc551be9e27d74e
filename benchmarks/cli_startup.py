"""Cold start of the `opencode` commands, as ratios to `python -c "import typer"` measured in the same run.

Every command runs as a fresh process, N times; the runs are interleaved (one of each command per round,
so a busy moment of the machine falls on all of them alike) and the median wall time of each is divided
by the baseline's. The package's bytecode is written first, as a wheel's install does, and the
processes may write theirs (a tool file's, a plugin's) as they would on a user's machine. Peak memory
is each process's own maximum resident size (from ``wait4``). Also:
`tools list` in a project with one tool file and one entry-point plugin (the project trusted with `opencode
trust --yes`, so the trust record is read and the file's stamp checked: issue 41 aims at no measurable cost),
and a check that `tools list` imports no tool module and none of the libraries only some commands need.

Aims (2-core machine): `tools list` at most 1.25x the baseline, every `tools run` / `tools call` of a
file tool at most 1.8x (issue 25: every call takes the one path, on an event loop; there is no
loop-less start any more), peak memory at most 60 MiB. Figures are printed, never asserted. A second
reference row imports Typer and asyncio: the floor under a call, which always runs on an event loop.

    python benchmarks/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AIM_LIST = 1.25
AIM_RUN = 1.8
AIM_MIB = 60.0
HEAVY = ("mcp", "openai", "pygls", "httpx", "pydantic_monty", "tree_sitter", "jsonschema")

PLUGIN = '''
from opencode_cli import hookimpl, tool


@tool
def bench_plugin_tool(text: str) -> str:
    """Give the text back (a benchmark's plugin tool)."""
    return text


@hookimpl
def register_tools(register):
    register(bench_plugin_tool)
'''

TOOL_FILE = '''
from opencode_cli import tool


@tool
def default(text: str) -> str:
    """Give the text back (a benchmark's tool file)."""
    return text
'''


def run_once(command: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """One fresh process: ``(wall seconds, peak resident MiB)``; a failure stops the benchmark."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{errors}")
    return elapsed, usage.ru_maxrss / 1024


def plugin_environment(home: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` plus a directory on PYTHONPATH holding an importable plugin and its entry point."""
    site = home / "plugin-site"
    (site / "bench_plugin").mkdir(parents=True)
    (site / "bench_plugin" / "__init__.py").write_text(PLUGIN)
    info = site / "bench_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[opencode]\nbench = bench_plugin\n")
    return {**env, "PYTHONPATH": str(site)}


def imported_modules(cwd: str, env: dict[str, str]) -> set[str]:
    code = (
        "import sys\n"
        "from opencode_cli.cli.app import app\n"
        "try:\n    app(['tools', 'list'], standalone_mode=False)\n"
        "finally:\n    print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return set(done.stderr.split())


def compile_package() -> None:
    """Write the package's bytecode, as installing it from a wheel does: an editable install (or
    ``PYTHONDONTWRITEBYTECODE``) would otherwise have every run compile every module from source."""
    import compileall

    import opencode_cli

    compileall.compile_dir(Path(opencode_cli.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    script = str(Path(sys.executable).parent / "opencode")
    compile_package()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        project = home / "project"
        (project / ".git").mkdir(parents=True)
        (project / "README.md").write_text("# A project\n\nwith a readme.\n" * 20)
        (project / "src").mkdir()
        for number in range(30):
            (project / "src" / f"module{number}.py").write_text(f"VALUE = {number}\n")
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
        }
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: tool files get their bytecode
        env.pop("OPENCODE_TRUST", None)  # the tool file's project is trusted through the record
        extended = home / "extended"
        (extended / ".git").mkdir(parents=True)
        (extended / ".opencode" / "tool").mkdir(parents=True)
        (extended / ".opencode" / "tool" / "echo.py").write_text(TOOL_FILE)
        subprocess.run([script, "trust", "--yes"], cwd=extended, env=env, capture_output=True, check=True)
        plugin_env = plugin_environment(home, env)
        read_call = json.dumps({"name": "read", "arguments": {"filePath": "README.md"}})
        here, there = str(project), str(extended)
        rows: list[tuple[str, list[str], str, dict[str, str], str]] = [
            ('python -c "import typer"', [sys.executable, "-c", "import typer"], here, env, "base"),
            ("floor: typer and asyncio", [sys.executable, "-c", "import typer, asyncio"], here, env, ""),
            ("opencode --help", [script, "--help"], here, env, ""),
            ("tools list", [script, "tools", "list"], here, env, "list"),
            ("tools list --model gpt-5 --json", [script, "tools", "list", "--model", "gpt-5", "--json"],
             here, env, "list"),
            ("tools inspect read", [script, "tools", "inspect", "read"], here, env, ""),
            ("tools run read", [script, "tools", "run", "read", "filePath=README.md"], here, env, "run"),
            ("tools run glob", [script, "tools", "run", "glob", "pattern=**/*.py"], here, env, "run"),
            ("tools call (a read)", [script, "tools", "call", read_call], here, env, "run"),
            ("tools schema --model gpt-5", [script, "tools", "schema", "--model", "gpt-5"], here, env, ""),
            ("tools list, tool file + plugin", [script, "tools", "list"], there, plugin_env, "list"),
        ]  # fmt: skip
        for _, command, cwd, run_env, _ in rows:  # warm the file cache, and check each command works
            run_once(command, cwd, run_env)
        listed = subprocess.run(
            [script, "tools", "list"], cwd=there, env=plugin_env, capture_output=True, text=True, check=True
        ).stdout.split()
        if "echo" not in listed or "bench_plugin_tool" not in listed:
            raise SystemExit(f"the tool file's or the plugin's tool is not listed:\n{' '.join(listed)}")
        times: dict[str, list[float]] = {label: [] for label, *_ in rows}
        memory: dict[str, float] = {label: 0.0 for label, *_ in rows}
        for _ in range(options.runs):
            for label, command, cwd, run_env, _ in rows:
                seconds, mib = run_once(command, cwd, run_env)
                times[label].append(seconds)
                memory[label] = max(memory[label], mib)
        modules = imported_modules(str(project), env)
    medians = {label: statistics.median(values) for label, values in times.items()}
    baseline = medians[rows[0][0]]
    print(f"medians of {options.runs} interleaved fresh processes each ({os.cpu_count()} cores)")
    print(f"  {'command':<34} {'ms':>7} {'ratio':>7} {'peak MiB':>9}  aim")
    for label, _, _, _, kind in rows:
        ratio = medians[label] / baseline
        aim = {"list": AIM_LIST, "run": AIM_RUN}.get(kind)
        verdict = "" if aim is None else f"<= {aim}x {'met' if ratio <= aim else 'MISSED'}"
        if memory[label] > AIM_MIB:
            verdict += f"  (over {AIM_MIB:.0f} MiB)"
        print(f"  {label:<34} {medians[label] * 1000:7.1f} {ratio:6.2f}x {memory[label]:9.1f}  {verdict}")
    tool_modules = sorted(m for m in modules if m.startswith("opencode_cli.tools."))
    heavy = sorted(m for m in HEAVY if m in modules)
    print(f"  tool modules imported by tools list: {tool_modules or 'none'}")
    print(f"  libraries imported by tools list that only some commands need: {heavy or 'none'}")


if __name__ == "__main__":
    main()
