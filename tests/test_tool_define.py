"""The tool contract: ``define``, the ``@tool`` decorator and the wrap (core spec §1; checklist §11.2)."""

import asyncio
import copy
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from opencode_cli import define, tool
from opencode_cli.context import AbortSignal, PermissionRequest, ToolContext
from opencode_cli.contract import LazyTool, Tool
from opencode_cli.errors import INTERRUPTED, AbortedError, DeniedError, InvalidArgumentsError, ToolError
from opencode_cli.results import Attachment, ToolResult
from opencode_cli.truncate import Truncator

TEMPLATE_TAIL = ".\nPlease rewrite the input so it satisfies the expected schema."


def prefix(tool_id: str) -> str:
    return f"The {tool_id} tool was called with invalid arguments: "


@pytest.fixture
def ctx(tool_context: Any, tmp_path: Path) -> ToolContext:
    return tool_context(truncator=Truncator(tmp_path / "out"), directory=tmp_path)


def run(t: Tool, args: Any, ctx: ToolContext) -> ToolResult:
    return asyncio.run(t.run(args, ctx))


class CountParams(BaseModel):
    count: int = Field(default=5, ge=0)
    label: str | None = None


def count_execute(params: CountParams) -> str:
    return f"count={params.count}"


# -- define(): fresh objects per load --------------------------------------------------------------------


def test_mapping_defined_tool_does_not_mutate_the_original() -> None:
    definition = {"description": "counts", "parameters": CountParams, "execute": count_execute}
    snapshot = copy.copy(definition)
    lazy = define("counter", lambda: definition)

    loaded = [lazy.load() for _ in range(3)]

    assert definition == snapshot
    assert definition["execute"] is count_execute
    assert all(t.id == "counter" for t in loaded)
    assert len({id(t) for t in loaded}) == 3


def test_tool_defined_tool_returns_fresh_objects_and_keeps_the_original(ctx: ToolContext) -> None:
    @tool
    def original(count: int = 1) -> str:
        """Echo the count."""
        return str(count)

    original_source = original.source
    lazy = define("renamed", lambda: original)

    first, second = lazy.load(), lazy.load()

    assert first is not second
    assert first is not original and second is not original
    assert (first.id, second.id) == ("renamed", "renamed")
    assert original.id == "original"
    assert original.source is original_source
    assert run(first, {"count": 3}, ctx).output == "3"


def test_init_runs_on_every_load_not_at_define_time() -> None:
    calls = []

    def init() -> dict[str, Any]:
        calls.append(1)
        return {"description": "d", "parameters": CountParams, "execute": count_execute}

    lazy = define("counter", init, description="listed without building")

    assert calls == []
    assert lazy.description == "listed without building"
    assert calls == []
    lazy.load()
    lazy.load()
    assert len(calls) == 2


def test_define_with_a_module_string_imports_lazily(tmp_path: Path, monkeypatch, ctx: ToolContext) -> None:
    module = tmp_path / "lazy_tool_mod_x1.py"
    module.write_text(
        "from opencode_cli import tool\n"
        "LOADED = True\n"
        "@tool\n"
        "def shout(text: str) -> str:\n"
        "    '''Shout.'''\n"
        "    return text.upper()\n"
        "def init():\n"
        "    return shout\n"
    )
    (tmp_path / "lazy_desc.txt").write_text("Shouts the text.")
    monkeypatch.syspath_prepend(str(tmp_path))

    lazy = define("shout", "lazy_tool_mod_x1:init", description=tmp_path / "lazy_desc.txt")

    assert lazy.description == "Shouts the text."
    assert "lazy_tool_mod_x1" not in sys.modules
    loaded = lazy.load()
    assert "lazy_tool_mod_x1" in sys.modules
    assert run(loaded, {"text": "hi"}, ctx).output == "HI"
    sys.modules.pop("lazy_tool_mod_x1", None)


