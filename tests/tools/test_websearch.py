"""The built-in ``websearch`` tool (builtin-tools spec §11; test list "websearch.test.ts" in §17).

The Exa and Parallel services are played by real HTTP servers on 127.0.0.1, reached through
``OPENCODE_EXA_BASE_URL`` / ``OPENCODE_PARALLEL_BASE_URL``.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from _harness import Harness
from _local_http import Handler, LocalServer, closed_port, reply

from opencode_cli import Project, __version__
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import DeniedError, InvalidArgumentsError, ToolError
from opencode_cli.registry import ModelRef
from opencode_cli.session import Decision
from opencode_cli.tools import _websearch_prompt
from opencode_cli.tools import websearch as websearch_module
from opencode_cli.tools.websearch import (
    NO_RESULTS,
    fnv1a,
    model_name,
    parse_response,
    provider_label,
    select_provider,
)

# Session ids whose FNV-1a hash is even (exa) and odd (parallel).
EXA_SESSION = "ses_a"
PARALLEL_SESSION = "ses_b"


def rpc(text: str | None = "search results", *, extra: list[dict[str, Any]] | None = None) -> str:
    content = [*(extra or [])]
    if text is not None:
        content.append({"type": "text", "text": text})
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": content}})


# -- helpers -------------------------------------------------------------------------------------------


class SearchHarness(Harness):
    """The shared harness for websearch: services on ``server``, a ``session`` per run (Exa's by default)."""

    def __init__(self, project: Project, server: LocalServer) -> None:
        urls = {
            "OPENCODE_EXA_BASE_URL": server.url("/exa"),
            "OPENCODE_PARALLEL_BASE_URL": server.url("/parallel/"),
        }
        super().__init__(project, "websearch", env=urls)
        self.server = server
        self.progress = self.updates

    def run(self, args: dict[str, Any], *, session: str = EXA_SESSION, **changes: Any) -> Any:
        return super().run(args, session_id=session, **changes)


@pytest.fixture
def harness(project: Project, server: LocalServer) -> SearchHarness:
    return SearchHarness(project, server)


def answer(body: str, status: int = 200, content_type: str = "application/json") -> Any:
    def handle(handler: Handler) -> None:
        reply(handler, status, body, {"Content-Type": content_type})

    return handle


def sent(server: LocalServer) -> dict[str, Any]:
    return json.loads(server.requests[-1].body)


# -- websearch.test.ts: choosing the service ----------------------------------------------------------


def test_session_hash_picks_both_services() -> None:
    assert fnv1a(EXA_SESSION) % 2 == 0
    assert fnv1a(PARALLEL_SESSION) % 2 == 1
    assert select_provider(EXA_SESSION, {}) == "exa"
    assert select_provider(PARALLEL_SESSION, {}) == "parallel"


def test_provider_is_stable_per_session() -> None:
    ids = [f"ses_{n:04d}" for n in range(200)]
    first = [select_provider(i, {}) for i in ids]
    assert first == [select_provider(i, {}) for i in ids]
    assert 60 < first.count("exa") < 140


def test_fnv1a_vectors() -> None:
    assert fnv1a("") == 0x811C9DC5
    assert fnv1a("a") == 0xE40C292C
    assert fnv1a("foobar") == 0xBF9CF968


def test_fnv1a_hashes_utf16_code_units() -> None:
    def reference(units: list[int]) -> int:
        value = 0x811C9DC5
        for unit in units:
            value = ((value ^ unit) * 0x01000193) % 2**32
        return value

    assert fnv1a("é") == reference([0xE9])  # one code unit, not the two UTF-8 bytes
    assert fnv1a("😀x") == reference([0xD83D, 0xDE00, ord("x")])


@pytest.mark.parametrize("session", [EXA_SESSION, PARALLEL_SESSION])
def test_environment_override_wins(session: str) -> None:
    assert select_provider(session, {"OPENCODE_WEBSEARCH_PROVIDER": "parallel"}) == "parallel"
    assert select_provider(session, {"OPENCODE_WEBSEARCH_PROVIDER": "exa"}) == "exa"
    flags = {"OPENCODE_ENABLE_PARALLEL": "true", "OPENCODE_ENABLE_EXA": "true"}
    assert select_provider(session, {**flags, "OPENCODE_WEBSEARCH_PROVIDER": "exa"}) == "exa"


def test_unknown_override_is_ignored() -> None:
    assert select_provider(PARALLEL_SESSION, {"OPENCODE_WEBSEARCH_PROVIDER": "bing"}) == "parallel"


@pytest.mark.parametrize(
    "name", ["OPENCODE_ENABLE_EXA", "OPENCODE_EXPERIMENTAL_EXA", "OPENCODE_EXPERIMENTAL"]
)
def test_exa_flag_picks_exa(name: str) -> None:
    assert select_provider(PARALLEL_SESSION, {name: "true"}) == "exa"


@pytest.mark.parametrize("name", ["OPENCODE_ENABLE_PARALLEL", "OPENCODE_EXPERIMENTAL_PARALLEL"])
def test_parallel_flag_picks_parallel(name: str) -> None:
    assert select_provider(EXA_SESSION, {name: "1"}) == "parallel"
    assert select_provider(EXA_SESSION, {name: "1", "OPENCODE_ENABLE_EXA": "1"}) == "parallel"


def test_labels() -> None:
    assert provider_label("parallel") == "Parallel Web Search"
    assert provider_label("exa") == "Exa Web Search"
    assert provider_label("other") == "Web Search"
    assert provider_label(None) == "Web Search"


# -- websearch.test.ts: when it is offered --------------------------------------------------------------


def offered(project: Project, model: str) -> bool:
    return "websearch" in [d.id for d in project.tools(ModelRef.parse(model))]


@pytest.mark.parametrize("model", ["opencode/big-pickle", "opencode-go/kimi-k2"])
def test_offered_for_the_opencode_providers(project: Project, model: str) -> None:
    assert offered(project, model)


def test_not_offered_for_other_providers(project: Project) -> None:
    assert not offered(project, "openai/gpt-5")
    assert not offered(project, "anthropic/claude-sonnet-4-5")


@pytest.mark.parametrize(
    "flag",
    [
        "OPENCODE_ENABLE_EXA",
        "OPENCODE_ENABLE_PARALLEL",
        "OPENCODE_EXPERIMENTAL_EXA",
        "OPENCODE_EXPERIMENTAL_PARALLEL",
    ],
)
def test_offered_to_any_provider_under_a_flag(make_project: Any, flag: str) -> None:
    assert offered(make_project(extra_env={flag: "true"}), "openai/gpt-5")


def test_offered_without_a_model(project: Project) -> None:
    assert "websearch" in [d.id for d in project.tools()]


# -- websearch.test.ts: the model name ------------------------------------------------------------------


def test_model_name_prefers_the_api_id() -> None:
    extra = {"model": {"id": "claude-opus-4-7", "api": {"id": "claude-opus-4.7"}}}
    assert model_name(extra) == "claude-opus-4.7"
    assert model_name({"model": {"id": "claude-opus-4-7"}}) == "claude-opus-4-7"
    assert model_name({"model": ModelRef("anthropic", "claude-sonnet-4-5")}) == "claude-sonnet-4-5"
    assert model_name({"model": {"id": "m" * 150}}) == "m" * 100
    assert model_name({"model": None}) is None
    assert model_name({}) is None
    assert model_name(None) is None


# -- websearch.test.ts: parsing the answer --------------------------------------------------------------


def test_parse_plain_json_rpc() -> None:
    assert parse_response(rpc()) == "search results"
    assert parse_response("\n  " + rpc() + "\n") == "search results"


def test_parse_server_sent_events() -> None:
    assert parse_response(f"event: message\ndata: {rpc()}\n\n") == "search results"


def test_parse_ignores_the_done_frame() -> None:
    body = f"event: message\ndata: [DONE]\n\nevent: message\ndata: {rpc()}\n\ndata: [DONE]\n"
    assert parse_response(body) == "search results"


def test_parse_skips_frames_without_text() -> None:
    progress = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})
    body = f"data: {progress}\ndata: {rpc(None)}\ndata:{rpc('second')}\n"
    assert parse_response(body) == "second"


