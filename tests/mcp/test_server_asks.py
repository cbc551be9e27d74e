"""What a configured MCP server asks mid-call (issue 34, items 8 and 9), answered in the library: an SDK
server (``servers/asking_server.py``, stdio) elicits a form or a URL and asks for sampling; the session
answers through its ``elicit`` callback, its question asker, or declines; sampling uses the session's
model (the scripted OpenAI-compatible server of ``tests/models``) after the ``mcp_sampling`` ask."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import SERVERS
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))

from _scripted import ScriptedModel, local_config
from _scripted import call as call_of  # noqa: F401  (a scripted tool call, for test_server_asks_cli)

from opencode_cli.mcp.asks import ElicitAnswer, Elicitation, ask_with_questions
from opencode_cli.session import Decision, ToolCall

WAIT = 60.0
ASKING = [sys.executable, str(SERVERS / "asking_server.py")]


def configure(project_dir: Path, **extra: Any) -> None:
    config = {**extra, "mcp": {"asking": {"type": "local", "command": ASKING}}}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps(config))


async def allow(request: Any) -> Decision:
    return Decision("once")


def call(project: Any, tool: str, args: dict[str, Any] | None = None, **options: Any) -> Any:
    options.setdefault("prompt", allow)

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session(**options) as session:
                session.resolve()
                return await session.dispatch(ToolCall(f"asking_{tool}", json.dumps(args or {})))

    return asyncio.run(asyncio.wait_for(main(), WAIT))


def test_the_elicit_callback_answers_a_form(make_project: Any, project_dir: Path) -> None:
    configure(project_dir)
    seen: list[Elicitation] = []

    async def elicit(request: Elicitation) -> ElicitAnswer:
        seen.append(request)
        return ElicitAnswer("accept", {"name": "Ann", "guests": 4, "meal": "fish", "terrace": True})

    part = call(make_project(), "book", extra={"elicit": elicit})

    assert part.status == "completed", part.error
    assert json.loads(part.output.removeprefix("booking: accept ")) == {
        "name": "Ann",
        "guests": 4,
        "meal": "fish",
        "terrace": True,
        "note": None,
    }
    [request] = seen
    assert (request.server, request.message, request.mode) == ("asking", "Book a table for tonight?", "form")
    assert request.schema["required"] == ["name"]
    assert request.schema["properties"]["guests"]["default"] == 2


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_the_elicit_callback_may_decline_or_cancel(make_project: Any, project_dir: Path, action: str) -> None:
    configure(project_dir)

    async def elicit(request: Elicitation) -> ElicitAnswer:
        return ElicitAnswer(action)  # type: ignore[arg-type]

    part = call(make_project(), "book", extra={"elicit": elicit})
    assert (part.status, part.output) == ("completed", f"booking: {action}")


def test_nobody_to_ask_declines(make_project: Any, project_dir: Path) -> None:
    configure(project_dir)
    part = call(make_project(), "book")
    assert (part.status, part.output) == ("completed", "booking: decline")
    part = call(make_project(), "visit")
    assert (part.status, part.output) == ("completed", "visit: decline")


def test_the_question_asker_answers_with_defaults_and_choices(make_project: Any, project_dir: Path) -> None:
    configure(project_dir)
    asked: list[dict[str, Any]] = []
    replies = iter([["Answer"], ["Bob"], ["2"], ["fish"], ["Yes"], ["(leave empty)"]])

    async def question(questions: list[dict[str, Any]]) -> list[list[str]]:
        asked.extend(questions)
        return [next(replies)]

    part = call(make_project(), "book", extra={"question": question})

    assert part.status == "completed", part.error
    assert json.loads(part.output.removeprefix("booking: accept ")) == {
        "name": "Bob",
        "guests": 2,
        "meal": "fish",
        "terrace": True,
        "note": None,
    }
    action, name, guests, meal, terrace, note = asked
    assert [o["label"] for o in action["options"]] == ["Answer", "Decline", "Cancel"]
    assert action["question"] == "Book a table for tonight?" and action["header"] == "MCP server asking"
    assert name["question"] == "Name: who the table is for" and name["options"] == []  # required, free text
    assert guests["options"][0] == {"label": "2", "description": "default"} and guests["custom"]
    assert [o["label"] for o in meal["options"]] == ["fish", "pasta", "(leave empty)"] and not meal["custom"]
    assert meal["options"][1]["description"] == "default"
    assert [o["label"] for o in terrace["options"]] == ["Yes", "No", "(leave empty)"]
    assert terrace["options"][1]["description"] == "default"
    assert note["header"] == "MCP server asking (5/5)"


def test_a_url_is_opened_only_after_the_user_agrees() -> None:
    opened: list[str] = []
    request = Elicitation("shop", "Confirm on the page", "url", url="https://shop.example/confirm")

    def replying(*labels: str) -> Any:
        async def ask(questions: list[dict[str, Any]]) -> list[list[str]]:
            assert "https://shop.example/confirm" in questions[0]["question"]
            return [list(labels)]

        return ask

    declined = asyncio.run(ask_with_questions(replying("Decline"), request, open_url=opened.append))
    assert declined == ElicitAnswer("decline") and opened == []
    agreed = asyncio.run(ask_with_questions(replying("Open the URL"), request, open_url=opened.append))
    assert agreed == ElicitAnswer("accept") and opened == ["https://shop.example/confirm"]


# -- -32042: a call refused until the user has opened a page ---------------------------------------------

AUTHORIZE_URL = "https://auth.example/authorize?s=9"
REFUSED = "MCP error -32042: This request requires browser-based authorization."


@pytest.mark.parametrize(
    ("action", "outcome"),
    [
        ("accept", "the user agreed to open it; call the tool again once they have finished there"),
        ("decline", "the user declined to open it"),
    ],
)
def test_a_url_elicitation_required_error_reaches_the_elicit_callback_and_the_model(
    make_project: Any, project_dir: Path, action: str, outcome: str
) -> None:
    configure(project_dir)
    seen: list[Elicitation] = []

    async def elicit(request: Elicitation) -> ElicitAnswer:
        seen.append(request)
        return ElicitAnswer(action)  # type: ignore[arg-type]

    part = call(make_project(), "authorize", extra={"elicit": elicit})

    assert seen == [
        Elicitation(
            "asking", "Authorize access to your calendar", "url", url=AUTHORIZE_URL, elicitation_id="au-9"
        )
    ]
    assert part.status == "error"
    assert part.error == (
        f"{REFUSED}\nThe server sends the user to {AUTHORIZE_URL} (Authorize access to your calendar): "
        f"{outcome}."
    )


def test_a_url_elicitation_required_error_reaches_the_question_prompt(
    make_project: Any, project_dir: Path
) -> None:
    configure(project_dir)
    asked: list[dict[str, Any]] = []

    async def question(questions: list[dict[str, Any]]) -> list[list[str]]:
        asked.extend(questions)
        return [["Cancel"]]

    part = call(make_project(), "authorize", extra={"question": question})
    [action] = asked
    assert action["question"] == f"Authorize access to your calendar\n{AUTHORIZE_URL}"
    assert part.error.endswith(
        f"{AUTHORIZE_URL} (Authorize access to your calendar): the user dismissed it without answering."
    )
    assert part.error.count("MCP error -32042") == 1


def test_sampling_is_answered_by_the_session_model_after_the_ask(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    model = ScriptedModel(tmp_path / "scripted")
    try:
        model.script([{"text": "Old pond, a frog jumps"}])
        configure(project_dir, **local_config(model.url))
        asked: list[Any] = []

        async def prompt(request: Any) -> Decision:
            asked.append(request)
            return Decision("once")

        part = call(make_project(), "haiku", {"topic": "frogs"}, prompt=prompt, model="local/scripted-model")

        assert part.status == "completed", part.error
        assert part.output == "haiku (local/scripted-model): Old pond, a frog jumps"
        sampling = [r for r in asked if r.permission == "mcp_sampling"]
        assert [(r.patterns, r.always) for r in sampling] == [(["asking"], ["asking"])]
        metadata = sampling[0].metadata
        assert metadata["maxTokens"] == 50 and metadata["systemPrompt"] == "You are a poet."
        assert metadata["messages"] == [{"role": "user", "text": "Write a haiku about frogs."}]
        [request] = model.requests()
        sent = request["body"]
        assert sent["messages"][0] == {"role": "system", "content": "You are a poet."}
        assert sent["messages"][1]["content"] == "Write a haiku about frogs."
        assert sent.get("max_tokens") == 50 or sent.get("max_completion_tokens") == 50
    finally:
        model.stop()


def test_sampling_refused_by_the_user_or_without_a_model(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    model = ScriptedModel(tmp_path / "scripted")
    try:
        configure(project_dir, **local_config(model.url))

        async def refuse_sampling(request: Any) -> Decision:
            return Decision("reject" if request.permission == "mcp_sampling" else "once")

        part = call(
            make_project(), "haiku", {"topic": "x"}, prompt=refuse_sampling, model="local/scripted-model"
        )
        assert part.status == "error" and "Sampling refused: the user did not allow it" in part.error
        assert model.requests() == []

        configure(project_dir)  # no model at all
        part = call(make_project(), "haiku", {"topic": "x"})
        assert part.status == "error"
        assert 'Sampling refused: the session calling "asking" has no model to answer with' in part.error
    finally:
        model.stop()


def test_a_sampling_rule_in_config_is_known(make_project: Any, project_dir: Path) -> None:
    configure(project_dir, permission={"mcp_sampling": {"asking": "deny"}})
    part = call(make_project(), "haiku", {"topic": "x"}, model="local/none")
    assert part.status == "error" and "Sampling refused" in part.error


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_field = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object"]) | _json,
        "enum": _json,
        "oneOf": _json,
        "default": _json,
        "items": _json,
        "title": _json,
        "description": _json,
    },
)


@settings(max_examples=150, deadline=None)
@given(
    properties=st.dictionaries(st.text(min_size=1, max_size=8), _field | _json, max_size=4),
    required=_json,
    replies=st.lists(st.none() | st.lists(st.text(max_size=6), max_size=3), max_size=12),
)
def test_any_schema_a_server_sends_gets_an_answer(properties: Any, required: Any, replies: list[Any]) -> None:
    """Whatever schema a server sends and whatever the user types, the prompt ends with an answer."""
    pending = iter([[["Answer"]], *[None if reply is None else [reply] for reply in replies]])

    async def ask(questions: list[dict[str, Any]]) -> Any:
        return next(pending, None)

    request = Elicitation("s", "m", schema={"type": "object", "properties": properties, "required": required})
    answer = asyncio.run(ask_with_questions(ask, request, note=lambda text: None))
    assert answer.action in ("accept", "cancel")
    if answer.action == "accept":
        assert set(answer.content or {}) <= {str(key) for key in properties}