def test_init_returning_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="broken"):
        define("broken", lambda: 42).load()


def test_execute_receives_decoded_parameters(ctx: ToolContext) -> None:
    seen: list[CountParams] = []

    def execute(params: CountParams) -> str:
        seen.append(params)
        return "ok"

    t = define("counter", lambda: {"description": "d", "parameters": CountParams, "execute": execute}).load()

    run(t, {}, ctx)
    run(t, {"count": "7"}, ctx)

    assert [p.count for p in seen] == [5, 7]
    assert all(isinstance(p, CountParams) for p in seen)


def test_opencode_style_execute_args_ctx_gets_the_model(ctx: ToolContext) -> None:
    """``execute(args, ctx)`` without annotations, as OpenCode writes it, receives the validated model."""
    received: list[Any] = []

    def execute(args, ctx):
        received.append((args, ctx))
        return str(args.count)

    t = define("counter", lambda: {"description": "d", "parameters": CountParams, "execute": execute}).load()

    assert run(t, {"count": 9}, ctx).output == "9"
    assert isinstance(received[0][0], CountParams)
    assert received[0][1] is ctx


def test_validation_still_works_after_many_loads(ctx: ToolContext) -> None:
    lazy = define(
        "counter", lambda: {"description": "d", "parameters": CountParams, "execute": count_execute}
    )
    for _ in range(100):
        t = lazy.load()

    assert run(t, {"count": 42}, ctx).output == "count=42"
    with pytest.raises(InvalidArgumentsError, match="invalid arguments"):
        run(t, {"count": -1}, ctx)


# -- @tool -----------------------------------------------------------------------------------------------


def test_tool_from_a_typed_function() -> None:
    @tool
    def greet(
        ctx: ToolContext,
        name: str = Field(description="Who to greet"),
        times: int = Field(default=1, description="How many times"),
    ) -> str:
        """Greet someone."""
        return name * times

    schema = greet.schema()

    assert greet.id == "greet"
    assert greet.description == "Greet someone."
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"name", "times"}
    assert "ctx" not in schema["properties"]
    assert schema["properties"]["name"]["description"] == "Who to greet"
    assert schema["properties"]["name"]["type"] == "string"
    assert schema["properties"]["times"]["description"] == "How many times"
    assert schema["required"] == ["name"]
    jsonschema.Draft202012Validator.check_schema(schema)


def test_context_parameter_is_injected_by_annotation_or_name(ctx: ToolContext) -> None:
    got: list[Any] = []

    @tool
    def by_annotation(text: str, context: ToolContext) -> str:
        got.append(context)
        return text

    @tool
    def by_name(text: str, ctx) -> str:
        got.append(ctx)
        return text

    for t in (by_annotation, by_name):
        assert list(t.schema()["properties"]) == ["text"]
        assert run(t, {"text": "x"}, ctx).output == "x"
    assert got == [ctx, ctx]


def test_tool_from_a_pydantic_model_parameter(ctx: ToolContext) -> None:
    class Search(BaseModel):
        pattern: str = Field(description="The regex to look for")
        limit: int = 10

    received: list[Search] = []

    @tool
    def search(params: Search, ctx: ToolContext) -> str:
        """Search."""
        received.append(params)
        return f"{params.pattern}:{params.limit}"

    assert search.parameters is Search
    assert search.schema()["properties"]["pattern"]["description"] == "The regex to look for"
    assert "ctx" not in search.schema()["properties"]
    assert run(search, {"pattern": "a+"}, ctx).output == "a+:10"
    assert isinstance(received[0], Search)


def test_tool_with_explicit_parameters_model(ctx: ToolContext) -> None:
    @tool(id="counted", parameters=CountParams, description="explicit")
    def body(count: int, label: str | None) -> str:
        return f"{count}/{label}"

    assert body.id == "counted"
    assert body.description == "explicit"
    assert run(body, {"label": "x"}, ctx).output == "5/x"


