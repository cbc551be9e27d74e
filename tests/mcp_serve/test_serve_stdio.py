"""``opencode mcp serve`` over stdio, driven by the ``mcp`` SDK's client: what is listed, calls through
dispatch (validation, permissions, truncation), asks by elicitation, progress, cancellation, hot reload."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path
from typing import Any

import pytest
from _processes import wait_gone
from _serve import Notes, run, stdio_session, text_of
from mcp.types import ElicitResult, EmbeddedResource, ImageContent

HELLO = '''
from opencode_cli import Field, tool


@tool
def default(name: str = Field(description="Who to greet.")) -> str:
    """Say hello."""
    return f"hello {name}"
'''

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


@pytest.fixture
def project(project_dir: Path) -> Path:
    (project_dir / "notes.txt").write_text("alpha\nbeta needle\ngamma\n")
    (project_dir / "src").mkdir()
    (project_dir / "src" / "app.py").write_text("def main():\n    return 'needle'\n")
    return project_dir


def test_lists_what_the_agent_is_offered_with_wire_schemas(project: Path, env: dict[str, str]) -> None:
    async def main() -> list[Any]:
        async with stdio_session(project, env) as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run(main())}
    assert {"read", "grep", "glob", "edit", "write", "bash"} <= set(tools)
    assert "invalid" not in tools
    assert "question" not in tools  # nobody can answer a question through the server
    read = tools["read"]
    assert read.description and "filePath" in read.input_schema["properties"]
    assert read.input_schema["type"] == "object"
    assert list(tools) == sorted(tools)


def test_deny_flags_remove_tools_denied_wholly(project: Path, env: dict[str, str]) -> None:
    async def main() -> set[str]:
        async with stdio_session(project, env, "--deny", "bash", "--deny", "webfetch") as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    names = run(main())
    assert "bash" not in names and "webfetch" not in names and "read" in names


def test_calls_read_grep_edit_bash(project: Path, env: dict[str, str]) -> None:
    async def main() -> list[Any]:
        async with stdio_session(project, env) as session:
            return [
                await session.call_tool("read", {"filePath": "notes.txt"}),
                await session.call_tool("grep", {"pattern": "needle"}),
                await session.call_tool(
                    "edit", {"filePath": "notes.txt", "oldString": "gamma", "newString": "delta"}
                ),
                await session.call_tool("bash", {"command": "cat notes.txt", "description": "Show notes"}),
            ]

    read, grep, edit, bash = run(main())
    assert not read.is_error and "2: beta needle" in text_of(read)
    assert not grep.is_error and "notes.txt" in text_of(grep) and "app.py" in text_of(grep)
    assert not edit.is_error and (project / "notes.txt").read_text() == "alpha\nbeta needle\ndelta\n"
    assert not bash.is_error and "delta" in text_of(bash)


def test_invalid_and_unknown_calls_are_errors_with_the_model_facing_text(
    project: Path, env: dict[str, str]
) -> None:
    async def main() -> tuple[Any, Any]:
        async with stdio_session(project, env) as session:
            bad = await session.call_tool("read", {"filePath": 5})
            unknown = await session.call_tool("no_such_tool", {})
            return bad, unknown

    bad, unknown = run(main())
    assert bad.is_error
    assert text_of(bad).startswith("The read tool was called with invalid arguments:")
    assert "Please rewrite the input so it satisfies the expected schema." in text_of(bad)
    assert unknown.is_error and "no_such_tool" in text_of(unknown)
    listed = text_of(unknown).split("Available tools: ", 1)[1].rstrip(".").split(", ")
    assert "read" in listed and "invalid" not in listed  # tools/list never offers invalid


def test_a_denied_call_says_which_rule(project: Path, env: dict[str, str]) -> None:
    async def main() -> Any:
        async with stdio_session(project, env, "--deny", "read=notes.txt") as session:
            return await session.call_tool("read", {"filePath": "notes.txt"})

    result = run(main())
    assert result.is_error
    assert "The user has specified a rule which prevents you from using this specific tool call" in (
        text_of(result)
    )


def _answering(*answers: dict[str, Any] | str) -> tuple[list[str], Any]:
    """An elicitation callback that gives ``answers`` in turn (a str is a non-accept action)."""
    asked: list[str] = []
    queue = list(answers)

    async def answer(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        given = queue.pop(0)
        if isinstance(given, str):
            return ElicitResult(action=given)  # type: ignore[arg-type]
        return ElicitResult(action="accept", content=given)

    return asked, answer


@pytest.fixture
def asking(project: Path) -> Path:
    (project / "opencode.toml").write_text('[permission]\nbash = "ask"\n')
    return project


def test_asks_answered_once_always_and_reject(asking: Path, env: dict[str, str]) -> None:
    asked, answer = _answering(
        {"decision": "once"},
        {"decision": "reject", "feedback": "use read instead"},
        {"decision": "always"},
        "decline",
    )

    async def main() -> list[Any]:
        async with stdio_session(asking, env, elicitation_callback=answer) as session:
            results = []
            for command in ("echo one", "echo two", "echo three", "echo three"):
                results.append(await session.call_tool("bash", {"command": command, "description": "Echo"}))
            return results

    once, rejected, always, again = run(main())
    assert not once.is_error and "one" in text_of(once)
    assert rejected.is_error
    assert text_of(rejected) == (
        "The user rejected permission to use this specific tool call with the following feedback: "
        "use read instead"
    )
    assert not always.is_error and "three" in text_of(always)
    assert not again.is_error  # "always" approved it: no fourth question (a "decline" would reject)
    assert len(asked) == 3
    assert "bash on echo one" in asked[0]


def test_a_declined_ask_is_rejected(asking: Path, env: dict[str, str]) -> None:
    _, answer = _answering("cancel")

    async def main() -> Any:
        async with stdio_session(asking, env, elicitation_callback=answer) as session:
            return await session.call_tool("bash", {"command": "echo hi", "description": "Echo"})

    result = run(main())
    assert result.is_error
    assert text_of(result) == "The user rejected permission to use this specific tool call."


def test_without_elicitation_an_ask_is_rejected_naming_the_flag(asking: Path, env: dict[str, str]) -> None:
    async def main() -> tuple[Any, Any]:
        async with stdio_session(asking, env) as session:
            refused = await session.call_tool("bash", {"command": "echo hi", "description": "Echo"})
        async with stdio_session(asking, env, "--allow", "bash=echo *") as session:
            allowed = await session.call_tool("bash", {"command": "echo hi", "description": "Echo"})
        return refused, allowed

    refused, allowed = run(main())
    assert refused.is_error
    text = text_of(refused)
    assert text.startswith("The user rejected permission to use this specific tool call.")
    assert "--allow 'bash=echo hi'" in text and "--yes" in text
    assert not allowed.is_error and "hi" in text_of(allowed)


def test_yes_approves_every_ask(asking: Path, env: dict[str, str]) -> None:
    async def main() -> Any:
        async with stdio_session(asking, env, "--yes") as session:
            return await session.call_tool("bash", {"command": "echo yes", "description": "Echo"})

    assert not run(main()).is_error


def test_attachments_are_image_and_embedded_resource_content(project: Path, env: dict[str, str]) -> None:
    (project / "pixel.png").write_bytes(PNG)
    (project / "doc.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

    async def main() -> tuple[Any, Any]:
        async with stdio_session(project, env) as session:
            image = await session.call_tool("read", {"filePath": "pixel.png"})
            pdf = await session.call_tool("read", {"filePath": "doc.pdf"})
            return image, pdf

    image, pdf = run(main())
    images = [block for block in image.content if isinstance(block, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data) == PNG
    resources = [block for block in pdf.content if isinstance(block, EmbeddedResource)]
    assert len(resources) == 1 and resources[0].resource.mime_type == "application/pdf"
    assert base64.b64decode(resources[0].resource.blob).startswith(b"%PDF-1.4")


def test_bash_output_streams_as_progress(project: Path, env: dict[str, str]) -> None:
    messages: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async def main() -> Any:
        async with stdio_session(project, env) as session:
            command = "for i in 1 2 3; do echo line$i; sleep 0.3; done"
            return await session.call_tool(
                "bash", {"command": command, "description": "Count"}, progress_callback=progress
            )

    result = run(main())
    assert not result.is_error
    streamed = "".join(messages)
    assert "line1" in streamed and "line3" in streamed


def test_cancelling_a_long_bash_call_kills_its_process(project: Path, env: dict[str, str]) -> None:
    pid_file = project / "shell.pid"

    async def main() -> Any:
        async with stdio_session(project, env) as session:
            call = asyncio.ensure_future(
                session.call_tool("bash", {"command": "echo $$ > shell.pid; sleep 60", "description": "Wait"})
            )
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.05)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            pid = int(pid_file.read_text())
            assert await asyncio.to_thread(wait_gone, pid, 10.0), "the cancelled command still runs"
            # the server goes on serving
            return await session.call_tool("read", {"filePath": "notes.txt"})

    assert not run(main()).is_error


def test_a_tool_file_added_while_serving(project: Path, env: dict[str, str]) -> None:
    tool_dir = project / ".opencode" / "tool"
    tool_dir.mkdir(parents=True)
    notes = Notes()

    async def main() -> tuple[set[str], Any]:
        async with stdio_session(project, env, message_handler=notes.handler) as session:
            before = {tool.name for tool in (await session.list_tools()).tools}
            assert "hello" not in before
            # no pause: the server arms its watcher before it answers anything
            (tool_dir / "hello.py").write_text(HELLO)
            await asyncio.wait_for(notes.changed.wait(), 30)
            after = {tool.name for tool in (await session.list_tools()).tools}
            return after, await session.call_tool("hello", {"name": "mcp"})

    after, result = run(main())
    assert "hello" in after
    assert not result.is_error and text_of(result) == "hello mcp"


@pytest.mark.slow
def test_a_named_session_keeps_always_approvals(asking: Path, env: dict[str, str]) -> None:
    _, answer = _answering({"decision": "always"})

    async def main() -> tuple[Any, Any, Any]:
        async with stdio_session(
            asking, env, "--session", "ses_mcp1", elicitation_callback=answer
        ) as session:
            first = await session.call_tool("bash", {"command": "echo kept", "description": "Echo"})
        async with stdio_session(asking, env, "--session", "ses_mcp1") as session:  # no elicitation now
            again = await session.call_tool("bash", {"command": "echo kept", "description": "Echo"})
        async with stdio_session(asking, env) as session:  # a new session: asked, and nobody can answer
            other = await session.call_tool("bash", {"command": "echo kept", "description": "Echo"})
        return first, again, other

    first, again, other = run(main())
    assert not first.is_error and not again.is_error
    assert other.is_error


def test_a_config_change_while_serving_changes_the_list(project: Path, env: dict[str, str]) -> None:
    notes = Notes()

    async def main() -> tuple[set[str], Any]:
        async with stdio_session(project, env, message_handler=notes.handler) as session:
            assert "bash" in {tool.name for tool in (await session.list_tools()).tools}
            (project / "opencode.toml").write_text('[permission]\nbash = "deny"\n')
            await asyncio.wait_for(notes.changed.wait(), 30)
            after = {tool.name for tool in (await session.list_tools()).tools}
            return after, await session.call_tool("bash", {"command": "echo no", "description": "Echo"})

    after, result = run(main())
    assert "bash" not in after and "read" in after
    assert result.is_error


def test_question_is_offered_and_asked_through_elicitation(project: Path, env: dict[str, str]) -> None:
    forms: list[dict[str, Any]] = []

    async def answer(context: Any, params: Any) -> ElicitResult:
        forms.append(params.requested_schema)
        return ElicitResult(action="accept", content={"q1": "Blue", "q2_own": "a small one"})

    question = {
        "questions": [
            {
                "question": "Which colour?",
                "header": "Colour",
                "options": [
                    {"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"},
                ],
            },
            {"question": "What size?", "header": "Size", "options": [{"label": "Big", "description": "x"}]},
        ]
    }

    async def main() -> tuple[set[str], Any]:
        async with stdio_session(project, env, elicitation_callback=answer) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            return names, await session.call_tool("question", question)

    names, result = run(main())
    assert "question" in names
    assert not result.is_error
    assert '"Which colour?"="Blue"' in text_of(result) and '"What size?"="a small one"' in text_of(result)
    assert forms[0]["properties"]["q1"]["enum"] == ["Red", "Blue"]


@pytest.mark.slow
def test_a_client_going_away_mid_call_leaves_no_process(project: Path, env: dict[str, str]) -> None:
    pid_file = project / "shell.pid"

    async def main() -> None:
        async with stdio_session(project, env) as session:
            call = asyncio.ensure_future(
                session.call_tool("bash", {"command": "echo $$ > shell.pid; sleep 60", "description": "Wait"})
            )
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.05)
        # the client closed the server's stdin and went, the call unanswered
        call.cancel()
        with contextlib.suppress(BaseException):
            await call

    run(main())
    assert wait_gone(int(pid_file.read_text()), 10.0), "a command outlived its client"


# -- a server that never dies of, or ignores, a request ------------------------------------------------


class RawStdio:
    """``opencode mcp serve`` over pipes this test writes raw lines to (malformed ones too); well-formed
    messages are built with the SDK's types."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        import subprocess
        import sys

        self.process = subprocess.Popen(
            [sys.executable, "-m", "opencode_cli", "mcp", "serve"],
            cwd=directory,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(directory.parent / "raw-serve.log").open("ab"),
            start_new_session=True,
        )
        self._pending = b""

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict[str, Any]:
        import json
        import os
        import select

        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:  # its own buffer: one read may bring several replies
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, "no reply"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server closed its stdout"
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)

    def request(self, ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        from mcp_types import JSONRPCRequest

        self.send(JSONRPCRequest(jsonrpc="2.0", id=ident, method=method, params=params).model_dump_json())
        return self.receive()

    def initialize(self) -> None:
        from mcp_types import JSONRPCNotification

        info = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        assert "result" in self.request(0, "initialize", info)
        self.send(JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized").model_dump_json())
        assert "result" in self.request(1, "tools/list")

    def stop(self) -> None:
        from _mcp_servers import stop

        stop(self.process)


@pytest.fixture
def raw(project: Path, env: dict[str, str]) -> Any:
    server = RawStdio(project, env)
    yield server
    server.stop()


@pytest.mark.parametrize(("signum", "code"), [(15, 143), (2, 130)])
def test_a_signal_while_idle_ends_the_server_at_once(raw: RawStdio, signum: int, code: int) -> None:
    import os

    raw.initialize()
    os.kill(raw.process.pid, signum)  # the client is idle: nothing more arrives on stdin
    assert raw.process.wait(60) == code


def test_stdin_closing_ends_the_server(raw: RawStdio) -> None:
    raw.initialize()
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    assert raw.process.wait(60) == 0


def test_malformed_requests_with_an_id_get_an_error_reply(raw: RawStdio) -> None:
    import json

    raw.initialize()
    deep: dict[str, Any] = {"x": 1}
    for _ in range(220):
        deep = {"a": deep}
    cases = [
        ('{"jsonrpc": "2.0", "id": 10, "method": "tools/li', 10, -32700),  # truncated
        ('{"jsonrpc": "2.0", "id": 11, "method": 123}', 11, -32600),
        ('{"jsonrpc": "1.0", "id": 12, "method": "tools/list"}', 12, -32600),
        ('{"jsonrpc": "2.0", "id": 13}', 13, -32600),  # no method
        (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 14,
                    "method": "tools/call",
                    "params": {"name": "read", "arguments": deep},
                }
            ),
            14,
            -32600,
        ),
    ]
    for line, ident, code in cases:
        raw.send(line)
        reply = raw.receive()
        assert (reply["id"], reply["error"]["code"]) == (ident, code), reply
    assert "result" in raw.request(20, "tools/list")  # and the server still serves