def test_parse_takes_the_first_item_with_text() -> None:
    body = rpc("wanted", extra=[{"type": "text", "text": ""}, {"type": "image", "data": "x"}])
    assert parse_response(body) == "wanted"


def test_parse_nothing() -> None:
    assert parse_response("") is None
    assert parse_response(rpc(None)) is None
    assert parse_response("data: not json\n") is None


def test_parse_json_rpc_error() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "quota exceeded"}})
    with pytest.raises(ToolError) as caught:
        parse_response(f"data: {body}\n")
    assert str(caught.value) == "Web search failed: quota exceeded"


# -- Exa ------------------------------------------------------------------------------------------------


def test_exa_request_and_output(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc("Exa says hello")))
    result = harness.run({"query": "python release"})
    assert result.output == "Exa says hello"
    assert result.title == "Exa Web Search: python release"
    assert result.metadata == {"provider": "exa", "truncated": False}
    assert harness.progress[0] == ('Exa Web Search "python release"', {"provider": "exa"})
    seen = server.requests[-1]
    assert seen.method == "POST"
    assert seen.path == "/exa/mcp"
    assert seen.headers["accept"] == "application/json, text/event-stream"
    assert seen.headers["content-type"] == "application/json"
    assert "authorization" not in seen.headers
    assert json.loads(seen.body) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "web_search_exa",
            "arguments": {
                "query": "python release",
                "type": "auto",
                "numResults": 8,
                "livecrawl": "fallback",
            },
        },
    }


