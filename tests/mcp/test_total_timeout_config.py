"""``[mcp.NAME] maxTotalTimeout``: how long a tool call may run in all while its server reports progress,
and the words of a call it cuts (the bound and its key, not the request timeout)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from opencode_cli import ToolError
from opencode_cli.errors import ConfigError
from opencode_cli.mcp.config import DEFAULT_MAX_TOTAL_TIMEOUT_MS, servers
from opencode_cli.project import Project
from opencode_cli.session import Decision


def _server(**table: object) -> object:
    found, warnings = servers({"mcp": {"slow": {"type": "local", "command": ["slow-server"], **table}}})
    assert warnings == []  # a known key
    return found["slow"]


def test_the_total_bound_is_configured_in_milliseconds() -> None:
    server = _server(timeout=5000, maxTotalTimeout=120_000)
    assert server.request_timeout == 5 and server.total_timeout == 120  # type: ignore[attr-defined]
    assert server.as_dict()["maxTotalTimeout"] == 120_000  # type: ignore[attr-defined]


def test_by_default_ten_minutes_and_never_less_than_the_request_timeout() -> None:
    assert _server().total_timeout == DEFAULT_MAX_TOTAL_TIMEOUT_MS / 1000  # type: ignore[attr-defined]
    assert _server(timeout=5000, maxTotalTimeout=1000).total_timeout == 5  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [0, -1, "600", True, 1.5])
def test_a_bad_value_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match=r"mcp\.slow\.maxTotalTimeout must be a positive number"):
        _server(maxTotalTimeout=value)


# -- the bound at work, with a real server ----------------------------------------------------------------

FAITHFUL = Path(__file__).resolve().parent.parent / "mcp_serve" / "servers" / "faithful_server.py"


@pytest.mark.slow
def test_a_call_cut_by_the_total_bound_names_it_not_the_request_timeout(
    make_project: Callable[..., Project], project_dir: Path
) -> None:
    # progress every 0.3 s keeps the 5 s request timeout (the start's too) from cutting it; the 7 s bound does
    command = [sys.executable, str(FAITHFUL)]
    table = {"type": "local", "command": command, "timeout": 5000, "maxTotalTimeout": 7000}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": {"faithful": table}}))
    project = make_project()

    async def allow(request: Any) -> Decision:
        return Decision("once")

    async def main() -> None:
        async with project:
            await project.open()
            async with project.session(prompt=allow) as session:
                with pytest.raises(ToolError) as cut:
                    await session.execute("faithful_slow", {"steps": 1000, "pause": 0.3})
                assert str(cut.value) == (
                    'MCP server "faithful" did not finish tools/call within 7 s '
                    "(mcp.faithful.maxTotalTimeout), though it kept reporting progress"
                )

    asyncio.run(asyncio.wait_for(main(), 120))
