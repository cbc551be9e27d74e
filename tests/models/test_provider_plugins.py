"""Providers as plugins: the ``register_providers`` hook."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from _scripted import configure

from opencode_cli.hookspecs import hookimpl
from opencode_cli.models import (
    Event,
    Finish,
    Message,
    ModelInfo,
    Provider,
    ProviderConfig,
    ProviderFactory,
    TextDelta,
    load_catalog,
    open_model,
)
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def run(coroutine: Any, timeout: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


class Echo(Provider):
    """Says back the last message, with the model id and the options it got."""

    def __init__(
        self, name: str = "echo", title: str | None = None, models: dict[str, ModelInfo] | None = None
    ):
        self.name, self.title, self._models = name, title, models or {}
        self.connected: list[Project] = []

    def models(self) -> Mapping[str, ModelInfo]:
        return self._models

    async def connect(self, project: Project) -> None:
        self.connected.append(project)

    async def chat(
        self,
        model_id: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        options: Mapping[str, Any],
    ) -> AsyncIterator[Event]:
        yield TextDelta(f"{model_id}: {messages[-1].content} {dict(options)} tools={len(tools)}")
        yield Finish("stop")


async def reply(project: Project, model: str, **options: Any) -> tuple[str, Any]:
    async with project:
        chat = await open_model(project, model)
        events = [
            event async for event in chat.stream([Message("user", "hi")], [{"type": "function"}], **options)
        ]
        return "".join(e.text for e in events if isinstance(e, TextDelta)), chat


def test_hook_register_providers(make_project: ProjectFactory) -> None:
    echo = Echo()

    class Plugin:
        @staticmethod
        @hookimpl
        def register_providers(register: Any, project: Project) -> None:
            assert isinstance(project, Project)
            register(echo)

    project = make_project(plugins=[("echo-plugin", Plugin)])
    text, chat = run(reply(project, "echo/anything", temperature=0.5))
    assert text == "anything: hi {'temperature': 0.5} tools=1"
    assert chat.provider is echo and echo.connected == [project]
    assert project.plugins.implementers("register_providers") == ["providers", "echo-plugin"]


def test_an_async_implementation_and_a_plugin_replacing_a_builtin(make_project: ProjectFactory) -> None:
    mine = Echo("openai", "Not OpenAI", {"gpt-5": ModelInfo("gpt-5")})

    class Plugin:
        @staticmethod
        @hookimpl
        async def register_providers(register: Any) -> None:
            register(mine)

    project = make_project(plugins=[("mine", Plugin)])
    text, chat = run(reply(project, "gpt-5"))  # no key needed: the plugin's provider is used
    assert text == "gpt-5: hi {} tools=1" and chat.provider is mine


def test_a_factory_for_another_npm_package(make_project: ProjectFactory, project_dir: Path) -> None:
    built: list[ProviderConfig] = []

    def build(config: ProviderConfig) -> Provider:
        built.append(config)
        return Echo(config.name, config.title, config.models)

    factory = ProviderFactory(
        npm=("@acme/ai",), build=build, builtins=(ProviderConfig("acme", title="Acme", npm="@acme/ai"),)
    )

    class Plugin:
        @staticmethod
        @hookimpl
        def register_providers(register: Any) -> None:
            register(factory)

    configure(project_dir, {"provider": {"mine": {"npm": "@acme/ai", "models": {"m1": {}}}}})
    project = make_project(plugins=[("acme", Plugin)])

    async def listing() -> Any:
        async with project:
            return await load_catalog(project)

    catalog = run(listing())
    assert [(e.name, e.origin, e.npm, e.supported) for e in catalog.entries] == [
        ("acme", "builtin", "@acme/ai", True),
        ("anthropic", "builtin", "@ai-sdk/anthropic", True),
        ("google", "builtin", "@ai-sdk/google", True),
        ("mine", "config", "@acme/ai", True),
        ("openai", "builtin", "@ai-sdk/openai", True),
    ]
    text, _ = run(reply(make_project(plugins=[("acme", Plugin)]), "mine/m1"))
    assert text == "m1: hi {} tools=1"