def test_tool_with_explicit_json_schema(ctx: ToolContext) -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["n"],
    }

    @tool(json_schema=schema)
    def explicit(n: int, tags: list[str] | None = None) -> str:
        """Explicit schema."""
        return f"{n}:{tags}"

    assert explicit.schema() == schema
    assert run(explicit, {"n": 2, "tags": ["a"], "junk": True}, ctx).output == "2:['a']"

    with pytest.raises(InvalidArgumentsError) as info:
        run(explicit, {"n": 0}, ctx)
    assert str(info.value).startswith(prefix("explicit"))
    assert '["n"]' in info.value.detail
    assert "received 0" in info.value.detail

    with pytest.raises(InvalidArgumentsError) as info:
        run(explicit, {"tags": [1]}, ctx)
    detail = info.value.detail
    assert '["n"]: Field required (expected integer)' in detail
    assert '["tags"][0]' in detail and "expected string" in detail and "received 1" in detail


def test_tool_without_parameters_has_an_empty_object_schema(ctx: ToolContext) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    schema = ping.schema()
    assert schema["type"] == "object"
    assert schema["properties"] == {}
    assert run(ping, {"ignored": 1}, ctx).output == "pong"

    bare = Tool("bare", "nothing", execute=lambda: "x")
    assert bare.schema() == {"type": "object", "properties": {}}


def load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_description_from_sibling_txt_file_or_docstring(tmp_path: Path) -> None:
    (tmp_path / "weather_tools.py").write_text(
        "from opencode_cli import tool\n"
        "\n"
        "@tool\n"
        "def shout(text: str) -> str:\n"
        "    '''Docstring that the .txt file beats.'''\n"
        "    return text.upper()\n"
        "\n"
        "@tool\n"
        "def whisper(text: str) -> str:\n"
        "    '''Whisper the text.\n"
        "\n"
        "    Quietly.\n"
        "    '''\n"
        "    return text.lower()\n"
        "\n"
        "@tool\n"
        "def default(city: str) -> str:\n"
        "    return city\n"
        "\n"
        "@tool(description='given explicitly')\n"
        "def explicit(text: str) -> str:\n"
        "    '''Docstring.'''\n"
        "    return text\n"
        "\n"
        "@tool\n"
        "def undocumented(text: str) -> str:\n"
        "    return text\n"
    )
    (tmp_path / "shout.txt").write_text("Shout it, from shout.txt.\n")
    (tmp_path / "weather_tools.txt").write_text("The module's default tool.")
    (tmp_path / "explicit.txt").write_text("not used")

    module = load_module(tmp_path / "weather_tools.py", "weather_tools_for_test")

    assert module.shout.description == "Shout it, from shout.txt.\n"
    assert module.whisper.description == "Whisper the text.\n\nQuietly."
    assert module.default.description == "The module's default tool."
    assert module.explicit.description == "given explicitly"
    assert module.undocumented.description == ""


def test_unknown_keys_are_dropped(ctx: ToolContext) -> None:
    class Strict(BaseModel):
        name: str

    received: list[Any] = []

    @tool
    def from_signature(name: str) -> str:
        received.append(name)
        return name

    @tool
    def from_model(params: Strict) -> str:
        received.append(params.model_dump())
        return params.name

    assert run(from_signature, {"name": "a", "extra": 1}, ctx).output == "a"
    assert run(from_model, {"name": "b", "extra": 2}, ctx).output == "b"
    assert received == ["a", {"name": "b"}]
    assert from_signature.validate({"name": "c", "zzz": 3}).model_dump() == {"name": "c"}


# -- the invalid-arguments message -----------------------------------------------------------------------


class Question(BaseModel):
    question: str
    header: str = ""
    options: list[str] = []


class QuestionParams(BaseModel):
    questions: list[Question]


@tool
def question(params: QuestionParams) -> str:
    """Ask questions."""
    return "asked"


