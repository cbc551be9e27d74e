"""Whatever text a model sends as a script, ``execute`` answers with a result or a tool error: never an
unexpected exception, never a hung or leaked worker (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _codemode import CODE_MODE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencode_cli.errors import OpencodeError

FRAGMENTS = [
    "await tools.demo.echo(text='x')",
    "tools.demo.echo",
    "return",
    "print(",
    "import asyncio",
    "await asyncio.gather(",
    "lambda: 1",
    "\x00",
    "'\\ud800'",
    "def f():\n  yield 1\n",
    "[1] * 10",
    "raise ValueError('no')",
    "open('/')",
    "x = {",
    ")",
    "\n",
    "  ",
    "tools.demo.nothere()",
    "class A: pass",
]
scripts = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=4).map("\n".join),
)


def test_any_text_as_a_script(make_project: Any, demo: Path) -> None:
    project = make_project(extra_env=CODE_MODE)
    project.portal.call(project.open)

    @settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(scripts)
    def check(code: str) -> None:
        try:
            result = project.run_tool("execute", {"code": code}, prompt=_allow)
        except OpencodeError as error:
            assert str(error)
        else:
            assert isinstance(result.output, str) and result.title == "execute"

    check()
    assert project.run_tool("execute", {"code": "await tools.demo.echo(text='still')"}).output == "still"


async def _allow(request: Any) -> Any:
    from opencode_cli.session import Decision

    return Decision("once")
