"""The docs stay in step with the code, in datasette's manner.

Every hook in ``hookspecs.py`` needs a ``## hook_name(arguments)`` heading in ``docs/plugins.md`` (with
the spec's arguments) and a ``test_hook_<name>`` test under ``tests/``. The Python examples of
``docs/tools.md`` and ``docs/plugins.md`` are run: tool files are loaded and called, hook examples are
registered as plugins, and the test examples are run with pytest as a plugin author would. The
``opencode`` commands of every ``sh`` block of README.md and of every page under docs/ are run as real
processes.
"""

from __future__ import annotations

import inspect
import os
import re
import textwrap
import types
from importlib.metadata import distributions
from pathlib import Path
from typing import NamedTuple

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
    for page in re.findall(r"\]\((docs/[\w./-]+\.md)(?:#[\w-]*)?\)", readme):
        assert (ROOT / page).is_file(), f"README.md links to {page}, which does not exist"


def test_every_page_is_in_the_sites_navigation() -> None:
    """mkdocs.yml's nav lists every page of docs/ (``mkdocs build --strict`` refuses one left out too)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    listed = set(re.findall(r":\s*([\w./-]+\.md)\s*$", nav, re.MULTILINE))
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert sorted(pages - listed) == [] and sorted(listed - pages) == []


def test_the_old_names_of_merged_pages_redirect() -> None:
    """One page per topic: a page merged into another is gone, its name redirects (mkdocs-redirects) to
    the page that has its content, and no page, README.md or docstring links the old name."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block = config.split("redirect_maps:\n", 1)[1]
    redirects = dict(re.findall(r"^ {8}([\w./-]+\.md): ([\w./-]+\.md)$", block, re.MULTILINE))
    assert {"sandboxing.md", "mcp-servers.md", "serve-over-mcp.md", "library-basics.md"} <= set(redirects)
    for old, new in redirects.items():
        assert not (DOCS / old).exists() and (DOCS / new).is_file(), (old, new)
    linking = re.compile(r"(?<![\w-])(?:docs/)?(" + "|".join(map(re.escape, redirects)) + r")\b")
    texts = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "opencode_cli").rglob("*.py")]
    found = [f"{p.relative_to(ROOT)}: {m[1]}" for p in texts for m in linking.finditer(p.read_text())]
    assert found == []


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
    records = [record for record in project.generation.plugin_records() if record.kind == "file"]
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
    assert run("tally_add", name="cups", amount=2).output == "cups: 2"
    assert run("tally_show").output == "cups: 2"  # the toolbox set up once, shared by its tools
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
        [record] = [r for r in project.generation.plugin_records() if r.name == f"example-{number}"]
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


# -- the shell examples of README.md and docs/*.md ------------------------------------------------------

SHELL_FENCE = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.MULTILINE | re.DOTALL)

#: The examples that are not run, each with why: they need a model server, the network or an installed
#: package, or they run until stopped. A key is the start of the example's first line as written (comment
#: included), long enough to name one example.
NOT_RUN = {
    "opencode tools watch --model gpt-5": "runs until Ctrl-C",
    "opencode tools watch     ": "runs until Ctrl-C",
    'opencode run "Why does the test': "needs a model server",
    'opencode run "Plan the refactor"': "needs a model server",
    "opencode plugins install llm-tools-simpleeval": "installs into the environment opencode runs from",
    'opencode run "Now fix it"': "needs a model server",
    'opencode run "List the TODOs"': "needs a model server",
    'opencode run "And the other one"': "needs a model server (and a session to continue)",
    'opencode run "What is wrong here?"': "needs a model server (and the files it attaches)",
    "opencode mcp add files -- npx": "npx downloads the server from the network",
    "opencode mcp add docs --url https://example.com/mcp": "a server on the network",
    "opencode mcp list                     # connected": "needs the two servers above",
    "opencode tools list                   # … files_read_file": "needs the files server above",
    "opencode tools run files_list_directory": "needs the files server above",
    "opencode tools run execute code='found = await": "needs the files server above",
    "opencode mcp serve    ": "serves until its client leaves",
    "opencode mcp serve --transport http          #": "serves until stopped",
    "opencode mcp serve --transport http --host 0.0.0.0": "serves until stopped",
    "opencode mcp auth tracker": "needs the tracker server and a person signing in with a browser",
    "opencode mcp logout tracker": "needs the tracker server above",
    "opencode mcp serve --agent plan": "serves until its client leaves",
    "opencode plugins list                # weather 0.1.0": "needs the example package (pip install .)",
    "opencode tools run weather city=Oslo # Oslo: sunny": "needs the example package (pip install .)",
    "opencode tools run weather_greet name=Ada": "needs the package plugins new wrote, installed",
    "opencode tools run glob pattern='*.md'     # one execute_tool span": "needs Jaeger on localhost:4318",
}