def test_exa_arguments_given(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc()))
    harness.run(
        {
            "query": "q",
            "numResults": 3,
            "livecrawl": "preferred",
            "type": "deep",
            "contextMaxCharacters": 5000,
        }
    )
    assert sent(server)["params"]["arguments"] == {
        "query": "q",
        "type": "deep",
        "numResults": 3,
        "livecrawl": "preferred",
        "contextMaxCharacters": 5000,
    }
    harness.run({"query": "q", "numResults": 0, "contextMaxCharacters": 2.5})
    arguments = sent(server)["params"]["arguments"]
    assert arguments["numResults"] == 8  # 0 counts as absent, as upstream's `||`
    assert arguments["contextMaxCharacters"] == 2.5


def test_exa_key_goes_in_the_query_string(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc()))
    harness.run({"query": "q"}, env=harness.env(EXA_API_KEY="k3y/with space&more"))
    seen = server.requests[-1]
    assert urlsplit(seen.path).query == "exaApiKey=k3y%2Fwith%20space%26more"
    assert parse_qs(urlsplit(seen.path).query) == {"exaApiKey": ["k3y/with space&more"]}


def test_exa_server_sent_events(harness: Harness, server: LocalServer) -> None:
    body = f"event: message\ndata: {rpc('streamed results')}\n\ndata: [DONE]\n\n"
    server.route("/exa/mcp", answer(body, content_type="text/event-stream"))
    assert harness.run({"query": "q"}).output == "streamed results"


def test_no_results(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc(None)))
    result = harness.run({"query": "nothing at all"})
    assert result.output == NO_RESULTS == "No search results found. Please try a different query."
    assert result.title == "Exa Web Search: nothing at all"


def test_service_error_message(harness: Harness, server: LocalServer) -> None:
    error = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad query"}})
    server.route("/exa/mcp", answer(error))
    assert harness.error({"query": "q"}) == "Web search failed: bad query"


# -- Parallel -------------------------------------------------------------------------------------------


