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


def first_request(
    make_project: Callable[..., Project], project_dir: Path, scripted: ScriptedModel, plugin: object
) -> tuple[dict[str, Any], Project, Any]:
    """Run "hello" with ``plugin`` registered; the first request the server got, the project, the session."""
    configure(project_dir, local_config(scripted.url))
    project = make_project(plugins=[("chat", plugin)])
    scripted.script([{"text": "Bonjour."}])

    async def main() -> Any:
        async with project, project.session(remember=True) as session:
            assert (await session.run("hello")).text == "Bonjour."
            return session

    session = run(main())
    return scripted.requests()[0], project, session


def users(request: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "user"]


def test_hook_chat_message(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    class Plugin:
        @hookimpl
        def chat_message(self, message: Any, parts: list[Any]) -> None:
            assert message.role == "user"
            parts[0].text = parts[0].text.upper()
            parts.append(TextPart("(sent from a test)", synthetic=True))

    request, project, session = first_request(make_project, project_dir, scripted_model, Plugin())
    assert users(request) == ["HELLO\n\n(sent from a test)"]
    stored = project.resume(session.id).messages[0]
    assert stored.text == "HELLO(sent from a test)"  # the hook's parts are what the transcript keeps


def test_hook_chat_params(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    class Plugin:
        @hookimpl
        async def chat_params(self, provider: str, params: Any) -> None:
            params.temperature, params.top_k = 0.25, 7
            params.max_output_tokens = 321
            params.options["seed"] = 42 if provider == "local" else 0

    request, _, _ = first_request(make_project, project_dir, scripted_model, Plugin())
    body = request["body"]
    assert (body["temperature"], body["top_k"], body["max_tokens"], body["seed"]) == (0.25, 7, 321, 42)


def test_hook_chat_headers(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    class Plugin:
        @hookimpl
        def chat_headers(self, headers: dict[str, str]) -> None:
            headers["X-From-Plugin"] = "yes"

    request, _, _ = first_request(make_project, project_dir, scripted_model, Plugin())
    assert request["headers"]["x-from-plugin"] == "yes"


def test_hook_chat_system_transform(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    class Plugin:
        @hookimpl
        def chat_system_transform(self, system: list[str]) -> None:
            assert system[1].startswith("<env>")
            system.append("Always answer in French.")

    request, _, _ = first_request(make_project, project_dir, scripted_model, Plugin())
    system = [m["content"] for m in request["body"]["messages"] if m["role"] == "system"]
    assert len(system) == 3 and system[-1] == "Always answer in French."


def test_hook_chat_messages_transform(
    make_project: Callable[..., Project], project_dir: Path, scripted_model: ScriptedModel
) -> None:
    class Plugin:
        @hookimpl
        def chat_messages_transform(self, messages: list[Any]) -> None:
            messages.insert(0, Message("user", "context from a plugin"))

    request, project, session = first_request(make_project, project_dir, scripted_model, Plugin())
    assert users(request) == ["context from a plugin", "hello"]
    assert [m.text for m in project.resume(session.id).messages][:1] == ["hello"]  # the transcript stays


class Watcher:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @hookimpl
    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def test_hook_event(
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
