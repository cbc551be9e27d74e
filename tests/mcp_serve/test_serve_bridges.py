"""``opencode mcp serve`` serves the bridged tools (issue 43) as any other: an llm plugin's tool and a
configured llm toolbox's method, listed with their schemas and called by a real MCP client."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _serve import run, stdio_session

import opencode_cli

llm = pytest.importorskip("llm")
pytest.importorskip("llm_tools_sqlite")

ROOT = Path(opencode_cli.__file__).resolve().parent.parent


def test_serve_lists_and_calls_llm_tools(project_dir: Path, env: dict[str, str]) -> None:
    with sqlite3.connect(project_dir / "x.db") as connection:
        connection.execute("create table t (a)")
        connection.execute("insert into t values (7)")
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml"  # the user's own: trusted
    config.parent.mkdir(parents=True)
    config.write_text(f"[llm]\ntoolboxes = ['SQLite(\"{project_dir / 'x.db'}\")']\n")
    served = {
        **env,
        "OPENCODE_PLUGIN_PATH": str(Path(llm.__file__).resolve().parent.parent),  # llm's plugins are seen
        "PYTHONPATH": str(ROOT),
    }

    async def main() -> tuple[dict[str, dict], str, str]:
        async with stdio_session(project_dir, served) as session:
            listed = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
            evaluated = await session.call_tool("simple_eval", {"expression": "2**10"})
            queried = await session.call_tool("SQLite_query", {"sql": "select a from t"})
            return listed, evaluated.content[0].text, queried.content[0].text  # type: ignore[union-attr]

    listed, evaluated, queried = run(main())
    assert listed["simple_eval"]["properties"] == {"expression": {"type": "string"}}
    assert "sql" in listed["SQLite_query"]["properties"]
    assert (evaluated, queried) == ("1024", '[{"a": 7}]')