def test_parallel_request_and_output(harness: Harness, server: LocalServer) -> None:
    server.route(
        "/parallel/mcp", answer(f"data: {rpc('Parallel results')}\n\n", content_type="text/event-stream")
    )
    extra = {"model": {"id": "claude-opus-4-7", "api": {"id": "claude-opus-4.7"}}}
    result = harness.run({"query": "rust async", "numResults": 3}, session=PARALLEL_SESSION, extra=extra)
    assert result.output == "Parallel results"
    assert result.title == "Parallel Web Search: rust async"
    assert result.metadata == {"provider": "parallel", "truncated": False}
    assert harness.progress[0] == ('Parallel Web Search "rust async"', {"provider": "parallel"})
    seen = server.requests[-1]
    assert seen.path == "/parallel/mcp"
    assert seen.headers["user-agent"] == f"opencode/{__version__}"
    assert seen.headers["accept"] == "application/json, text/event-stream"
    assert "authorization" not in seen.headers
    assert json.loads(seen.body) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "web_search",
            "arguments": {
                "objective": "rust async",
                "search_queries": ["rust async"],
                "session_id": PARALLEL_SESSION,
                "model_name": "claude-opus-4.7",
            },
        },
    }


def test_parallel_key_is_a_bearer_token(harness: Harness, server: LocalServer) -> None:
    server.route("/parallel/mcp", answer(rpc()))
    harness.run({"query": "q"}, session=PARALLEL_SESSION, env=harness.env(PARALLEL_API_KEY="pk-123"))
    assert server.requests[-1].headers["authorization"] == "Bearer pk-123"
    assert "model_name" not in sent(server)["params"]["arguments"]


def test_override_reaches_the_other_service(harness: Harness, server: LocalServer) -> None:
    server.route("/parallel/mcp", answer(rpc("from parallel")))
    env = harness.env(OPENCODE_WEBSEARCH_PROVIDER="parallel")
    assert harness.run({"query": "q"}, session=EXA_SESSION, env=env).output == "from parallel"


# -- failures -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("session", "path", "key"),
    [(EXA_SESSION, "/exa/mcp", "EXA_API_KEY"), (PARALLEL_SESSION, "/parallel/mcp", "PARALLEL_API_KEY")],
)
@pytest.mark.parametrize("status", [401, 403])
def test_missing_api_key(
    harness: Harness, server: LocalServer, session: str, path: str, key: str, status: int
) -> None:
    server.route(path, answer('{"error": "API key required"}', status))
    message = harness.error({"query": "q"}, session=session)
    label = provider_label(select_provider(session, {}))
    assert message == (
        f"{label} refused the request (HTTP {status}) and no API key is set: "
        f"set {key} in the environment and try again."
    )


@pytest.mark.parametrize(
    ("session", "path", "key"),
    [(EXA_SESSION, "/exa/mcp", "EXA_API_KEY"), (PARALLEL_SESSION, "/parallel/mcp", "PARALLEL_API_KEY")],
)
def test_rejected_api_key_is_not_shown(
    harness: Harness, server: LocalServer, session: str, path: str, key: str
) -> None:
    server.route(path, answer("invalid key", 401))
    message = harness.error({"query": "q"}, session=session, env=harness.env(**{key: "secret-value"}))
    assert message.endswith(f"rejected the API key in {key} (HTTP 401).")
    assert "secret-value" not in message


def test_server_error(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer("upstream\n  exploded", 502, "text/plain"))
    message = harness.error({"query": "q"}, env=harness.env(EXA_API_KEY="secret-value"))
    assert message == f"Exa Web Search failed: HTTP 502 from {server.url('/exa/mcp')}: upstream exploded"


def test_unreachable_service(harness: Harness) -> None:
    base = f"http://127.0.0.1:{closed_port()}"
    env = harness.env(OPENCODE_EXA_BASE_URL=base, EXA_API_KEY="secret-value")
    message = harness.error({"query": "q"}, env=env)
    assert message.startswith(f"Exa Web Search could not reach {base}/mcp: ")
    assert message.endswith("Check the network connection (or OPENCODE_EXA_BASE_URL).")
    assert "secret-value" not in message


