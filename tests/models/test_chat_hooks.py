"""The chat hooks, called by the run loop: each changes what the scripted server receives, and ``event``
sees every event of the run in order."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _scripted import ScriptedModel, configure, local_config

from opencode_cli import hookimpl
from opencode_cli.models import Message
from opencode_cli.permission import Rule
from opencode_cli.project import Project
from opencode_cli.session import Decision
from opencode_cli.transcript import TextPart

pytest_plugins = ["pytester"]


def run(coroutine: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


class ChatPlugin:
    """Implements every chat hook; async and sync ones alike."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @hookimpl
    def chat_message(self, message: Any, parts: list[Any]) -> None:
        parts[0].text = parts[0].text.upper()
        parts.append(TextPart("(sent from a test)", synthetic=True))

    @hookimpl
    async def chat_params(self, provider: str, params: Any) -> None:
        params.temperature, params.top_k = 0.25, 7
        params.max_output_tokens = 321
        params.options["seed"] = 42 if provider == "local" else 0

    @hookimpl
    def chat_headers(self, headers: dict[str, str]) -> None:
        headers["X-From-Plugin"] = "yes"

    @hookimpl
    def chat_system_transform(self, system: list[str]) -> None:
        system.append("Always answer in French.")

    @hookimpl
    def chat_messages_transform(self, messages: list[Any]) -> None:
        messages.insert(0, Message("user", "context from a plugin"))

    @hookimpl
    async def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def test_each_chat_hook_changes_the_request(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, local_config(scripted_model.url))
    plugin = ChatPlugin()
    project = make_project(plugins=[("chat", plugin)])
    scripted_model.script([{"text": "Bonjour."}])

    async def main() -> Any:
        async with project, project.session(remember=True) as session:
            return await session.run("hello"), session

    result, session = run(main())
    assert result.text == "Bonjour."
    [request] = scripted_model.requests()
    body = request["body"]
    assert [m["content"] for m in body["messages"] if m["role"] == "system"][-1] == "Always answer in French."
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert users == ["context from a plugin", "HELLO\n\n(sent from a test)"]
    assert (body["temperature"], body["top_k"], body["max_tokens"], body["seed"]) == (0.25, 7, 321, 42)
    assert request["headers"]["x-from-plugin"] == "yes"
    stored = project.resume(session.id).messages[0]
    assert stored.text == "HELLO(sent from a test)"  # the hook's parts are what the transcript keeps


class Watcher:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @hookimpl
    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def test_the_event_hook_sees_every_event_in_order(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    (project_dir / "notes.txt").write_text("one\n")
    configure(project_dir, local_config(scripted_model.url))
    watcher = Watcher()
    project = make_project(plugins=[("watcher", watcher)])
    arguments = json.dumps({"filePath": "notes.txt"})
    scripted_model.script(
        [{"tool_calls": [{"id": "c1", "name": "read", "arguments": arguments}]}, {"text": "One line."}]
    )

    async def yes(request: Any) -> Decision:
        return Decision("once")

    async def main() -> Any:
        rules = [Rule("read", "*", "ask", "test")]
        async with project, project.session(prompt=yes, rules=rules) as session:
            await session.run("read it")
            return session

    session = run(main())
    kinds = [event["type"] for event in watcher.events]
    assert kinds[:2] == ["message.updated", "message.part.updated"]  # the prompt
    assert watcher.events[0]["properties"]["info"]["role"] == "user"
    assert kinds.index("permission.asked") < kinds.index("permission.replied")
    asked = watcher.events[kinds.index("permission.asked")]["properties"]
    assert asked["sessionID"] == session.id and asked["permission"] == "read"
    tool_states = [
        event["properties"]["part"]["state"]["status"]
        for event in watcher.events
        if event["type"] == "message.part.updated" and event["properties"]["part"]["type"] == "tool"
    ]
    assert tool_states[0] in ("pending", "running") and tool_states[-1] == "completed"
    assert kinds.index("permission.replied") < max(i for i, k in enumerate(kinds) if k == "message.updated")
    assert kinds[-1] == "session.idle" and "session.error" not in kinds
    texts = [
        event["properties"]["part"]["text"]
        for event in watcher.events
        if event["type"] == "message.part.updated" and event["properties"]["part"]["type"] == "text"
    ]
    assert texts[0] == "read it" and texts[-1] == "One line."


def test_a_failed_run_ends_with_session_error_then_idle(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    configure(project_dir, local_config(scripted_model.url))
    watcher = Watcher()
    project = make_project(plugins=[("watcher", watcher)])
    scripted_model.script([{"status": 500, "body": {"error": {"message": "down"}}}])

    async def main() -> None:
        async with project, project.session() as session:
            await session.run("hi")

    try:
        run(main())
    except Exception as error:
        assert "500" in str(error)
    kinds = [event["type"] for event in watcher.events]
    assert kinds[-2:] == ["session.error", "session.idle"]
    assert "500 Internal Server Error" in watcher.events[-2]["properties"]["error"]


def test_the_plugin_kit_shows_the_request_after_the_chat_hooks(pytester: Any) -> None:
    pytester.makeconftest(
        """
        import pytest
        from opencode_cli import hookimpl

        class Plugin:
            @hookimpl
            def chat_system_transform(self, system):
                system.append("Be brief.")

            @hookimpl
            def chat_params(self, params):
                params.temperature = 0.1

            @hookimpl
            def chat_headers(self, headers):
                headers["X-Team"] = "tools"

        @pytest.fixture
        def opencode_plugins():
            return [Plugin()]
        """
    )
    pytester.makepyfile(
        """
        def test_request(chat_request):
            request = chat_request("hello")
            assert request.system[-1] == "Be brief."
            assert request.messages[-1].content == "hello"
            assert request.params.temperature == 0.1
            assert request.headers == {"X-Team": "tools"}
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0")
    result.assert_outcomes(passed=1)
