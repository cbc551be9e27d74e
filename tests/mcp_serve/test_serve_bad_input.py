"""Bad input meets one rule on both transports (issue 44, edge 8): a JSON-RPC batch gets a ``-32600`` for each
request in it, a truncated request its own id with ``-32700``, and text that is not UTF-8 is refused (never
read with replacement characters and run), over stdio (a reply line each) and over HTTP (a 400 whose body
holds the same replies) alike; ``check_message``, the rule itself, is checked with hypothesis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _serve import HttpServer
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serve_stdio import RawStdio

from opencode_cli.mcp.serve.limits import check_message, error_reply, replies

BATCH = json.dumps(
    [
        {"jsonrpc": "2.0", "id": 40, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "forty-one", "method": "tools/call", "params": {"name": "read"}},
    ]
).encode()
TRUNCATED = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "re'
NOT_UTF8 = (
    b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", '
    b'"params": {"name": "write", "arguments": {"filePath": "made.txt", "content": "caf\xe9"}}}'
)
#: What each gets: (id, code) per reply.
EXPECTED = {
    "batch": (BATCH, [(40, -32600), ("forty-one", -32600)]),
    "truncated": (TRUNCATED, [(3, -32700)]),
    "not utf-8": (NOT_UTF8, [(5, -32700)]),
}


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "notes.txt").write_text("alpha\n")
    return project_dir


def test_over_stdio(project: Path, env: dict[str, str]) -> None:
    raw = RawStdio(project, env)
    try:
        raw.initialize()
        for name, (data, expected) in EXPECTED.items():
            raw.send(data)
            got = [raw.receive() for _ in expected]
            assert [(reply["id"], reply["error"]["code"]) for reply in got] == expected, name
        assert "result" in raw.request(50, "tools/list")  # and it serves on
    finally:
        raw.stop()
    assert not (project / "made.txt").exists()


def test_over_http_the_same(project: Path, env: dict[str, str]) -> None:
    import httpx

    server = HttpServer(project, env)
    try:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        for name, (data, expected) in EXPECTED.items():
            answer = httpx.post(server.url, content=data, headers=headers, timeout=60)
            assert answer.status_code == 400, (name, answer.text)
            body = answer.json()
            got = body if isinstance(body, list) else [body]
            assert [(reply["id"], reply["error"]["code"]) for reply in got] == expected, name
    finally:
        server.stop()
    assert not (project / "made.txt").exists()


# -- the rule ---------------------------------------------------------------------------------------------


def _request(ident: int, text: str) -> bytes:
    params = {"name": "write", "arguments": {"filePath": "x.txt", "content": text}}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}).encode()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**9), st.text(max_size=40), st.data())
def test_a_cut_request_is_refused_with_its_id(ident: int, text: str, data: Any) -> None:
    whole = _request(ident, text)
    start = whole.index(b'"id"') + len(f'"id": {ident}')
    cut = data.draw(st.integers(start, len(whole) - 1))
    problem = check_message(whole[:cut])
    assert problem is not None and (problem.id, problem.code) == (ident, -32700)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**9), st.text(max_size=40), st.binary(min_size=1, max_size=4), st.data())
def test_bytes_that_are_not_utf8_are_refused_with_the_id(
    ident: int, text: str, junk: bytes, data: Any
) -> None:
    whole = _request(ident, text)
    at = whole.index(b'"content": "') + len(b'"content": "')
    at = data.draw(st.integers(at, whole.index(b'"', at)))
    message = whole[:at] + junk + whole[at:]
    try:
        message.decode("utf-8")
    except UnicodeDecodeError:
        problem = check_message(message)
        assert problem is not None and (problem.id, problem.code) == (ident, -32700)
        assert json.loads(error_reply(problem))["id"] == ident


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 99), st.text(max_size=5), st.none()), max_size=5))
def test_a_batch_gets_one_refusal_per_request(idents: list[Any]) -> None:
    items = [
        {"jsonrpc": "2.0", "method": "tools/list", **({} if ident is None else {"id": ident})}
        for ident in idents
    ]
    problem = check_message(json.dumps(items).encode())
    assert problem is not None
    answered = [reply.id for reply in replies(problem)]
    wanted = [ident for ident in idents if ident is not None]
    assert answered == (wanted or [None])
    assert all(reply.code == -32600 for reply in replies(problem))
