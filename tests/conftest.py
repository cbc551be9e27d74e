"""Shared fixtures: an isolated environment (HOME and XDG dirs inside ``tmp_path``) and a project factory."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from opencode_cli.project import Project

#: Set (to anything) to run the tests marked ``slow`` too: ``.ci/run`` does. Without it they are deselected,
#: unless a ``-m`` expression chooses for itself (``python -m pytest -m slow`` runs just them).
SLOW_TESTS = "OPENCODE_TEST_SLOW"


#: Entry-point plugins are looked for only where a test installed them (``OPENCODE_PLUGIN_PATH``; empty:
#: nowhere), so a developer's own plugin in the suite's environment never shows up in a listing. Set for the
#: suite's own process (and so every process it starts with ``os.environ``) and in the ``env``/``cli_env``
#: fixtures; a test that installs a plugin sets the variable to the directory it installed into.
PLUGIN_PATH = "OPENCODE_PLUGIN_PATH"
os.environ[PLUGIN_PATH] = ""

#: The suite's projects are its own: their tool files, MCP servers and rules take effect (workspace trust,
#: :mod:`opencode_cli.trust`). Set for the suite's process and in the ``env``/``cli_env`` fixtures; the
#: tests of trust itself (``tests/trust``) take it away to see the untrusted default.
TRUST = "OPENCODE_TRUST"
os.environ[TRUST] = "1"

#: Fixtures that may install software on first use (npm packages into the test cache): a test using one
#: gets :data:`INSTALL_TIMEOUT` seconds instead of the default ``timeout`` of pyproject.toml. Modules that
#: build virtual environments or wheels say so themselves with ``pytestmark = pytest.mark.timeout(...)``.
INSTALLING_FIXTURES = frozenset({"everything_entry"})
INSTALL_TIMEOUT = 900


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give the tests that may install software a longer timeout; leave the slow end-to-end tests out of a
    plain ``python -m pytest`` (fast feedback)."""
    for item in items:
        installs = INSTALLING_FIXTURES & set(getattr(item, "fixturenames", ()))
        if installs and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(INSTALL_TIMEOUT))
    if os.environ.get(SLOW_TESTS) or config.getoption("markexpr"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def pytest_report_header(config: pytest.Config) -> str:
    if os.environ.get(SLOW_TESTS) or config.getoption("markexpr"):
        return "slow tests: as chosen"
    return f"slow tests: left out (set {SLOW_TESTS}=1 to run them, as .ci/run does)"


@pytest.fixture(autouse=True)
def deliverable_sigint() -> Iterator[None]:
    """Let SIGINT arrive during every test, also when the suite's shell ignores it.

    A shell starts a background job (``python -m pytest &``) with SIGINT ignored, and an ignored signal stays
    ignored across ``exec``: a test that interrupts itself or a child process would wait forever. For the
    test's duration SIGINT raises ``KeyboardInterrupt`` here, and the processes the test starts get the
    default action; the suite's own disposition is restored afterwards.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    ):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


# Two shared cores run the suite: timing-based deadlines would make property tests flaky, never better.
settings.register_profile("opencode", deadline=None)
settings.load_profile("opencode")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake home directory."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path: Path, home: Path) -> dict[str, str]:
    """An environment that keeps HOME and the XDG directories inside ``tmp_path``.

    It has no ``OPENCODE_*`` variables, whatever the outer environment holds, but ``OPENCODE_TRUST=1`` and
    ``OPENCODE_PLUGIN_PATH`` (empty: no installed entry-point plugin is seen). A ``PYTHONPATH`` the tests
    run with is kept, so that the subprocesses run the code under test (a checkout other than the
    installed one).
    """
    kept = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        PLUGIN_PATH: "",
        **kept,
        TRUST: "1",
    }


@pytest.fixture
def global_config_dir(env: dict[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/opencode`` (not created)."""
    return Path(env["XDG_CONFIG_HOME"]) / "opencode"


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A project directory that is its own git worktree root (a ``.git`` directory marks it)."""
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    return path


class Warnings(list[str]):
    """Collects the one-line warnings a :class:`Project` reports."""

    def text(self) -> str:
        return "\n".join(self)


@pytest.fixture
def warnings() -> Warnings:
    return Warnings()


ProjectFactory = Callable[..., Project]


@pytest.fixture
def make_project(project_dir: Path, env: dict[str, str], warnings: Warnings) -> Iterator[ProjectFactory]:
    """Build a :class:`Project` in ``project_dir`` with the isolated ``env``.

    Keyword arguments: ``directory`` (default ``project_dir``), ``extra_env`` (merged into ``env``),
    ``plugins`` and ``autoload_plugins`` (default ``False``). Warnings go to the ``warnings`` fixture.
    Every project made is closed at the end of the test (its services stopped).
    """
    made: list[Project] = []

    def factory(
        directory: Path | None = None,
        *,
        extra_env: dict[str, str] | None = None,
        plugins: list[tuple[str, object]] | None = None,
        autoload_plugins: bool = False,
    ) -> Project:
        project = Project(
            directory or project_dir,
            env={**env, **(extra_env or {})},
            plugins=plugins or [],
            autoload_plugins=autoload_plugins,
            warn=warnings.append,
        )
        made.append(project)
        return project

    yield factory
    for project in made:
        project.close()


@pytest.fixture
def project(make_project: ProjectFactory) -> Project:
    """THE ``project`` of the suite: a :class:`Project` of ``project_dir`` (a git worktree) built by
    ``make_project`` with the isolated ``env``; its warnings go to ``warnings``. A test that needs another
    kind of project gives its fixture another name (``shell_project``, ``plan_project``…), and a project
    directory is ``project_dir`` (or ``cli_env["project"]`` for the CLI)."""
    return make_project()


@pytest.fixture
def tool_context(project: Project) -> Callable[..., Any]:
    """``tool_context(tool="probe", **changes)``: the context of a call made in a real session of
    ``project`` (as :meth:`~opencode_cli.Session.context` gives it), with ``changes`` set on it, for a
    test that runs a tool's wrap or its function itself."""
    session = project.session()

    def make(tool: str = "probe", **changes: Any) -> Any:
        ctx = session.context(tool, None, changes.pop("abort", None))
        for key, value in changes.items():
            setattr(ctx, key, value)
        return ctx

    return make


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path`` (parents created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def write_file() -> Callable[[Path, str], Path]:
    """The :func:`write` helper as a fixture."""
    return write


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """A project directory (a git worktree) and a private home, config and data directory; a ``PYTHONPATH``
    the tests run with is kept (as :func:`env` keeps it), so that the commands run the code under test."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    (project / "README.md").write_text("# Demo\n\nA small project.\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1",
        PLUGIN_PATH: "",
        TRUST: "1",
        "PATH": os.environ.get("PATH", ""),
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
    }
    return {"project": str(project), **env}
