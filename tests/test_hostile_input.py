"""No input produces a traceback (issue 14 item 3).

(a) Hostile arguments through the real ``opencode`` console script (``tools call`` and ``tools run``):
arguments nested 10 000 levels deep, lone surrogates, NUL bytes in paths, numbers too big for a float or
too long for an int, 50 MB strings. Each ends with the model-facing invalid-arguments text, the tool's own
one-line error, or a one-line usage error, and the right exit code; never a ``Traceback`` on stderr
(unless ``OPENCODE_DEBUG=1`` asks for one).

(b) A hypothesis fuzz of generated JSON arguments against the built-ins through ``Session.dispatch``
in-process: nothing escapes ``dispatch``, every part is completed or an error with text, and nothing is
written outside the project. Left out of the fuzz: ``bash`` (it runs commands) and ``task`` (it starts a
subagent on a model). ``webfetch`` and ``websearch`` are fuzzed but cannot reach the internet: their
permission is ``ask`` and nobody answers (the call is rejected before any request), and their proxy and
service URLs point at a closed local port besides.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from opencode_cli.permission import Rule
from opencode_cli.registry import ModelRef
from opencode_cli.session import ToolCall

SCRIPT = Path(sys.executable).parent / "opencode"
TEMPLATE_HEAD = "The read tool was called with invalid arguments: "
TEMPLATE_TAIL = "Please rewrite the input so it satisfies the expected schema."
INVALID_PREFIX = "The arguments provided to the tool are invalid: "
DEEP = 10_000
BIG = 50 * 1024 * 1024
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection fails at once
CLAUDE = ModelRef.parse("anthropic/claude-sonnet-4-5")
GPT5 = ModelRef.parse("openai/gpt-5")

BOOM_TOOL = '''
from opencode_cli import tool


@tool
def default(text: str = "") -> str:
    """Always fails with a bug of its own."""
    raise RuntimeError("boom in the tool\\nsecond line of the message")
'''


def deep_list(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int = DEEP) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.fixture
def opencode(cli_env: dict[str, str]) -> Any:
    """Run the console script in the project; arguments may be ``str`` or ``bytes``."""
    env = {k: v for k, v in cli_env.items() if k != "project"}

    def run(*args: str | bytes, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *args],
            cwd=cli_env["project"],
            env={**env, **(extra_env or {})},
            capture_output=True,
            text=True,
            errors="backslashreplace",
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    return run


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stdout, done.stdout[-3000:]


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text[-2000:]
    return lines[0]


def call(arguments: Any, name: str = "read") -> str:
    return json.dumps({"name": name, "arguments": arguments})


def template(detail_part: str, text: str) -> None:
    assert text.startswith(TEMPLATE_HEAD), text[:500]
    assert detail_part in text and text.rstrip().endswith(TEMPLATE_TAIL), text[:500]


# -- (a) the specific cases, as real processes ------------------------------------------------------------


@pytest.mark.parametrize("nested", [deep_list(), deep_object()], ids=["list", "object"])
def test_call_with_deeply_nested_call_text_is_a_usage_error(opencode, nested: str) -> None:
    done = opencode("tools", "call", '{"name": "read", "arguments": {"filePath": ' + nested + "}}")
    no_traceback(done)
    assert done.returncode == 2
    assert one_line(done.stderr) == "error: not valid JSON: nested too deeply"


@pytest.mark.parametrize("nested", [deep_list(), deep_object()], ids=["list", "object"])
def test_call_with_deeply_nested_arguments_text_is_rerouted_to_invalid(opencode, nested: str) -> None:
    done = opencode("tools", "call", call('{"filePath": ' + nested + "}"))
    no_traceback(done)
    assert done.returncode == 1
    assert done.stdout.startswith(INVALID_PREFIX + "Invalid input for tool read: JSON parsing failed")
    assert "Error message: nested too deeply" in done.stdout
    assert len(done.stdout) < 10_000  # the text quoted back is cut


def test_call_with_arguments_nested_past_the_limit_is_the_invalid_arguments_text(opencode) -> None:
    nested = json.loads(deep_object(150))
    done = opencode("tools", "call", call({"filePath": "README.md", "a": nested}))
    no_traceback(done)
    assert done.returncode == 1
    template('["a"]["a"]["a"]…: nested deeper than 100 levels', done.stdout)


@pytest.mark.parametrize("as_json", [False, True])
def test_call_with_a_lone_surrogate_is_the_invalid_arguments_text(opencode, as_json: bool) -> None:
    text = '{"name": "read", "arguments": {"filePath": "\\ud800"}}'
    done = opencode("tools", "call", *(["--json"] if as_json else []), text)
    no_traceback(done)
    assert done.returncode == 1
    if as_json:
        [part] = json.loads(done.stdout)["parts"]
        assert part["status"] == "error" and part["input"] == {"filePath": "\ud800"}
        output = part["error"]
    else:
        output = done.stdout
    template('["filePath"]: a string with a lone surrogate is not valid Unicode text', output)


def test_run_with_a_lone_surrogate_is_the_invalid_arguments_text(opencode) -> None:
    for argument in (b'filePath:="\\ud800"', b"filePath=\xed\xa0\x80"):  # JSON escape; raw bytes
        done = opencode("tools", "run", "read", argument)
        no_traceback(done)
        assert done.returncode == 2
        template('["filePath"]: a string with a lone surrogate', done.stderr)


def test_a_nul_byte_in_a_path_is_a_one_line_tool_error(opencode) -> None:
    called = opencode("tools", "call", call({"filePath": "a\u0000b"}))
    no_traceback(called)
    assert called.returncode == 1 and one_line(called.stdout) == "embedded null byte"
    ran = opencode("tools", "run", "read", 'filePath:="a\\u0000b"')
    no_traceback(ran)
    assert ran.returncode == 1 and one_line(ran.stderr) == "embedded null byte"
    for tool, args in [
        ("write", {"filePath": "a\u0000b", "content": "x"}),
        ("glob", {"pattern": "a\u0000b"}),
    ]:
        done = opencode("tools", "call", call(args, tool))
        no_traceback(done)
        assert done.returncode == 1 and one_line(done.stdout)


def test_a_number_beyond_a_float_is_the_invalid_arguments_text(opencode) -> None:
    text = '{"name": "read", "arguments": {"filePath": "README.md", "offset": 1e400}}'
    called = opencode("tools", "call", text)
    no_traceback(called)
    assert called.returncode == 1
    template('["offset"]: Input should be a finite number', called.stdout)
    ran = opencode("tools", "run", "read", "filePath=README.md", "offset:=1e400")
    no_traceback(ran)
    assert ran.returncode == 2
    template('["offset"]: Input should be a finite number', ran.stderr)


def test_a_number_of_5000_digits_is_refused_in_one_line(opencode) -> None:
    digits = "9" * 5000
    literal = '{"name": "read", "arguments": {"filePath": "README.md", "offset": ' + digits + "}}"
    done = opencode("tools", "call", literal)
    no_traceback(done)
    assert done.returncode == 2
    assert one_line(done.stderr).startswith("error: not valid JSON: Exceeds the limit (4300 digits)")

    done = opencode("tools", "call", call('{"filePath": "README.md", "offset": ' + digits + "}"))
    no_traceback(done)
    assert done.returncode == 1 and done.stdout.startswith(INVALID_PREFIX)

    done = opencode("tools", "run", "read", "filePath=README.md", f"offset={digits}")
    no_traceback(done)
    assert done.returncode == 2
    assert one_line(done.stderr) == "error: offset: a number of 5000 digits is too long"

    done = opencode("tools", "run", "read", "filePath=README.md", f"offset:={digits}")
    no_traceback(done)
    assert done.returncode == 2 and one_line(done.stderr).startswith("error: offset: Exceeds the limit")

    done = opencode("tools", "run", "read", f'{{"filePath": "README.md", "offset": {digits}}}')
    no_traceback(done)
    assert done.returncode == 2 and one_line(done.stderr).startswith("error: the JSON object argument: ")


def test_run_with_deeply_nested_arguments_is_a_usage_error(opencode) -> None:
    for argument, message in [
        ('{"filePath": ' + deep_list() + "}", "error: the JSON object argument: nested too deeply"),
        (f"filePath:={deep_object()}", "error: filePath: nested too deeply"),
    ]:
        done = opencode("tools", "run", "read", argument)
        no_traceback(done)
        assert done.returncode == 2 and one_line(done.stderr) == message


@pytest.mark.slow
def test_50_mb_strings(opencode, cli_env, tmp_path: Path) -> None:
    project = Path(cli_env["project"])
    big = tmp_path / "big.txt"
    big.write_text("x" * BIG)

    calls = tmp_path / "calls.json"
    calls.write_text(call({"filePath": "big-copy.txt", "content": "y" * BIG}, "write"))
    written = opencode("tools", "call", "--file", str(calls))
    no_traceback(written)
    assert written.returncode == 0 and (project / "big-copy.txt").stat().st_size == BIG

    # a path longer than the system takes is refused at once, with the invalid-arguments text
    refused = "The read tool was called with invalid arguments: the path is "
    calls.write_text(call({"filePath": "x" * BIG}))
    called = opencode("tools", "call", "--file", str(calls))
    no_traceback(called)
    assert called.returncode == 1 and called.stdout.startswith(refused) and len(called.stdout) < 1000

    ran = opencode("tools", "run", "read", f"filePath=@{big}")
    no_traceback(ran)
    assert ran.returncode != 0 and refused in ran.stdout + ran.stderr
    assert len(ran.stdout + ran.stderr) < 10_000  # the 50 MB name is not quoted


def test_run_reading_an_argument_file_that_is_not_text_is_a_usage_error(opencode, tmp_path: Path) -> None:
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\xff\xfe\x00\x80")
    done = opencode("tools", "run", "read", f"filePath=@{binary}")
    no_traceback(done)
    assert done.returncode == 2 and one_line(done.stderr).startswith("error: filePath: cannot read ")


def test_a_bug_in_a_tool_is_one_line_and_the_traceback_only_in_debug(opencode, cli_env) -> None:
    tool_file = Path(cli_env["project"]) / ".opencode" / "tool" / "boom.py"
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text(textwrap.dedent(BOOM_TOOL).lstrip())

    called = opencode("tools", "call", call({}, "boom"))
    no_traceback(called)
    assert called.returncode == 1
    assert one_line(called.stdout) == "RuntimeError: boom in the tool"

    debug = opencode("tools", "call", call({}, "boom"), extra_env={"OPENCODE_DEBUG": "1"})
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "RuntimeError" in debug.stderr
    assert one_line(debug.stdout) == "RuntimeError: boom in the tool"

    ran = opencode("tools", "run", "boom")  # the same one line as the model gets
    no_traceback(ran)
    assert ran.returncode == 1 and ran.stderr == "RuntimeError: boom in the tool\n"
    ran_debug = opencode("tools", "run", "boom", extra_env={"OPENCODE_DEBUG": "1"})
    assert "Traceback" in ran_debug.stderr and ran_debug.stderr.endswith("RuntimeError: boom in the tool\n")


# -- in-process: what the CLI cannot send ----------------------------------------------------------------


def nested_value(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_dispatch_of_an_arguments_object_nested_10000_deep(make_project) -> None:
    session = make_project().session(model=CLAUDE)

    async def go() -> Any:
        async with session:
            return await session.dispatch(ToolCall("read", {"filePath": nested_value(DEEP)}))

    part = asyncio.run(go())
    assert part.status == "error"
    assert part.error.startswith(TEMPLATE_HEAD) and "nested deeper than 100 levels" in part.error


# -- (b) the fuzz ---------------------------------------------------------------------------------------

OUT = "@OUTSIDE@"  # replaced with the absolute path of the sibling ``outside`` directory
NASTY_STRINGS = [
    "",
    "README.md",
    "../outside/escaped.txt",
    "../outside/keep.txt",
    f"{OUT}/keep.txt",
    f"{OUT}/new.txt",
    "/",
    "a\u0000b",
    "\ud800",
    "\udfff tail",
    "x" * 5000,
    "*",
    "**/*",
    "(",
    "[",
    "\\",
    "~",
    "http://127.0.0.1:9/",
]
text = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
strings = text | st.sampled_from(NASTY_STRINGS)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**4000)
    | st.floats(allow_nan=True, allow_infinity=True)
    | strings
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
paths = (
    st.sampled_from(
        [
            "README.md",
            "new.txt",
            "sub/dir/new.txt",
            "../outside/escaped.txt",
            "../outside/keep.txt",
            f"{OUT}/keep.txt",
            f"{OUT}/new.txt",
            f"{OUT}",
            "..",
            ".",
            "a\u0000b",
            "\ud800.txt",
            "x" * 5000,
        ]
    )
    | text
)
numbers = st.integers(min_value=-5, max_value=5) | st.integers() | st.floats() | st.just(10**4000)
patches = st.builds(
    lambda verb, path, body: f"*** Begin Patch\n*** {verb} File: {path}\n{body}\n*** End Patch",
    st.sampled_from(["Add", "Update", "Delete"]),
    paths,
    st.sampled_from(["+hello", "@@\n-# Demo\n+# Changed", "-x", ""]) | text,
)
todo = st.fixed_dictionaries(
    {
        "content": strings,
        "status": st.sampled_from(["pending", "in_progress", "completed", "x"]),
        "priority": st.sampled_from(["high", "medium", "low"]) | strings,
    }
)
#: Arguments close to each tool's schema, with hostile values; ``bash`` and ``task`` are left out.
TOOLS: dict[str, dict[str, Any]] = {
    "read": {"filePath": paths, "offset": numbers, "limit": numbers},
    "write": {"filePath": paths, "content": strings},
    "edit": {
        "filePath": paths,
        "oldString": strings | st.just("# Demo"),
        "newString": strings,
        "replaceAll": st.booleans(),
    },
    "glob": {"pattern": strings | st.just("../outside/*"), "path": paths},
    "grep": {"pattern": strings | st.just("Demo"), "path": paths, "include": strings},
    "apply_patch": {"patchText": patches | strings},
    "todowrite": {"todos": st.lists(todo, max_size=3)},
    "skill": {"name": strings},
    "webfetch": {
        "url": strings,
        "format": st.sampled_from(["markdown", "text", "html", "pdf"]),
        "timeout": numbers,
    },
    "websearch": {"query": strings, "numResults": numbers},
    "no_such_tool": {"x": strings},
    "invalid": {"tool": strings, "error": strings},
}


@st.composite
def tool_calls(draw: Any) -> tuple[str, dict[str, Any], bool]:
    """A tool, its arguments (schema keys, some dropped, some replaced by any JSON, extra keys), and
    whether they are sent as JSON text (OpenAI) or as an object (Anthropic)."""
    name = draw(st.sampled_from(sorted(TOOLS)))
    args: dict[str, Any] = {}
    for key, values in TOOLS[name].items():
        if draw(st.integers(0, 9)) == 0:
            continue  # left out
        args[key] = draw(json_values if draw(st.integers(0, 5)) == 0 else values)
    args.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)))
    return name, args, draw(st.booleans())


def outside_paths(value: Any, outside: Path) -> Any:
    if isinstance(value, str):
        return value.replace(OUT, str(outside))
    if isinstance(value, list):
        return [outside_paths(item, outside) for item in value]
    if isinstance(value, dict):
        return {key: outside_paths(item, outside) for key, item in value.items()}
    return value


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(model=st.sampled_from([CLAUDE, GPT5]), calls=st.lists(tool_calls(), min_size=1, max_size=3))
def test_fuzzed_arguments_never_escape_dispatch(
    make_project, project_dir: Path, model: ModelRef, calls: list[Any]
) -> None:
    """Claude is offered edit and write, GPT-5 apply_patch (the other is rerouted to ``invalid``)."""
    outside = project_dir.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "keep.txt").write_text("untouched\n")
    (project_dir / "README.md").write_text("# Demo\n")
    before = snapshot(outside)
    network = {
        "ALL_PROXY": CLOSED,
        "HTTPS_PROXY": CLOSED,
        "HTTP_PROXY": CLOSED,
        "OPENCODE_EXA_BASE_URL": CLOSED,
        "OPENCODE_PARALLEL_BASE_URL": CLOSED,
    }
    project = make_project(extra_env=network)
    rules = [Rule("webfetch", "*", "ask"), Rule("websearch", "*", "ask")]  # asked, nobody answers
    session = project.session(model=model, rules=rules)

    async def go() -> list[Any]:
        async with session:
            parts = []
            for name, args, as_text in calls:
                args = outside_paths(args, outside)
                raw: Any = json.dumps(args) if as_text else args
                parts.append(await asyncio.wait_for(session.dispatch(ToolCall(name, raw)), timeout=30))
            return parts

    for part in asyncio.run(go()):
        event(f"{part.tool}: {part.status}")
        assert part.status in ("completed", "error")
        text = part.output if part.status == "completed" else part.error
        assert isinstance(text, str)
        if part.status == "error":
            assert text.strip(), part
            assert "Traceback" not in text
    assert snapshot(outside) == before
    assert not os.path.exists(project_dir.parent / "escaped.txt")


@given(st.lists(st.text(alphabet="aé/\U0001f600", max_size=300), max_size=40).map("/".join))
def test_a_path_is_too_long_exactly_when_the_system_would_say_so(path: str) -> None:
    """:func:`opencode_cli.context.too_long` agrees with the byte limits the system applies (its short
    cut for short text included): over 4 095 bytes in all, or a name over 255 bytes."""
    from opencode_cli.context import NAME_MAX, PATH_MAX, too_long

    encoded = path.encode("utf-8")
    refused = len(encoded) >= PATH_MAX or any(len(name) > NAME_MAX for name in encoded.split(b"/"))
    assert (too_long(path) is not None) == refused
