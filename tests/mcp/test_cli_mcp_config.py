"""``mcp add`` and ``config set`` on a hand-written opencode.toml, ``mcp list``'s counts, ``tools watch``'s
first report (issue 26, item 10); real CLI processes, real servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

from _mcp_servers import SERVERS
from _processes import run_opencode

HAND_WRITTEN = """\
# the project's settings, kept by hand
model = "anthropic/claude-sonnet-4"   # the default model

# the filesystem server, pinned
[mcp.files]
type = "local"
command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
"""


def test_mcp_add_refuses_to_replace_without_force_and_keeps_comments(
    project_dir: Path, env: dict[str, str]
) -> None:
    config = project_dir / "opencode.toml"
    config.write_text(HAND_WRITTEN)

    refused = run_opencode(project_dir, env, "mcp", "add", "files", "--", "other-server")
    assert refused.returncode == 2
    assert "already has an MCP server files" in refused.stderr and "--force" in refused.stderr
    assert config.read_text() == HAND_WRITTEN

    added = run_opencode(project_dir, env, "mcp", "add", "time", "--", "uvx", "mcp-server-time")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("added MCP server time to ")
    set_ = run_opencode(project_dir, env, "config", "set", "experimental.mcp_timeout", "5000")
    assert set_.returncode == 0, set_.stderr
    forced = run_opencode(project_dir, env, "mcp", "add", "files", "--force", "--", "other-server", ".")
    assert forced.returncode == 0 and forced.stdout.startswith("replaced MCP server files in ")

    text = config.read_text()
    for line in HAND_WRITTEN.splitlines():
        if not line.startswith("command ="):  # the one value replaced
            assert line in text
    data = tomllib.loads(text)
    assert data["mcp"]["files"] == {"type": "local", "command": ["other-server", "."]}
    assert data["mcp"]["time"] == {"type": "local", "command": ["uvx", "mcp-server-time"]}
    assert data["experimental"] == {"mcp_timeout": 5000}
    assert not (project_dir / "opencode.toml.bak").exists()


def test_mcp_list_counts_in_the_singular(project_dir: Path, env: dict[str, str], tmp_path: Path) -> None:
    one_tool = [sys.executable, str(SERVERS / "stubborn_server.py"), "one"]
    (project_dir / "opencode.toml").write_text(
        f'[mcp.one]\ntype = "local"\ncommand = {json.dumps(one_tool)}\n'
    )
    env = {**env, "STUBBORN_LOG": str(tmp_path / "log"), "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = run_opencode(project_dir, env, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "connected      1 tool, 0 resources" in listed.stdout


def test_tools_watch_reports_the_servers_tools_first(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    (project_dir / "opencode.toml").write_text(
        f'[mcp.demo]\ntype = "local"\ncommand = {json.dumps(demo_server_command)}\n'
    )
    script = Path(sys.executable).parent / "opencode"
    watching = subprocess.Popen(
        [str(script), "tools", "watch", "--json"],
        cwd=project_dir,
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watching.stdout is not None
        first = json.loads(watching.stdout.readline())
    finally:
        os.kill(watching.pid, signal.SIGTERM)
        watching.communicate(timeout=60)
    assert first["event"] == "start"
    assert "demo_echo" in [tool["id"] for tool in first["tools"]]


def test_mcp_remove_drops_the_table_and_keeps_the_comments(project_dir: Path, env: dict[str, str]) -> None:
    config = project_dir / "opencode.toml"
    config.write_text(
        HAND_WRITTEN
        + '\n# the docs server\n[mcp.docs]\ntype = "remote"\nurl = "http://127.0.0.1:9/mcp"\n\n'
        + '[mcp.docs.oauth]\nclientId = "me"   # registered by hand\n'
    )

    removed = run_opencode(project_dir, env, "mcp", "remove", "files")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.startswith("removed MCP server files from ")
    text = config.read_text()
    assert "# the project's settings, kept by hand" in text and "# the default model" in text
    data = tomllib.loads(text)
    assert "files" not in data["mcp"]
    assert data["mcp"]["docs"]["oauth"] == {"clientId": "me"}

    removed = run_opencode(project_dir, env, "mcp", "remove", "docs")
    assert removed.returncode == 0, removed.stderr
    data = tomllib.loads(config.read_text())
    assert not data.get("mcp") and data["model"] == "anthropic/claude-sonnet-4"
    assert "[mcp.docs.oauth]" not in config.read_text()

    missing = run_opencode(project_dir, env, "mcp", "remove", "docs")
    assert missing.returncode == 2
    assert "has no MCP server docs" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_mcp_remove_names_the_file_a_server_lives_in(project_dir: Path, env: dict[str, str]) -> None:
    global_dir = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    global_dir.mkdir(parents=True, exist_ok=True)
    (global_dir / "opencode.toml").write_text('[mcp.far]\ntype = "local"\ncommand = ["x"]\n')
    (project_dir / "opencode.toml").write_text('model = "a/b"\n')

    refused = run_opencode(project_dir, env, "mcp", "remove", "far")
    assert refused.returncode == 2
    assert "configured in" in refused.stderr and str(global_dir / "opencode.toml") in refused.stderr
    assert (project_dir / "opencode.toml").read_text() == 'model = "a/b"\n'

    removed = run_opencode(project_dir, env, "mcp", "remove", "far", "--global")
    assert removed.returncode == 0, removed.stderr
    assert "far" not in tomllib.loads((global_dir / "opencode.toml").read_text()).get("mcp", {})


def test_mcp_remove_of_an_untrusted_project_fills_in_nothing(project_dir: Path, env: dict[str, str]) -> None:
    """Looking for where a server is configured reads the project's JSON as written: a ``{file:}`` it
    names is not opened (a FIFO here: opening it would wait for a writer that never comes)."""
    fifo = project_dir / "pipe"
    os.mkfifo(fifo)
    server = {"type": "remote", "url": "https://example.invalid/mcp", "headers": {"X": f"{{file:{fifo}}}"}}
    (project_dir / "opencode.json").write_text(json.dumps({"mcp": {"far": server}}))
    untrusted = {key: value for key, value in env.items() if key != "OPENCODE_TRUST"}

    refused = run_opencode(project_dir, untrusted, "mcp", "remove", "far")
    assert refused.returncode == 2, refused.stderr
    assert "configured in" in refused.stderr and str(project_dir / "opencode.json") in refused.stderr
    assert "Traceback" not in refused.stderr