class ShellExample(NamedTuple):
    doc: str
    line: int
    written: str  # the first line as written, comment included
    command: str  # as written, without the trailing comment
    env: dict[str, str]  # what `export NAME=VALUE` lines before it in its block set
    exit_code: int  # 0, or what a comment `# exit N` states


def shell_examples() -> list[ShellExample]:
    """Every command of every ``sh`` block of README.md and docs/*.md, in order."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:  # every page of the site
        doc = path.name if path.parent == ROOT else f"docs/{path.relative_to(DOCS).as_posix()}"
        found.extend(examples_in(path.read_text(encoding="utf-8"), doc))
    return found


def examples_in(text: str, doc: str) -> list[ShellExample]:
    """The commands of the ``sh`` blocks of one document: a command whose quote goes on is read to its
    end, ``export NAME=VALUE`` applies to the rest of its block, a comment ``# exit N`` states the code."""
    import shlex

    found = []
    for match in SHELL_FENCE.finditer(text):
        first = text.count("\n", 0, match.start(1)) + 1
        env: dict[str, str] = {}
        pending, start = "", 0
        for number, line in enumerate(match.group(1).splitlines(), first):
            pending, start = (f"{pending}\n{line}", start) if pending else (line, number)
            try:
                words = shlex.split(pending, comments=True)
            except ValueError:  # a quote goes on to the next line
                continue
            source, pending = pending, ""
            if not words:
                continue
            if words[0] == "export":
                env.update(word.split("=", 1) for word in words[1:])  # type: ignore[misc]
                continue
            comment = source[len(_without_comment(source, words)) :]
            stated = re.search(r"\bexit (\d+)\b", comment)
            command = _without_comment(source, words)
            written = source.splitlines()[0]
            found.append(
                ShellExample(doc, start, written, command, dict(env), int(stated[1]) if stated else 0)
            )
    return found


def _without_comment(source: str, words: list[str]) -> str:
    """``source`` up to its comment: the shortest prefix that parses to the same words."""
    import shlex

    for end in range(1, len(source) + 1):
        if source[end - 1] != "#":
            continue
        try:
            if shlex.split(source[: end - 1], comments=True) == words:
                return source[: end - 1].rstrip()
        except ValueError:  # the `#` is inside a quote
            continue
    return source.rstrip()


def not_run(example: ShellExample) -> bool:
    """Whether :data:`NOT_RUN` leaves the example out."""
    return any(example.written.startswith(key) for key in NOT_RUN)


def opencode_commands(example: ShellExample) -> list[tuple[dict[str, str], list[str]]]:
    """The ``opencode`` commands of an example (``A && B`` is two), each with the variables set before it
    on its line (``NAME=VALUE opencode …``); other commands (pip, python) are not this test's."""
    import shlex

    commands = []
    for part in example.command.split(" && "):
        words = shlex.split(part)
        env = {}
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words[:1] == ["opencode"]:
            commands.append((env, words[1:]))
    return commands


APP_PY = "import os\n\n\ndef main() -> str:\n    return os.getcwd()\n"


def docs_project(folder: Path) -> dict[str, str]:
    """A project the examples run in (a git repository with this README and a src/app.py) and an
    environment with a private home; returns the environment."""
    import shutil
    import subprocess
    import sys

    project = folder / "project"
    (project / "src").mkdir(parents=True)
    shutil.copy2(ROOT / "README.md", project / "README.md")
    (project / "src" / "app.py").write_text(APP_PY)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    home = folder / "home"
    home.mkdir()
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_PLUGIN_PATH": "",
        # as in an activated environment: the language servers installed with the test extra are found
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


DOCUMENTS = sorted({example.doc for example in shell_examples()})

