"""docs/adapters.md's promise about ``max_retries`` (issue 28, item 11): with the default of 2, three
identical calls that do not fit the schema are three retries' worth, and the run ends with
``UnexpectedModelBehavior`` — the doom-loop check, scoped to one model response, does not cut in.

On today's main the doom-loop window spans the whole session: the third identical call is asked about as a
doom loop (and rejected), so the run goes on. The step-scoped window of issue 25 makes this pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import Agent, UnexpectedModelBehavior
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models.function import FunctionModel
from test_pydantic_ai import Scripted, run

from opencode_cli.adapters.pydantic_ai import OpencodeToolset
from opencode_cli.project import Project


def test_default_max_retries_end_the_run_as_documented(agent_project: Path, env: dict[str, str]) -> None:
    bad = [ToolCallPart("read", {"offset": 3}, tool_call_id=f"c{n}") for n in range(4)]
    model = Scripted([[call] for call in bad])

    async def main() -> None:
        async with Project(agent_project, env=env, autoload_plugins=False) as project:
            with project.session() as session:
                await Agent(FunctionModel(model), toolsets=[OpencodeToolset(session)]).run("go")

    with pytest.raises(UnexpectedModelBehavior, match="read"):
        run(main())