def test_slow_service_times_out(
    harness: Harness, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(websearch_module, "TIMEOUT", 0.4)

    def slow(handler: Handler) -> None:
        server.release.wait(600)  # until the server stops: never, within the test
        reply(handler, 200, rpc())

    server.route("/exa/mcp", slow)
    server.route("/parallel/mcp", slow)
    # the server never answers while the test runs: these messages come from the 0.4 s timeout
    assert harness.error({"query": "q"}) == "web_search_exa request timed out"
    assert harness.error({"query": "q"}, session=PARALLEL_SESSION) == "web_search request timed out"


def test_default_endpoints() -> None:
    assert websearch_module.endpoint(websearch_module.EXA, {}) == "https://mcp.exa.ai/mcp"
    assert websearch_module.endpoint(websearch_module.PARALLEL, {}) == "https://search.parallel.ai/mcp"
    env = {"OPENCODE_EXA_BASE_URL": "http://127.0.0.1:9/base/"}
    assert websearch_module.endpoint(websearch_module.EXA, env) == "http://127.0.0.1:9/base/mcp"
    assert websearch_module.TIMEOUT == 25


# -- permission -----------------------------------------------------------------------------------------


def test_permission_is_asked_with_the_query(harness: Harness, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc()))
    harness.run({"query": "first"})
    harness.run(
        {
            "query": "second",
            "numResults": 5,
            "livecrawl": "preferred",
            "type": "fast",
            "contextMaxCharacters": 900,
        }
    )
    first, second = harness.requests
    assert (first.permission, first.patterns, first.always) == ("websearch", ["first"], ["*"])
    assert first.metadata == {"query": "first", "provider": "exa"}
    assert second.metadata == {
        "query": "second",
        "numResults": 5,
        "livecrawl": "preferred",
        "type": "fast",
        "contextMaxCharacters": 900,
        "provider": "exa",
    }


def test_denied_query_is_never_sent(make_project: Any, project_dir: Path, server: LocalServer) -> None:
    server.route("/exa/mcp", answer(rpc()))
    (project_dir / "opencode.toml").write_text('[permission.websearch]\n"secret*" = "deny"\n')
    project = make_project(
        extra_env={"OPENCODE_EXA_BASE_URL": server.url("/exa"), "OPENCODE_WEBSEARCH_PROVIDER": "exa"}
    )

    async def prompt(request: PermissionRequest) -> Decision:
        return Decision("once")

    with pytest.raises(DeniedError):
        project.run_tool("websearch", {"query": "secret plans"}, prompt=prompt)
    assert server.requests == []
    assert project.run_tool("websearch", {"query": "public"}, prompt=prompt).output == "search results"


# -- description and parameters ------------------------------------------------------------------------


def test_description_names_the_current_year(project: Project) -> None:
    description = project.registry.get("websearch").tool.description
    assert "{{year}}" not in description
    assert str(datetime.date.today().year) in description
    assert "{{year}}" not in _websearch_prompt.describe(datetime.date(2031, 5, 1))
    assert "2031" in _websearch_prompt.describe(datetime.date(2031, 5, 1))
    assert project.registry.get("websearch").tool.load().description == description


def test_schema(project: Project) -> None:
    schema = project.registry.get("websearch").tool.load().schema()
    properties = schema["properties"]
    assert schema["required"] == ["query"]
    assert list(properties) == ["query", "numResults", "livecrawl", "type", "contextMaxCharacters"]
    assert properties["numResults"]["type"] == "number"
    assert properties["contextMaxCharacters"]["type"] == "number"
    assert properties["livecrawl"]["enum"] == ["fallback", "preferred"]
    assert properties["type"]["enum"] == ["auto", "fast", "deep"]
    assert not any("anyOf" in p or "default" in p for p in properties.values())


@pytest.mark.parametrize(
    "args", [{}, {"query": 1}, {"query": "q", "numResults": "5"}, {"query": "q", "type": "slow"}]
)
def test_invalid_arguments(project: Project, args: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        project.registry.get("websearch").tool.load().validate(args)
    assert "The websearch tool was called with invalid arguments" in str(caught.value)
