"""Cold start of `opencode tools list`, next to `python -c pass` and `opencode --help`, in the same run.

Also `tools list` in a project with two stdio MCP servers (started, listed and stopped), to show what
servers cost; without one configured the mcp SDK is never imported.

Prints the median wall time of N fresh processes of each command, and checks what `tools list` imports:
no tool module and no pydantic (so start-up does not grow with the number of built-in tools).
Aim: `opencode tools list` under 150 ms on a 2-core machine.

    python benchmarks/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def median_ms(command: list[str], runs: int, cwd: str, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


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


SERVER = (
    "from mcp.server.mcpserver import MCPServer\n"
    "app = MCPServer('bench')\n"
    "@app.tool()\n"
    "def echo(text: str) -> str:\n"
    "    'Echo.'\n"
    "    return text\n"
    "app.run('stdio')\n"
)


def mcp_project(home: Path) -> Path:
    """A second project whose opencode.toml names two stdio MCP servers (the SDK's MCPServer)."""
    project = home / "with-mcp"
    (project / ".git").mkdir(parents=True)
    server = home / "bench_server.py"
    server.write_text(SERVER)
    tables = "".join(
        f'[mcp.s{n}]\ntype = "local"\ncommand = ["{sys.executable}", "{server}"]\n\n' for n in (1, 2)
    )
    (project / "opencode.toml").write_text(tables)
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    options = parser.parse_args()
    script = str(Path(sys.executable).parent / "opencode")
    with tempfile.TemporaryDirectory() as home:
        project = Path(home) / "project"
        (project / ".git").mkdir(parents=True)
        env = {
            **os.environ,
            "HOME": home,
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_DATA_HOME": f"{home}/data",
        }
        cwd = str(project)
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("opencode --help", [script, "--help"]),
            ("opencode tools list", [script, "tools", "list"]),
            ("opencode tools list --model gpt-5", [script, "tools", "list", "--model", "gpt-5"]),
        ]
        median_ms(rows[2][1], 3, cwd, env)  # warm the file cache
        results = [(label, median_ms(command, options.runs, cwd, env)) for label, command in rows]
        modules = imported_modules(cwd, env)
        with_servers = str(mcp_project(Path(home)))
        median_ms(rows[2][1], 1, with_servers, env)
        runs = max(3, options.runs // 3)
        results.append(("tools list, 2 stdio MCP servers", median_ms(rows[2][1], runs, with_servers, env)))
    baseline = results[0][1]
    print(f"median wall time over {options.runs} fresh processes ({os.cpu_count()} cores)")
    for label, ms in results:
        print(f"  {label:<36} {ms:7.1f} ms   ({ms - baseline:+7.1f} ms over python -c pass)")
    tool_modules = sorted(m for m in modules if m.startswith("opencode_cli.tools."))
    heavy = sorted(m for m in ("pydantic", "jsonschema", "asyncio", "rich", "mcp", "httpx2") if m in modules)
    print(f"  tool modules imported by tools list: {tool_modules or 'none'}")
    print(f"  heavy packages imported by tools list: {heavy or 'none'}")
    aim = 150.0
    verdict = "meets" if results[2][1] <= aim else "misses"
    print(f"  aim: tools list under {aim:.0f} ms -> {verdict} ({results[2][1]:.1f} ms)")


if __name__ == "__main__":
    main()
