"""The client is a project service (``model:<provider>``): started on first use, shared, replaced when
its settings change, stopped when the project closes; and nothing of it is imported before."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _scripted import ScriptedModel, configure, local_config

from opencode_cli.models import Message, open_model
from opencode_cli.models.openai_client import ProviderClient
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]
HEAVY = ("openai", "httpx", "httpx2", "asyncio")


def run(coroutine: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def test_the_client_service_is_shared_and_stopped_when_the_project_closes(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"text": "one"}, {"text": "two"}])
    project = local_project(extra_env={"LOCAL_API_KEY": "sk-1"})

    async def main() -> tuple[Any, Any, list]:
        async with project:
            first = await open_model(project, None)
            [event async for event in first.stream([Message("user", "hi")])]
            second = await open_model(project, "local/scripted-model")
            [event async for event in second.stream([Message("user", "hi")])]
            service = project.services.peek("model:local")
            return service, service.client, project.services.statuses()

    service, client, statuses = run(main())
    assert isinstance(service, ProviderClient) and client is not None
    assert [(s.name, s.state, s.detail) for s in statuses] == [("model:local", "running", scripted_model.url)]
    assert [s.state for s in project.services.statuses()] == ["stopped"]
    assert service.client is None and client.is_closed()


def test_a_changed_config_gets_a_new_client(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, local_config(scripted_model.url, apiKey="sk-old"))
    scripted_model.script([{"text": "one"}, {"text": "two"}])
    project = make_project()

    async def main() -> list[Any]:
        async with project:
            services = []
            for key in ("sk-old", "sk-new"):
                if key == "sk-new":
                    configure(project_dir, local_config(scripted_model.url, apiKey=key))
                    project.generations.install(project.generations.prepare())  # what a hot reload does
                model = await open_model(project, None)
                [event async for event in model.stream([Message("user", "hi")])]
                services.append(project.services.peek("model:local"))
            return services

    old, new = run(main())
    assert old is not new and old.client is None  # the old one was stopped
    assert [r["authorization"] for r in scripted_model.requests()] == ["Bearer sk-old", "Bearer sk-new"]


def test_listing_tools_and_importing_the_package_import_no_sdk(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    code = (
        "import sys\n"
        "import opencode_cli.models\n"
        "from opencode_cli.cli import main\n"
        "sys.argv = ['opencode', 'tools', 'list']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    env = {key: value for key, value in cli_env.items() if key != "project"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cli_env["project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "LOADED []"
    assert "read" in done.stdout
