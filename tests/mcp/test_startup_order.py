"""What a CLI command with stdio servers does first (issue 26, the mcp_startup figures): it starts the
servers, and only then imports the ``mcp`` SDK (which takes longer than starting them), so that they get
ready while it imports. Seen in a fresh process, through the audit event of each process it starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import tomli_w

PROBE = """
import json, sys

events = []


def hook(event, args):
    if event == "subprocess.Popen" and any("demo_server" in str(arg) for arg in args[1]):
        events.append("mcp" in sys.modules)  # whether the SDK was imported when a server started


sys.addaudithook(hook)
from opencode_cli.cli.app import app

try:
    app(["tools", "list"], standalone_mode=False)
finally:
    print("EVENTS", json.dumps(events), file=sys.stderr)
"""


def test_the_servers_start_before_the_sdk_is_imported(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    servers = {f"demo{n}": {"type": "local", "command": demo_server_command} for n in range(3)}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=project_dir,
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert all(f"demo{n}_echo" in done.stdout for n in range(3)), done.stdout
    line = next(line for line in done.stderr.splitlines() if line.startswith("EVENTS "))
    events = json.loads(line.removeprefix("EVENTS "))
    assert len(events) == 3 and events[0] is False, events  # a server started before the SDK was imported
