"""When the resource tools are offered (issue 28, item 11): while a connected server declares the
``resources`` capability, even one that lists no resource (``mcp list`` then shows ``0 resources``) —
what docs/mcp-client.md says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tomli_w
from _processes import run_opencode

ROOT = Path(__file__).resolve().parents[2]

EMPTY = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("empty")


@app.tool()
def ping() -> str:
    '''Answer pong.'''
    return "pong"


app.run("stdio")  # MCPServer declares the resources capability, with no resource registered
"""


def test_resource_tools_are_offered_while_a_server_declares_resources_even_with_none(
    project_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    server = tmp_path / "empty_server.py"
    server.write_text(EMPTY)
    config = {"mcp": {"empty": {"type": "local", "command": [sys.executable, str(server)]}}}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps(config))
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}

    listed = run_opencode(project_dir, env, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "1 tool, 0 resources" in listed.stdout
    tools = json.loads(run_opencode(project_dir, env, "tools", "list", "--json").stdout)["tools"]
    ids = {tool["id"] for tool in tools}
    assert {"empty_ping", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} <= ids

    readme = " ".join((ROOT / "docs" / "mcp-client.md").read_text(encoding="utf-8").split())  # the MCP page
    assert "`read_mcp_resource` appear while a connected server declares the `resources` capability" in readme
