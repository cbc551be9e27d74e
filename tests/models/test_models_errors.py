"""Every way opening or calling a model fails, each with its one line."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, configure, local_config, refused_url

from opencode_cli.errors import ConfigError
from opencode_cli.hookspecs import hookimpl
from opencode_cli.models import Message, ModelError, TextDelta, load_catalog, open_model
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def failure(project: Project, model: str | None = None) -> tuple[str, list[Any]]:
    """The ModelError line of opening ``model`` and streaming one reply, and the events before it."""
    events: list[Any] = []

    async def main() -> None:
        async with project:
            chat = await open_model(project, model)
            async for event in chat.stream([Message("user", "hi")]):
                events.append(event)

    with pytest.raises(ModelError) as caught:
        run(main())
    text = str(caught.value)
    assert "\n" not in text
    return text, events


def test_no_model(make_project: ProjectFactory) -> None:
    assert failure(make_project())[0] == "no model: pass --model or set model in opencode.toml"


def test_unknown_provider_with_and_without_a_close_match(local_project: ProjectFactory) -> None:
    project = local_project()
    assert (
        failure(project, "lokal/x")[0]
        == "unknown provider 'lokal' (did you mean 'local'? providers: anthropic, google, local, openai)"
    )
    assert failure(local_project(), "zzz/x")[0] == (
        "unknown provider 'zzz' (providers: anthropic, google, local, openai)"
    )


def test_unknown_model_of_a_provider_that_lists_its_models(
    make_project: ProjectFactory, project_dir: Path, scripted_model: ScriptedModel
) -> None:
    config = local_config(scripted_model.url)
    config["provider"]["local"]["models"] = {"fast": {}, "smart": {}}
    configure(project_dir, config)
    assert failure(make_project(), "local/fsat")[0] == (
        "unknown model 'fsat' for provider local (did you mean 'fast'? models: fast, smart)"
    )
    assert failure(make_project(), "local/scripted-model")[0] == (
        "unknown model 'scripted-model' for provider local (models: fast, smart)"
    )
    # a bare id is found in the one provider that lists it
    scripted_model.script([{"text": "ok"}])

    async def main() -> str:
        async with make_project() as project:
            return str((await open_model(project, "smart")).ref)

    assert run(main()) == "local/smart"
    assert failure(make_project(), "llama")[0] == (
        "model 'llama' names no provider: write it as provider/model "
        "(providers: anthropic, google, local, openai)"
    )


def test_an_unsupported_npm_package_is_listed_and_fails_when_used(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    table = {"npm": "@ai-sdk/amazon-bedrock", "options": {"apiKey": "k"}}
    configure(project_dir, {"provider": {"claude": table}})
    project = make_project()

    async def listing() -> Any:
        async with project:
            return await load_catalog(project)

    catalog = run(listing())
    [entry] = [entry for entry in catalog.entries if entry.name == "claude"]
    assert (entry.origin, entry.npm, entry.supported) == ("config", "@ai-sdk/amazon-bedrock", False)
    assert failure(make_project(), "claude/sonnet")[0] == (
        "provider claude uses npm package @ai-sdk/amazon-bedrock, which is not supported "
        "(supported: @ai-sdk/anthropic, @ai-sdk/google, @ai-sdk/openai, @ai-sdk/openai-compatible)"
    )


def test_a_configured_provider_without_a_base_url(make_project: ProjectFactory, project_dir: Path) -> None:
    configure(project_dir, {"model": "local/x", "provider": {"local": {"name": "Nowhere"}}})
    assert failure(make_project())[0] == "no baseURL for provider local: set [provider.local.options] baseURL"


def test_an_endpoint_nobody_listens_on(make_project: ProjectFactory, project_dir: Path) -> None:
    url = refused_url()
    configure(project_dir, local_config(url))
    assert failure(make_project())[0] == f"cannot reach {url}: connection refused"


@pytest.mark.parametrize(
    ("status", "body", "line"),
    [
        (
            401,
            {"error": {"message": "Incorrect API key provided"}},
            "local: 401 Unauthorized: Incorrect API key provided",
        ),
        (
            429,
            {"error": {"message": "Rate limit reached"}},
            "local: 429 Too Many Requests: Rate limit reached",
        ),
        (
            500,
            {"error": {"message": "The server had an error"}},
            "local: 500 Internal Server Error: The server had an error",
        ),
        (503, {"detail": "overloaded,\n try later"}, "local: 503 Service Unavailable: overloaded, try later"),
        (502, {}, "local: 502 Bad Gateway"),
    ],
)
def test_http_errors(
    local_project: ProjectFactory, scripted_model: ScriptedModel, status: int, body: dict, line: str
) -> None:
    scripted_model.script([{"status": status, "body": body}, {"text": "never asked for"}])
    assert failure(local_project())[0] == line
    assert len(scripted_model.requests()) == 1  # no automatic retry (max_retries=0)


def test_a_stream_cut_mid_way(local_project: ProjectFactory, scripted_model: ScriptedModel) -> None:
    scripted_model.script([{"text": "abcdef", "split": 3, "cut_after": 3}])
    line, events = failure(local_project())
    assert line == (
        "the stream from local broke off: "
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    assert events == [TextDelta("ab"), TextDelta("cd")]  # what came before the cut was delivered


def test_a_stream_that_ends_without_a_finish_reason(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"stream": [{"choices": [{"index": 0, "delta": {"content": "half"}}]}]}])
    line, events = failure(local_project())
    assert line == "the stream from local broke off: it ended before the model finished its reply"
    assert events == [TextDelta("half")]


def test_an_error_event_inside_the_stream(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"stream": [{"error": {"message": "model overloaded", "type": "server_error"}}]}])
    assert failure(local_project())[0] == "local: the stream reported an error: model overloaded"


def test_an_endpoint_that_does_not_answer_in_time(
    local_project: ProjectFactory, scripted_model: ScriptedModel
) -> None:
    scripted_model.script([{"text": "late", "delay": 5}])
    assert failure(local_project(timeout=1000))[0] == "local did not answer within 1 s"


def test_a_stream_that_stalls(local_project: ProjectFactory, scripted_model: ScriptedModel) -> None:
    scripted_model.script([{"text": "slow text", "split": 3, "pause": 5}])
    line, events = failure(local_project(timeout=1500))
    assert line == "the stream from local broke off: no data for 1.5 s"
    assert events == []  # the role chunk came; the first text piece did not


def test_a_plugin_that_fails_in_register_providers(make_project: ProjectFactory, project_dir: Path) -> None:
    class Broken:
        @staticmethod
        @hookimpl
        def register_providers(register: Any) -> None:
            register("not a provider")

    configure(project_dir, {"model": "openai/gpt-5"})
    line = failure(make_project(plugins=[("broken", Broken)], extra_env={"OPENAI_API_KEY": "k"}))[0]
    assert line.startswith("a plugin failed in register_providers: ")
    assert line.endswith("TypeError: register() takes a Provider or a ProviderFactory, not str")


def test_a_wrong_type_in_a_provider_table_is_a_config_error(
    make_project: ProjectFactory, project_dir: Path
) -> None:
    configure(project_dir, {"model": "local/x", "provider": {"local": {"options": {"baseURL": 8080}}}})
    project = make_project()

    async def main() -> None:
        async with project:
            await open_model(project, None)

    with pytest.raises(ConfigError, match=r"^provider\.local\.options\.baseURL must be a string, not 8080$"):
        run(main())
