"""Code mode's one rule for return values (issue 34, item 11): the value a script receives is what the
signature in ``execute``'s description shows, for the ``mcp`` SDK's wrapped (``-> int`` declared as
``{"result": int}``) and unwrapped (a model) output schemas; a real stdio server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tomli_w
from _codemode import CODE_MODE, run
from _mcp_servers import SERVERS
from test_execute_scripts import scripts


def _configure(project_dir: Path) -> None:
    server = {"type": "local", "command": [sys.executable, str(SERVERS / "typed_server.py")]}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": {"typed": server}}))


def test_the_signature_and_the_value_agree(make_project: Any, project_dir: Path) -> None:
    _configure(project_dir)
    project = make_project(extra_env=CODE_MODE)

    async def description() -> str:
        await project.open()
        return next(tool for tool in project.generation.offer().tools if tool.id == "execute").description

    text = run(description())
    assert 'tools.typed.add(a: int, b: int) -> {"result": int}' in text
    assert 'tools.typed.point(x: int, y: int) -> {"x": int, "y": int}' in text
    assert 'tools.typed.listed(count: int) -> {"result": list[int]}' in text
    assert "tools.typed.plain(text: str) -> str" in text

    parts = run(
        scripts(
            make_project(extra_env=CODE_MODE),
            'r = await tools.typed.add(a=1, b=2)\nreturn [r["result"], type(r).__name__]',
            'p = await tools.typed.point(x=3, y=4)\nreturn p["x"] * p["y"]',
            'n = await tools.typed.listed(count=3)\nreturn sum(n["result"])',
            'return await tools.typed.plain(text="as is")',
        )
    )
    assert [part.status for part in parts] == ["completed"] * 4, [part.error for part in parts]
    assert json.loads(parts[0].output) == [3, "dict"]
    assert parts[1].output == "12" and parts[2].output == "3"
    assert parts[3].output == "as is"