def test_invalid_arguments_template_is_exact() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        question.validate({"questions": [{"question": 5}]})
    error = info.value

    assert isinstance(error, ToolError)
    assert error.tool == "question"
    assert str(error) == (
        f"The question tool was called with invalid arguments: {error.detail}.\n"
        "Please rewrite the input so it satisfies the expected schema."
    )
    # the detail names the field path, the expected type and what was received
    assert '["questions"][0]["question"]' in error.detail
    assert "expected string" in error.detail
    assert "received 5" in error.detail


def test_invalid_arguments_missing_nested_field() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        question.validate({"questions": [{"header": "h"}]})

    assert info.value.detail == '["questions"][0]["question"]: Field required (expected string)'


def test_invalid_arguments_names_every_bad_field() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        question.validate({"questions": [{"question": "ok", "options": ["a", 2]}, {"question": None}]})
    detail = info.value.detail

    assert '["questions"][0]["options"][1]' in detail
    assert '["questions"][1]["question"]' in detail
    assert "received null" in detail


def test_invalid_arguments_wrong_container_and_non_object() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        question.validate({"questions": "what?"})
    assert '["questions"]' in info.value.detail
    assert "expected array" in info.value.detail
    assert 'received "what?"' in info.value.detail

    with pytest.raises(InvalidArgumentsError) as info:
        question.validate(["not", "an", "object"])
    assert str(info.value).startswith(prefix("question"))
    assert str(info.value).endswith(TEMPLATE_TAIL)


def test_format_validation_error_overrides_detail(ctx: ToolContext) -> None:
    t = define(
        "custom",
        lambda: {
            "description": "d",
            "parameters": CountParams,
            "execute": count_execute,
            "format_validation_error": lambda error: f"{error.error_count()} problem(s) in count",
        },
    ).load()

    with pytest.raises(InvalidArgumentsError) as info:
        run(t, {"count": "many"}, ctx)

    assert str(info.value) == (
        "The custom tool was called with invalid arguments: 1 problem(s) in count.\n"
        "Please rewrite the input so it satisfies the expected schema."
    )


def test_invalid_arguments_never_executes(ctx: ToolContext) -> None:
    calls = []

    @tool
    def guarded(n: int) -> str:
        calls.append(n)
        return "ran"

    with pytest.raises(InvalidArgumentsError):
        run(guarded, {"n": "not a number"}, ctx)
    assert calls == []


# -- execution: threads, coroutines, abort ---------------------------------------------------------------


def test_sync_functions_run_in_a_worker_thread(ctx: ToolContext) -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        threads.append(threading.get_ident())
        return "done"

    assert run(where, {}, ctx).output == "done"
    assert threads and threads[0] != threading.main_thread().ident


def test_coroutine_functions_are_awaited_on_the_loop(ctx: ToolContext) -> None:
    threads: list[int] = []

    @tool
    async def where_async(delay: float = 0.0) -> str:
        await asyncio.sleep(delay)
        threads.append(threading.get_ident())
        return "awaited"

    assert run(where_async, {"delay": 0.01}, ctx).output == "awaited"
    assert threads == [threading.main_thread().ident]


def test_abort_cancels_a_running_async_tool(ctx: ToolContext) -> None:
    state: dict[str, bool] = {}

    async def main() -> None:
        started = asyncio.Event()

        @tool
        async def slow() -> str:
            state["started"] = True
            started.set()
            try:
                await asyncio.Event().wait()  # only cancellation ends it
            except asyncio.CancelledError:
                state["cancelled"] = True
                raise
            return "finished"

        call = asyncio.ensure_future(slow.run({}, ctx))
        await started.wait()
        ctx.abort.abort()
        with pytest.raises(AbortedError) as info:
            await call
        assert str(info.value) == "[Tool execution was interrupted]" == INTERRUPTED

    asyncio.run(main())
    assert state == {"started": True, "cancelled": True}