#: Documents whose examples use packages installed with the test extra (llm's tool plugins): they run
#: with the installed entry points seen, and with their ``# name.py`` Python blocks written in the project.
SEES_INSTALLED = {"docs/ecosystems.md"}


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCUMENTS)
def test_the_shell_examples_run(doc: str, tmp_path: Path) -> None:
    """Each ``opencode`` command of the document's ``sh`` blocks, in order, in one project, as a real
    process: it exits 0, or with the code its comment states (``# exit 2``). :data:`NOT_RUN` says which
    are not run, and why."""
    import subprocess
    import sys

    env = docs_project(tmp_path)
    if doc in SEES_INSTALLED:
        del env["OPENCODE_PLUGIN_PATH"]
        for path, code in python_blocks(doc.removeprefix("docs/")):
            if path is not None:
                (tmp_path / "project" / path).write_text(code, encoding="utf-8")
    script = Path(sys.executable).parent / "opencode"
    failures = []
    ran = 0
    for example in shell_examples():
        if example.doc != doc or not_run(example):
            continue
        for extra, args in opencode_commands(example):
            done = subprocess.run(
                [str(script), *args], cwd=tmp_path / "project", env={**env, **example.env, **extra},
                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
            )  # fmt: skip
            ran += 1
            if done.returncode != example.exit_code:
                failures.append(
                    f"{example.doc}:{example.line}: opencode {' '.join(args)}\n"
                    f"  exit {done.returncode} (the doc says {example.exit_code}): "
                    + done.stderr.strip()[-600:]
                )
    assert not failures, "\n".join(failures)
    assert ran or doc not in ("README.md", "docs/tools.md")


def test_every_example_not_run_names_one_example() -> None:
    examples = shell_examples()
    for key in NOT_RUN:
        assert len([e for e in examples if e.written.startswith(key)]) == 1, key


# -- what docs/library.md promises about wrong calls ------------------------------------------------------


def test_library_doc_on_wrong_calls_is_what_dispatch_does(make_project) -> None:
    """A misspelt name and non-JSON arguments: rerouted to ``invalid``, completed; failed validation:
    an error part. The doc says so, and dispatch does it."""
    import asyncio

    from opencode_cli import ToolCall

    text = " ".join((DOCS / "library.md").read_text(encoding="utf-8").split())
    assert (
        "a misspelt tool name and arguments that are not JSON are rerouted to the `invalid` tool: the part "
        'has `tool == "invalid"` (`requested` keeps the name the model wrote), `status == "completed"`'
    ) in text
    assert 'fail the tool\'s validation come back with `status == "error"`' in text

    async def main() -> list:
        async with make_project() as project, project.session() as session:
            calls = [("raed", '{"filePath": "x"}'), ("read", "{not json"), ("read", '{"filePath": 3}')]
            return [await session.dispatch(ToolCall(name=name, arguments=args)) for name, args in calls]

    misspelt, not_json, invalid = asyncio.run(main())
    for part, written in ((misspelt, "raed"), (not_json, "read")):
        assert (part.tool, part.requested, part.status) == ("invalid", written, "completed")
        assert part.text.startswith("The arguments provided to the tool are invalid: ")
    assert (invalid.tool, invalid.status) == ("read", "error")
    assert invalid.text.startswith("The read tool was called with invalid arguments: ")


def test_shell_examples_are_read_as_a_shell_would() -> None:
    text = (
        "Intro.\n\n```sh\nexport MODE=1\nopencode tools list   # all of them\n\n"
        "opencode tools run bash command='echo a # not a comment\necho b'\n"
        "opencode tools run nope          # exit 2: no such tool\n```\n\n```python\nopencode = 1\n```\n"
    )
    examples = examples_in(text, "doc.md")
    assert [(e.line, e.command, e.env, e.exit_code) for e in examples] == [
        (5, "opencode tools list", {"MODE": "1"}, 0),
        (7, "opencode tools run bash command='echo a # not a comment\necho b'", {"MODE": "1"}, 0),
        (9, "opencode tools run nope", {"MODE": "1"}, 2),
    ]
    assert examples[0].written == "opencode tools list   # all of them"
    assert opencode_commands(examples[1]) == [
        ({}, ["tools", "run", "bash", "command=echo a # not a comment\necho b"])
    ]
    chained = ShellExample("doc.md", 1, "", "pip install . && X=1 opencode plugins list", {}, 0)
    assert opencode_commands(chained) == [({"X": "1"}, ["plugins", "list"])]


# -- the hook reference renders its cross-references --------------------------------------------------------