def test_a_batch_gets_an_error_reply_for_each_request_in_it(raw: RawStdio) -> None:
    import json

    raw.initialize()
    batch = [
        {"jsonrpc": "2.0", "id": 40, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "forty-one", "method": "tools/call", "params": {"name": "read"}},
    ]
    raw.send(json.dumps(batch))
    replies = [raw.receive(), raw.receive()]
    assert [(reply["id"], reply["error"]["code"]) for reply in replies] == [
        (40, -32600),
        ("forty-one", -32600),
    ]
    assert "batches are not supported" in replies[0]["error"]["message"]
    raw.send("[]")  # nothing in it carries an id: one reply with a null id
    empty = raw.receive()
    assert empty["id"] is None and empty["error"]["code"] == -32600
    assert "result" in raw.request(42, "tools/list")  # and the server still serves


def test_a_request_over_the_limit_is_refused_unread(raw: RawStdio) -> None:
    from opencode_cli.mcp.serve.limits import MAX_REQUEST_BYTES

    raw.initialize()
    huge = "x" * (MAX_REQUEST_BYTES + 10)
    raw.send(
        '{"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": {"name": "write", "arguments": '
        '{"filePath": "big.txt", "content": "' + huge + '"}}}'
    )
    reply = raw.receive()
    assert reply["id"] == 30 and reply.get("error", {}).get("message", "").startswith("Request too large"), (
        reply
    )
    assert len(reply["error"]["message"]) < 200  # the request is not echoed
    assert "result" in raw.request(31, "tools/list")


