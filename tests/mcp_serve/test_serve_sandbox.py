"""``opencode mcp serve --sandbox MODE``: the bash calls a client makes run in the sandbox (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _serve import run, stdio_session, text_of

from opencode_cli.sandbox import landlock


@pytest.mark.skipif(landlock.kernel_abi()[0] < 4, reason="needs Landlock ABI 4")
@pytest.mark.parametrize("mode", ["workspace-write", "off"])
def test_bash_calls_run_in_the_sandbox_the_flag_names(
    mode: str, project_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    outside, temp = tmp_path / "outside", tmp_path / "tmp"
    outside.mkdir()
    temp.mkdir()
    command = f"touch {outside}/x && echo made"

    async def main() -> Any:
        flags = ["--sandbox", mode, "--allow", "external_directory"]
        async with stdio_session(project_dir, {**env, "TMPDIR": str(temp)}, *flags) as session:
            return await session.call_tool("bash", {"command": command, "description": "Touch"})

    result = text_of(run(main()))
    if mode == "off":
        assert result == "made\n" and (outside / "x").exists()
    else:
        assert "Permission denied" in result and "ran in the workspace-write sandbox" in result
        assert not (outside / "x").exists()