#: A Sphinx role left as written, or reStructuredText's literal-block marker: neither is Markdown.
RAW_ROLE = re.compile(r":(?:py:)?(?:class|func|data|mod|meth|attr|exc|obj|const):`|\S::$", re.MULTILINE)
#: Targets of hookspecs.py's roles that the site has no part for: shown as code, not as links.
NOT_ON_THE_SITE = {"opencode_cli.hookimpl", "opencode_cli.tools"}


def _roles_module() -> types.ModuleType:
    import importlib.util

    pytest.importorskip("griffe", reason="the docs extra (mkdocstrings, griffe) is not installed")

    spec = importlib.util.spec_from_file_location("docs_build_roles", DOCS / "_build" / "roles.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hook_page_docstrings() -> dict[str, str]:
    """The docstrings docs/hooks.md shows (its ``::: path`` objects, and the members of hookspecs), by
    path, as the site's mkdocstrings handler hands them to Markdown: loaded by griffe with the extension
    mkdocs.yml names, docs/_build/roles.py."""
    griffe = pytest.importorskip("griffe", reason="the docs extra (mkdocstrings, griffe) is not installed")
    assert "extensions: [docs/_build/roles.py]" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    extensions = griffe.load_extensions(str(DOCS / "_build" / "roles.py"))
    loader = griffe.GriffeLoader(extensions=extensions, search_paths=[str(ROOT)])
    package = loader.load("opencode_cli")
    loader.resolve_aliases(implicit=False, external=False)
    shown = re.findall(r"^::: ([\w.]+)", (DOCS / "hooks.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert "opencode_cli.hookspecs" in shown
    objects = {path: package[path.removeprefix("opencode_cli.")] for path in shown}
    objects |= {
        member.path: member
        for member in objects["opencode_cli.hookspecs"].members.values()
        if not member.is_alias and member.docstring
    }
    return {path: obj.docstring.value for path, obj in objects.items() if obj.docstring}


def test_the_hook_reference_shows_no_raw_role() -> None:
    docstrings = hook_page_docstrings()
    assert len(docstrings) > len(HOOKS)
    raw = {path: RAW_ROLE.findall(text) for path, text in docstrings.items() if RAW_ROLE.search(text)}
    assert raw == {}


def test_the_hooks_cross_references_lead_to_the_page() -> None:
    """Each role of hookspecs.py names a hook or an object docs/hooks.md shows, so that it is a link."""
    docstrings = hook_page_docstrings()
    on_page = set(docstrings) | set(
        re.findall(r"^::: ([\w.]+)", (DOCS / "hooks.md").read_text(encoding="utf-8"), re.MULTILINE)
    )
    hookspecs_text = [text for path, text in docstrings.items() if path.startswith("opencode_cli.hookspecs")]
    reference = re.compile(r'<autoref identifier="([^"]+)"')
    targets = {target for text in hookspecs_text for target in reference.findall(text)}
    assert {f"opencode_cli.hookspecs.{name}" for name in ("tool_execute", "tool_execute_before")} <= targets
    missing = sorted(targets - on_page - NOT_ON_THE_SITE)
    assert missing == [], f"add '::: NAME' to 'What the hooks are given' of docs/hooks.md for {missing}"


def test_roles_become_references() -> None:
    roles = _roles_module()
    text = "Uses :func:`tool_execute` and :class:`~opencode_cli.plugins.Plugins` (:py:meth:`a.b()`) below::\n"
    assert roles.markdown_roles(text, lambda name: f"pkg.{name}" if "." not in name else name) == (
        'Uses <autoref identifier="pkg.tool_execute" optional><code>tool_execute</code></autoref> and '
        '<autoref identifier="opencode_cli.plugins.Plugins" optional><code>Plugins</code></autoref> '
        '(<autoref identifier="a.b" optional><code>a.b</code></autoref>) below:\n'
    )


# -- what docs/architecture.md shows of a context ---------------------------------------------------------


def test_a_context_built_as_the_architecture_doc_shows_runs_a_tool(project_dir: Path) -> None:
    """``ToolContext(session=s)`` with nothing else, as docs/architecture.md builds it: every field is
    the session's or its project's, the read's permission ask goes to the session's prompt."""
    import asyncio

    (code,) = [code for _, code in python_blocks("architecture.md") if "ToolContext(session=" in code]
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/architecture.md", "exec"), namespace)
    (project_dir / "notes.txt").write_text("written by hand\n", encoding="utf-8")
    output = asyncio.run(namespace["read_by_hand"](str(project_dir), "notes.txt"))  # type: ignore[operator]
    assert "1: written by hand" in output