def test_abort_from_another_thread(ctx: ToolContext) -> None:
    started = threading.Event()

    @tool
    async def slow() -> str:
        started.set()
        await asyncio.Event().wait()  # only cancellation ends it
        return "finished"

    def abort_once_started() -> None:
        started.wait()
        ctx.abort.abort()

    aborter = threading.Thread(target=abort_once_started)
    aborter.start()
    with pytest.raises(AbortedError):
        run(slow, {}, ctx)
    aborter.join()
    assert started.is_set()


def test_abort_before_the_call_never_executes(ctx: ToolContext) -> None:
    calls = []

    @tool
    def never() -> str:
        calls.append(1)
        return "ran"

    ctx.abort.abort()
    with pytest.raises(AbortedError):
        run(never, {}, ctx)
    assert calls == []


def test_an_aborted_sync_tool_is_reported_once_its_thread_has_returned(ctx: ToolContext) -> None:
    # Issue 33: nothing happens after "interrupted" is said. The tool sees the signal and returns; the
    # call raises only then (a thread that never returns is abandoned after a grace: tests/test_workers.py).
    started, finished = threading.Event(), threading.Event()
    seen: list[bool] = []

    @tool
    def patient(ctx: ToolContext) -> str:
        started.set()
        seen.append(ctx.abort.wait(60))
        finished.set()
        return "finished"

    def abort_once_started() -> None:
        started.wait()
        ctx.abort.abort()

    async def main() -> None:
        with pytest.raises(AbortedError):
            await patient.run({}, ctx)
        assert finished.is_set()  # the report came after the tool's thread returned

    aborter = threading.Thread(target=abort_once_started)
    aborter.start()
    asyncio.run(main())
    aborter.join()
    assert seen == [True]


def test_abort_signal_waiters() -> None:
    signal = AbortSignal()
    assert signal.aborted is False
    assert signal.wait(0.01) is False
    signal.abort("stop")
    signal.abort("again")
    assert signal.aborted is True
    assert signal.reason == "stop"
    assert signal.wait(0) is True
    asyncio.run(asyncio.wait_for(signal.wait_async(), 1))


def test_tool_errors_propagate_with_their_message(ctx: ToolContext) -> None:
    @tool
    def broken() -> str:
        raise RuntimeError("tool exploded")

    with pytest.raises(RuntimeError, match="tool exploded"):
        run(broken, {}, ctx)


# -- truncation in the wrap (the four flag cases) --------------------------------------------------------


def test_skips_truncation_when_metadata_truncated_is_false(ctx: ToolContext) -> None:
    big = "x" * 200_000

    @tool
    def opted_out() -> ToolResult:
        return ToolResult(output=big, metadata={"truncated": False})

    result = run(opted_out, {}, ctx)

    assert result.output == big
    assert result.metadata == {"truncated": False}


def test_applies_truncation_when_metadata_has_no_truncated_key(ctx: ToolContext) -> None:
    big = "x" * 200_000

    @tool
    def plain() -> dict[str, Any]:
        return {"output": big, "title": "big", "metadata": {"kind": "test"}}

    result = run(plain, {}, ctx)

    assert result.metadata["truncated"] is True
    assert result.metadata["kind"] == "test"
    assert len(result.output) < len(big)
    path = Path(result.metadata["outputPath"])
    assert path.parent == ctx.truncator.directory
    assert path.read_text() == big
    assert result.title == "big"


def test_skips_truncation_when_false_and_small(ctx: ToolContext) -> None:
    @tool
    def small() -> ToolResult:
        return ToolResult(output="tiny", metadata={"truncated": False})

    result = run(small, {}, ctx)

    assert result.output == "tiny"
    assert result.metadata == {"truncated": False}


