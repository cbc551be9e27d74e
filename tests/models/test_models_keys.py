"""Where the API key comes from (``apiKey`` with ``{env:VAR}``, ``env = [...]``, ``<NAME>_API_KEY``),
what the endpoint receives, and the built-in ``openai`` provider."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, configure

from opencode_cli.models import Message, ModelError, load_catalog, open_model
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


async def ask(project: Project, model: str | None = None) -> None:
    async with project:
        chat = await open_model(project, model)
        [event async for event in chat.stream([Message("user", "hi")])]


def provider(name: str, url: str, **table: Any) -> dict[str, Any]:
    options = {"baseURL": url, **table.pop("options", {})}
    return {"model": f"{name}/scripted-model", "provider": {name: {**table, "options": options}}}


def test_api_key_written_as_an_env_reference(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, provider("local", scripted_model.url, options={"apiKey": "{env:MY_SECRET}"}))
    scripted_model.script([{"text": "ok"}])
    run(ask(make_project(extra_env={"MY_SECRET": "sk-from-env", "LOCAL_API_KEY": "not-this-one"})))
    assert [r["authorization"] for r in scripted_model.requests()] == ["Bearer sk-from-env"]


def test_api_key_from_name_api_key(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, provider("my-llm.box", scripted_model.url))
    scripted_model.script([{"text": "ok"}])
    run(ask(make_project(extra_env={"MY_LLM_BOX_API_KEY": "sk-derived"})))
    assert [r["authorization"] for r in scripted_model.requests()] == ["Bearer sk-derived"]


def test_api_key_from_the_tables_env_list(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, provider("local", scripted_model.url, env=["FIRST_KEY", "SECOND_KEY"]))
    scripted_model.script([{"text": "ok"}])
    run(ask(make_project(extra_env={"SECOND_KEY": "sk-second", "LOCAL_API_KEY": "not-this-one"})))
    assert [r["authorization"] for r in scripted_model.requests()] == ["Bearer sk-second"]


def test_a_configured_endpoint_may_take_no_key_and_the_process_environment_is_not_read(
    make_project: ProjectFactory,
    project_dir: Path,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in [("LOCAL_API_KEY", "x"), ("OPENAI_API_KEY", "y"), ("OPENAI_ORG_ID", "org-leak")]:
        monkeypatch.setenv(name, value)  # the process's: only the project's env counts
    configure(project_dir, provider("local", scripted_model.url, options={"headers": {"X-Team": "tools"}}))
    scripted_model.script([{"text": "ok"}])
    run(ask(make_project()))
    [request] = scripted_model.requests()
    assert request["authorization"] is None
    assert request["headers"]["x-team"] == "tools"
    assert "openai-organization" not in request["headers"] and "openai-project" not in request["headers"]


def test_the_builtin_openai_provider_without_a_key(make_project: ProjectFactory, project_dir: Path) -> None:
    with pytest.raises(ModelError) as caught:
        run(ask(make_project(), "openai/gpt-5"))
    assert (
        str(caught.value)
        == "no API key for provider openai: set OPENAI_API_KEY or [provider.openai.options] apiKey"
    )
    configure(
        project_dir, {"model": "gpt-5", "provider": {"openai": {"models": {"gpt-5": {"name": "GPT-5"}}}}}
    )
    with pytest.raises(ModelError) as caught:
        run(ask(make_project()))  # a table that keeps the built-in endpoint still needs the key
    assert (
        str(caught.value)
        == "no API key for provider openai: set OPENAI_API_KEY or [provider.openai.options] apiKey"
    )


def test_a_provider_openai_table_extends_the_builtin(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(
        project_dir,
        {
            "model": "openai/gpt-5",
            "provider": {"openai": {"options": {"baseURL": scripted_model.url}, "models": {"gpt-5": {}}}},
        },
    )
    scripted_model.script([{"text": "ok"}])
    project = make_project(extra_env={"OPENAI_API_KEY": "sk-openai"})

    async def main() -> Any:
        async with project:
            catalog = await load_catalog(project)
            model = await open_model(project, None)
            [event async for event in model.stream([Message("user", "hi")], max_tokens=100)]
            return catalog

    catalog = run(main())
    [entry] = [entry for entry in catalog.entries if entry.name == "openai"]
    assert (entry.origin, entry.npm, entry.provider.title) == ("builtin", "@ai-sdk/openai", "OpenAI")
    assert list(entry.provider.models()) == ["gpt-5"]
    [request] = scripted_model.requests()
    assert request["authorization"] == "Bearer sk-openai"
    assert request["body"]["max_completion_tokens"] == 100 and "max_tokens" not in request["body"]
