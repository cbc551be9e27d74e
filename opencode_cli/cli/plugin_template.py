"""The package ``opencode plugins new NAME`` writes: a plugin that installs and passes its own tests as
written (``pip install -e NAME && pytest NAME``), the starting point the docs point plugin authors to.

``__NAME__`` is the plugin's name (the entry point's, a Python identifier), ``__DIST__`` the
distribution's (``opencode-NAME``), ``__REQUIRES__`` the series of opencode-tools it is built for.
"""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "__DIST__"
version = "0.1.0"
description = "opencode tools: __NAME__."
readme = "README.md"
requires-python = ">=3.11"
# The opencode-tools (the plugin API) this plugin is built for: pip checks it when installing, opencode
# when loading (a plugin built for another series is listed as failed, naming both versions).
dependencies = ["opencode-tools__REQUIRES__"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The entry point's name is the plugin's name: `opencode plugins list`, `opencode -p no:__NAME__`,
# `[plugins] disabled = ["__NAME__"]`. Its value is the module holding the hooks.
[project.entry-points.opencode]
__NAME__ = "opencode___NAME__"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

README = """\
# __DIST__

An [opencode-tools](https://pypi.org/project/opencode-tools/) plugin, written by
`opencode plugins new __NAME__`: make it yours.

It registers a function tool, `__NAME___greet`, and a toolbox of two tools sharing their state,
`__NAME___count_add` and `__NAME___count_show`.

```sh
pip install -e .              # editable: an edit takes effect at the next command
pytest                        # the tests, on opencode's test kit (opencode_cli.testing)
opencode plugins list         # __NAME__ 0.1.0 … loaded
opencode tools run __NAME___greet name=Ada
```

- `src/opencode___NAME__/__init__.py`: the hooks (`register_tools`); keep it cheap to import, as
  every `opencode` command loads it.
- `src/opencode___NAME__/tools.py`: the tools. A tool's docstring is what the model reads; its typed
  parameters, with their `Field(description=...)`, are the JSON Schema the model fills in.
- `tests/`: the tests, with the fixtures of `opencode_cli.testing` (`run_tool`, `opencode_tmp_project`,
  `permission_replies`, …).

Import only the plugin API: the names of `opencode_cli.plugin` (also exported by `opencode_cli`) and the
test kit `opencode_cli.testing`; the rest of `opencode_cli` may change in any release. The dependency on
`opencode-tools__REQUIRES__` in `pyproject.toml` is the series of the plugin API this plugin is built for.
"""

INIT = '''\
"""The __NAME__ plugin for opencode: the hooks it implements (opencode finds it by the entry point
in pyproject.toml)."""

from opencode_cli.plugin import hookimpl


@hookimpl
def register_tools(register):
    """Contribute the tools (imported here, when tools are built, not at every start)."""
    from .tools import Counter, __NAME___greet

    register(__NAME___greet)
    register(Counter)  # each project gets its own instance: __NAME___count_add, __NAME___count_show
'''

TOOLS = '''\
"""The tools of the __NAME__ plugin: a function tool and a toolbox."""

from opencode_cli.plugin import Field, ToolContext, Toolbox, tool


@tool
def __NAME___greet(
    ctx: ToolContext,
    name: str = Field(description="Who to greet."),
    shout: bool = Field(default=False, description="Greet in capitals."),
) -> str:
    """Greet someone by name.

    Tell the model here what the tool does, when to use it and what it gives back.
    """
    ctx.metadata(title=f"greeting {name}")  # live progress, shown by a host while the call runs
    text = f"Hello, {name}!"
    return text.upper() if shout else text


class Counter(Toolbox):
    """Named counters, kept while the project is open. A toolbox's public methods are its tools; its
    setup runs before the first call of any of them, its teardown when the project closes."""

    prefix = "__NAME___count"

    def setup(self) -> None:
        self.counts: dict[str, int] = {}

    def teardown(self) -> None:
        self.counts.clear()

    def add(
        self,
        counter: str = Field(description="The counter's name."),
        amount: int = Field(default=1, ge=1, description="How much to add (1 or more)."),
    ) -> str:
        """Add to a named counter and say its new value."""
        self.counts[counter] = self.counts.get(counter, 0) + amount
        return f"{counter}: {self.counts[counter]}"

    def show(self) -> str:
        """Every counter and its value."""
        lines = [f"{counter}: {value}" for counter, value in sorted(self.counts.items())]
        return "\\n".join(lines) or "no counters yet"
'''

CONFTEST = '''\
import opencode___NAME__
import pytest


@pytest.fixture
def opencode_plugins():
    """The plugins the test kit's projects (and so `run_tool`) load."""
    return [opencode___NAME__]
'''

TESTS = '''\
"""Tests on opencode's test kit: each test gets a throwaway project, and `run_tool` runs a call as a model's
would go (hooks, argument validation, the tool, truncation)."""

import pytest

from opencode_cli.plugin import InvalidArgumentsError


def test_greet(run_tool):
    assert run_tool("__NAME___greet", name="Ada").output == "Hello, Ada!"
    assert run_tool("__NAME___greet", name="Ada", shout=True).output == "HELLO, ADA!"
    assert run_tool.progress[-1].title == "greeting Ada"


def test_the_model_is_told_what_is_missing(run_tool):
    with pytest.raises(InvalidArgumentsError, match="__NAME___greet tool was called with invalid arguments"):
        run_tool("__NAME___greet")


def test_the_model_reads_the_docstring(run_tool):
    assert run_tool.definition("__NAME___greet").description.startswith("Greet someone by name.")


def test_counters_are_kept_between_calls(run_tool):
    assert run_tool("__NAME___count_show").output == "no counters yet"
    run_tool("__NAME___count_add", counter="apples", amount=2)
    assert run_tool("__NAME___count_add", counter="apples").output == "apples: 3"
    assert run_tool("__NAME___count_show").output == "apples: 3"


def test_installed_under_its_entry_point(make_opencode_project):
    """opencode finds the installed package by its entry point (fails until `pip install -e .`)."""
    project = make_opencode_project(autoload=True)
    source = project.registry.entries["__NAME___greet"].source
    assert (source.kind, source.name) == ("plugin", "__NAME__")
'''

#: The files, by path inside the package's directory (``{module}`` is ``opencode_NAME``).
FILES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "src/{module}/__init__.py": INIT,
    "src/{module}/tools.py": TOOLS,
    "tests/conftest.py": CONFTEST,
    "tests/test___NAME__.py": TESTS,
}


def render(name: str, requires: str) -> dict[str, str]:
    """The package's files for plugin ``name``, path → text."""

    def fill(text: str) -> str:
        dist = "opencode-" + name.replace("_", "-")
        return text.replace("__DIST__", dist).replace("__REQUIRES__", requires).replace("__NAME__", name)

    module = f"opencode_{name}"
    return {fill(path.format(module=module)): fill(text) for path, text in FILES.items()}