def test_skips_truncation_when_already_true_with_path(ctx: ToolContext) -> None:
    @tool
    def already() -> ToolResult:
        return ToolResult(output="short preview", metadata={"truncated": True, "outputPath": "/tmp/out.txt"})

    result = run(already, {}, ctx)

    assert result.output == "short preview"
    assert result.metadata == {"truncated": True, "outputPath": "/tmp/out.txt"}
    assert not ctx.truncator.directory.exists()


def test_small_output_gets_truncated_false_and_no_path(ctx: ToolContext) -> None:
    @tool
    def small() -> str:
        return "hello"

    result = run(small, {}, ctx)

    assert result.output == "hello"
    assert result.metadata == {"truncated": False}
    assert "outputPath" not in result.metadata


def test_wrap_uses_task_hint_for_task_capable_context(ctx: ToolContext) -> None:
    @tool
    def big() -> str:
        return "\n".join(str(i) for i in range(3000))

    ctx.task_capable = True
    assert "Task tool" in run(big, {}, ctx).output
    ctx.task_capable = False
    assert "Task tool" not in run(big, {}, ctx).output


def test_result_shapes(ctx: ToolContext) -> None:
    @tool
    def nothing() -> None:
        return None

    @tool
    def structured() -> dict[str, Any]:
        return {
            "output": "here is an image",
            "attachments": [{"type": "file", "mime": "image/png", "url": "data:image/png;base64,AA=="}],
        }

    @tool
    def other() -> list[int]:
        return [1, 2]

    assert run(nothing, {}, ctx).output == ""
    result = run(structured, {}, ctx)
    assert result.output == "here is an image"
    assert result.attachments == [Attachment(mime="image/png", url="data:image/png;base64,AA==")]
    assert run(other, {}, ctx).output == "[\n  1,\n  2\n]"
    assert ToolResult(output="o", title="t").as_dict() == {
        "title": "t",
        "metadata": {},
        "output": "o",
        "attachments": [],
    }


# -- ctx.ask and ctx.metadata ----------------------------------------------------------------------------


def test_ask_from_a_sync_tool_blocks_until_answered(ctx: ToolContext) -> None:
    answered: list[PermissionRequest] = []

    async def asker(request: PermissionRequest) -> None:
        await asyncio.sleep(0.05)
        answered.append(request)

    ctx.asker = asker
    ctx.call_id = "call_1"

    @tool
    def guarded(path: str, ctx: ToolContext) -> str:
        ctx.ask_blocking("edit", [path], always=["*"], metadata={"filepath": path})
        return f"answered={len(answered)}"

    assert run(guarded, {"path": "a.txt"}, ctx).output == "answered=1"
    request = answered[0]
    assert (request.permission, request.patterns, request.always) == ("edit", ["a.txt"], ["*"])
    assert request.metadata == {"filepath": "a.txt"}
    assert request.tool == {"messageID": ctx.message_id, "callID": "call_1"}
    assert request.session_id == ctx.session_id


def test_ask_from_an_async_tool_is_awaited(ctx: ToolContext) -> None:
    answered: list[PermissionRequest] = []

    async def asker(request: PermissionRequest) -> None:
        await asyncio.sleep(0.01)
        answered.append(request)

    ctx.asker = asker

    @tool
    async def guarded(path: str, ctx: ToolContext) -> str:
        await ctx.ask("read", [path])
        return f"answered={len(answered)}"

    assert run(guarded, {"path": "b.txt"}, ctx).output == "answered=1"
    assert answered[0].permission == "read"