def test_a_directory_with_a_name_that_is_not_utf8_does_not_kill_the_server(
    project: Path, env: dict[str, str]
) -> None:
    import os

    (project / "odd").mkdir()
    with open(os.path.join(os.fsencode(project / "odd"), b"bad-\xff.txt"), "w") as out:
        out.write("odd content\n")

    async def main() -> tuple[Any, Any, Any]:
        async with stdio_session(project, env) as session:
            listed = await session.call_tool("read", {"filePath": "odd"})
            back = await session.call_tool("read", {"filePath": "odd/bad-\ufffd.txt"})  # as listed
            return listed, back, await session.call_tool("read", {"filePath": "notes.txt"})

    listed, back, after = run(main())
    assert not listed.is_error and "bad-\ufffd.txt" in text_of(listed)  # as glob lists it too
    assert not back.is_error and "1: odd content" in text_of(back)
    assert "beta needle" in text_of(after)


def test_a_token_in_the_environment_does_not_stop_a_stdio_server(project: Path, env: dict[str, str]) -> None:
    async def main() -> Any:
        async with stdio_session(project, {**env, "OPENCODE_SERVE_TOKEN": "s3cret"}) as session:
            return await session.call_tool("read", {"filePath": "notes.txt"})

    assert "beta needle" in text_of(run(main()))
