"""The docs stay in step with the code, in datasette's manner.

Every hook in ``hookspecs.py`` needs a ``## hook_name(arguments)`` heading in ``docs/plugins.md`` (with
the spec's arguments) and a ``test_hook_<name>`` test under ``tests/``. The Python examples of
``docs/tools.md`` and ``docs/plugins.md`` are run: tool files are loaded and called, hook examples are
registered as plugins, and the test examples are run with pytest as a plugin author would.
"""

from __future__ import annotations

import inspect
import re
import textwrap
import types
from importlib.metadata import distributions
from pathlib import Path

import pytest

from opencode_cli import ToolError, hookspecs
from opencode_cli.registry import ModelRef
from opencode_cli.testing import TempProject, ToolRunner

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOOKS = [
    name for name, value in vars(hookspecs).items() if callable(value) and hasattr(value, "opencode_spec")
]
HEADING = re.compile(r"^## (\w+)\((.*)\)\s*$", re.MULTILINE)
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def hook_headings() -> dict[str, str]:
    """``name -> arguments`` of each ``## name(arguments)`` heading of docs/plugins.md."""
    return dict(HEADING.findall((DOCS / "plugins.md").read_text(encoding="utf-8")))


def python_blocks(name: str) -> list[tuple[str | None, str]]:
    """The Python blocks of a doc as ``(path, code)``; the path is a first line like ``# dir/file.py``."""
    blocks = []
    for match in FENCE.finditer((DOCS / name).read_text(encoding="utf-8")):
        code = match.group(1)
        first = code.splitlines()[0] if code.strip() else ""
        path = first[2:].strip() if re.fullmatch(r"# [\w./-]+\.py", first) else None
        blocks.append((path, code))
    return blocks


def test_the_contract_has_hooks() -> None:
    assert len(HOOKS) >= 4


@pytest.mark.parametrize("hook", HOOKS)
def test_plugin_hooks_are_documented(hook: str) -> None:
    headings = hook_headings()
    arguments = ", ".join(inspect.signature(getattr(hookspecs, hook)).parameters)
    assert hook in headings, f"docs/plugins.md needs a heading '## {hook}({arguments})'"
    assert headings[hook] == arguments, f"the heading of {hook} in docs/plugins.md lists other arguments"


def test_every_hook_heading_names_a_hook() -> None:
    assert sorted(set(hook_headings()) - set(HOOKS)) == []


@pytest.mark.parametrize("hook", HOOKS)
def test_plugin_hooks_have_tests(hook: str) -> None:
    pattern = re.compile(rf"^\s*(async\s+)?def test_hook_{hook}\b", re.MULTILINE)
    found = [
        path for path in (ROOT / "tests").rglob("*.py") if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found, f"no test named test_hook_{hook} under tests/"


def test_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/plugins.md" in readme and "docs/tools.md" in readme


# -- the examples run ----------------------------------------------------------------------------------------


def test_tool_file_examples_load_and_run(
    opencode_tmp_project: TempProject, make_opencode_project, opencode_warnings
):
    files = [
        (path, code) for path, code in python_blocks("tools.md") if path and path.startswith(".opencode/")
    ]
    assert len(files) >= 5
    for path, code in files:
        opencode_tmp_project.write(path, code)
    project = make_opencode_project()
    project.registry.entries  # noqa: B018 - loads the tool files
    records = [record for record in project.plugin_records() if record.kind == "file"]
    assert [(r.name, r.status, r.error) for r in records if r.status != "loaded"] == []
    assert all(record.tools for record in records), "every example file gives at least one tool"
    for record in records:
        for tool_id in record.tools:
            assert (
                project.registry.definition(project.registry.get(tool_id), None).parameters["type"]
                == "object"
            )
    assert opencode_warnings == []

    run = ToolRunner(project)
    assert run("weather", city="Oslo").output == "Oslo: sunny for 1 day(s)"
    assert run("issues_close", number=7).output == "closed #7"
    assert run("issues_label", name="bug").output == "created bug (ededed)"
    assert run("chart", values=[1, 2]).attachments[0].mime == "image/svg+xml"
    with pytest.raises(ToolError, match="Nobody called 'bob' is known"):
        run("lookup", name="bob")
    run.rule("deploy", "ask")
    run.prompt.append("once")
    assert run("deploy", environment="staging", steps=1).output == "deployed to staging"
    assert [(r.permission, r.patterns) for r in run.prompt.requests] == [("deploy", ["staging"])]
    assert run("shout", text="hey").output == "HEY"  # through the service the first call started
    [service] = project.services.statuses()
    assert (service.name, service.state) == ("shout", "running")
    assert run("shout", text="again").output == "AGAIN" and len(project.services.statuses()) == 1
    # the error template quoted in docs/tools.md is the real one
    invalid = run.dispatch("issues", {"query": "x", "limit": 500}).text
    assert " ".join(invalid.split()) in " ".join((DOCS / "tools.md").read_text(encoding="utf-8").split())


def test_hook_examples_register_and_run(
    make_opencode_project, opencode_warnings, opencode_tmp_project
) -> None:
    examples = [code for path, code in python_blocks("plugins.md") if "@hookimpl" in code]
    assert len(examples) >= len(HOOKS)
    opencode_tmp_project.write("notes.txt", "api_key = hunter2\n")
    for number, code in enumerate(examples):
        module = types.ModuleType(f"docs_example_{number}")
        exec(compile(code, f"docs/plugins.md example {number}", "exec"), module.__dict__)
        project = make_opencode_project((f"example-{number}", module))
        project.tools(ModelRef.parse("google/gemini-2.5-pro"))
        [record] = [r for r in project.plugin_records() if r.name == f"example-{number}"]
        assert record.status == "loaded", (record.error, code)
        assert record.hooks, code
        result = ToolRunner(project)("read", filePath="notes.txt")
        assert "hunter2" not in result.output or "tool_execute_after" not in record.hooks
        assert opencode_warnings == [], code


def _kit_args() -> list[str]:
    installed = any(
        ep.group == "pytest11" and ep.value == "opencode_cli.testing"
        for dist in distributions()
        for ep in dist.entry_points
    )
    return [] if installed else ["-p", "opencode_cli.testing"]


def _write_examples(pytester: pytest.Pytester, name: str) -> int:
    tests = 0
    for path, code in python_blocks(name):
        if path and (path.startswith("tests/") or path.startswith("opencode_")):
            target = pytester.path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            assert not target.exists(), f"two examples in docs/{name} are both {path}"
            target.write_text(textwrap.dedent(code), encoding="utf-8")
            tests += len(re.findall(r"^def test_", code, re.MULTILINE))
    return tests


@pytest.mark.parametrize("name", ["plugins.md", "tools.md"])
def test_the_testing_examples_pass(pytester: pytest.Pytester, name: str) -> None:
    tests = _write_examples(pytester, name)
    assert tests >= 1
    pytester.syspathinsert()
    result = pytester.runpytest(*_kit_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=tests)
