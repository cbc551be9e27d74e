"""Code mode with a server named like a module the sandbox provides (issue 26, item 8): ``time``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tomli_w
from _codemode import CODE_MODE, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))
from _mcp_servers import DEMO_SERVER

from opencode_cli.session import Decision, ToolCall, ToolPart


async def allow(request: Any) -> Decision:
    return Decision("once")


def test_a_server_named_time_is_reached_and_scripts_run(make_project: Any, project_dir: Path) -> None:
    command = [sys.executable, str(DEMO_SERVER), "stdio"]
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"time": {"type": "local", "command": command}}})
    )
    project = make_project(extra_env=CODE_MODE)

    async def main() -> tuple[str, list[ToolPart]]:
        await project.open()
        async with project.session(prompt=allow) as session:
            [execute] = [tool for tool in session.resolve() if tool.name == "execute"]
            parts = []
            for code in (
                "return 1 + 1",
                "import time\nreturn (await tools.time_.echo(text='hi'), type(time.time()).__name__)",
                "x = tools.time_.echo(text='forgot')\nreturn x['a']",
                "return tools.time_.echo(text='forgot')",
            ):
                parts.append(await session.dispatch(ToolCall("execute", json.dumps({"code": code}))))
            return execute.description, parts

    description, (plain, called, unawaited, returned) = run(main())
    assert (plain.status, plain.output) == ("completed", "2")
    assert called.status == "completed" and json.loads(called.output) == ["hi", "float"]
    assert "tools.time_.echo(" in description and 'server "time" is reached as `tools.time_`' in description
    assert unawaited.status == "error" and "await" in (unawaited.error or "")
    assert "returns a coroutine: `await` it" in (unawaited.error or "")
    assert returned.status == "error" and "returns a coroutine: `await` it" in (returned.error or "")


def test_the_sandbox_modules_are_those_monty_refuses_as_namespaces() -> None:
    from pydantic_monty import ExternalModule

    from opencode_cli.codemode.catalog import SANDBOX_MODULES

    refused = set()
    for name in sorted(sys.stdlib_module_names | {"tools", "pydantic"}):
        try:
            ExternalModule({name: ExternalModule({})})
        except ValueError:
            refused.add(name)
    assert refused == SANDBOX_MODULES