def test_ask_is_a_coroutine_whatever_the_thread_and_ask_blocking_refuses_the_loop(ctx: ToolContext) -> None:
    """One form per kind of tool: ``ctx.ask`` is always awaited, ``ctx.ask_blocking`` always waits (and
    refuses to wait for itself on the call's loop)."""
    import inspect
    import threading

    kinds: list[bool] = []

    def in_a_thread() -> None:
        pending = ctx.ask("read", ["x"])
        kinds.append(inspect.iscoroutine(pending))
        pending.close()

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()

    @tool
    async def on_the_loop(ctx: ToolContext) -> str:
        pending = ctx.ask("read", ["x"])
        kinds.append(inspect.iscoroutine(pending))
        await pending
        try:
            ctx.ask_blocking("read", ["x"])
        except RuntimeError as error:
            return str(error)
        return "waited for itself"

    assert "await ctx.ask()" in run(on_the_loop, {}, ctx).output
    assert kinds == [True, True]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_denied_ask_fails_the_call(ctx: ToolContext, asynchronous: bool) -> None:
    async def asker(request: PermissionRequest) -> None:
        raise DeniedError([{"permission": request.permission, "pattern": "*", "action": "deny"}])

    ctx.asker = asker
    after: list[str] = []

    if asynchronous:

        @tool
        async def guarded(ctx: ToolContext) -> str:
            await ctx.ask("bash", ["rm -rf /"])
            after.append("ran")
            return "ran"

    else:

        @tool
        def guarded(ctx: ToolContext) -> str:
            ctx.ask_blocking("bash", ["rm -rf /"])
            after.append("ran")
            return "ran"

    with pytest.raises(DeniedError) as info:
        run(guarded, {}, ctx)
    assert str(info.value).startswith("The user has specified a rule which prevents you from using")
    assert '{"permission":"bash","pattern":"*","action":"deny"}' in str(info.value)
    assert after == []


def test_metadata_updates_reach_the_sink(ctx: ToolContext) -> None:
    updates: list[tuple[Any, Any]] = []
    ctx.on_metadata = lambda title, metadata: updates.append((title, metadata))

    @tool
    def progress(ctx: ToolContext) -> str:
        ctx.metadata(title="half", metadata={"done": 1})
        ctx.metadata(metadata={"done": 2})
        return "ok"

    run(progress, {}, ctx)
    assert updates == [("half", {"done": 1}), (None, {"done": 2})]


def test_lazy_tool_and_tool_repr_and_load() -> None:
    lazy = define(
        "counter", lambda: {"description": "d", "parameters": CountParams, "execute": count_execute}
    )
    assert isinstance(lazy, LazyTool)
    assert lazy.id == "counter"
    loaded = lazy.load()
    assert loaded.load() is loaded
    assert lazy.description == "d"  # falls back to building the tool


# -- property: validation either succeeds or raises the template ----------------------------------------


class Item(BaseModel):
    name: str
    size: int = 0


class Mixed(BaseModel):
    path: str
    count: int = 1
    ratio: float | None = None
    mode: Literal["fast", "slow"] = "fast"
    items: list[Item] = []
    tags: dict[str, int] = {}
    flag: bool = False


@tool
def mixed_model(params: Mixed) -> str:
    return "ok"


@tool
def mixed_signature(
    path: str, count: int = 1, when: Literal["now", "later"] = "now", nested: list[list[int]] | None = None
) -> str:
    return "ok"


mixed_json = Tool(
    "mixed_json",
    "json schema",
    json_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "choice": {"enum": ["a", "b"]},
        },
        "required": ["path"],
    },
    execute=lambda **kwargs: "ok",
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
keys = st.sampled_from(
    ["path", "count", "ratio", "mode", "items", "tags", "flag", "when", "nested", "choice"]
)
argument_dicts = st.dictionaries(keys | st.text(max_size=10), json_values, max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=argument_dicts | json_values, which=st.sampled_from([mixed_model, mixed_signature, mixed_json]))
def test_validation_returns_a_value_or_raises_the_template(args: Any, which: Tool) -> None:
    try:
        value = which.validate(args)
    except InvalidArgumentsError as error:
        text = str(error)
        assert text.startswith(prefix(which.id))
        assert text.endswith(TEMPLATE_TAIL)
        assert error.detail
    else:
        assert isinstance(args, dict)
        assert value is not None
