"""``opencode plugins install/uninstall``: who installs into the environment opencode runs from (decided on
real directory layouts), and real installs of a wheel built here, offline, into a fresh virtual environment
made by the test, driven through that environment's own ``opencode``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _venvs import fresh_environment, make_venv, run_in

from opencode_cli import __version__
from opencode_cli.cli.install_cmd import changes, find_installer

PYTHON = "/envs/tools/bin/python"


def layout(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A prefix and a standard-library directory, with ``files`` (relative to the prefix) written."""
    prefix = tmp_path / "prefix"
    stdlib = tmp_path / "base" / "lib" / "python3"
    stdlib.mkdir(parents=True)
    prefix.mkdir()
    for name, text in (files or {}).items():
        (prefix / name).write_text(text)
    return prefix, stdlib


def test_pipx_gets_pipx_inject(tmp_path: Path) -> None:
    metadata = {"main_package": {"package": "opencode-tools", "package_or_url": "opencode-tools"}}
    prefix, stdlib = layout(tmp_path, {"pipx_metadata.json": json.dumps(metadata)})
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, None, has_pip=True)
    assert found.kind == "pipx" and found.tool == "opencode-tools"
    assert found.advice("install", ["llm-tools-sqlite", "x>=1"]).endswith(
        "\n    pipx inject opencode-tools llm-tools-sqlite 'x>=1'"
    )
    assert found.advice("uninstall", ["llm-tools-sqlite"]).endswith(
        "\n    pipx uninject opencode-tools llm-tools-sqlite"
    )


def test_uv_tool_keeps_what_it_was_installed_with(tmp_path: Path) -> None:
    receipt = textwrap.dedent("""\
        [tool]
        requirements = [
            { name = "opencode-tools" },
            { name = "llm-tools-sqlite", specifier = ">=0.1" },
        ]
        entrypoints = [
            { name = "opencode", install-path = "/home/u/.local/bin/opencode", from = "opencode-tools" },
        ]
    """)
    prefix, stdlib = layout(tmp_path, {"uv-receipt.toml": receipt})
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, "/usr/bin/uv", has_pip=False)
    assert (found.kind, found.tool, found.withs) == ("uv-tool", "opencode-tools", ("llm-tools-sqlite>=0.1",))
    assert found.advice("install", ["llm-tools-simpleeval"]).endswith(
        "\n    uv tool install opencode-tools --with 'llm-tools-sqlite>=0.1' --with llm-tools-simpleeval"
    )
    assert found.advice("uninstall", ["LLM_Tools_SQLite"]).endswith("\n    uv tool install opencode-tools")


def test_a_broken_receipt_still_names_the_tool(tmp_path: Path) -> None:
    prefix, stdlib = layout(tmp_path, {"uv-receipt.toml": "not = [toml"})
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, None, has_pip=True)
    assert (found.kind, found.tool, found.withs) == ("uv-tool", "prefix", ())


def test_a_system_managed_python_is_left_to_the_system(tmp_path: Path) -> None:
    prefix, stdlib = layout(tmp_path)
    (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use apt\n")
    found = find_installer(prefix, prefix, stdlib, PYTHON, None, has_pip=True)
    assert found.kind == "system" and found.marker == stdlib / "EXTERNALLY-MANAGED"
    advice = found.advice("install", ["llm-tools-sqlite"])
    assert f"PEP 668: {stdlib / 'EXTERNALLY-MANAGED'}" in advice
    assert advice.endswith("\n    pipx install opencode-tools && pipx inject opencode-tools llm-tools-sqlite")
    with_uv = find_installer(prefix, prefix, stdlib, PYTHON, "/usr/bin/uv", has_pip=True)
    assert with_uv.advice("install", ["a", "b"]).endswith(
        "\n    uv tool install opencode-tools --with a --with b"
    )
    assert "package manager" in found.advice("uninstall", ["a"])


def test_a_virtual_environment_over_a_managed_python_is_ours(tmp_path: Path) -> None:
    """The marker is the base Python's; a virtual environment made from it installs with its own pip."""
    prefix, stdlib = layout(tmp_path)
    (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n")
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, None, has_pip=True)
    assert found.kind == "pip"
    assert found.command("install", ["x"]) == [
        PYTHON,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "x",
    ]
    assert found.command("uninstall", ["x"])[:5] == [PYTHON, "-m", "pip", "uninstall", "--yes"]


def test_uv_on_path_installs_with_uv_pip_for_this_interpreter(tmp_path: Path) -> None:
    prefix, stdlib = layout(tmp_path)
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, "/usr/bin/uv", has_pip=False)
    assert found.command("install", ["x"]) == ["/usr/bin/uv", "pip", "install", "--python", PYTHON, "x"]
    assert found.command("uninstall", ["x"]) == ["/usr/bin/uv", "pip", "uninstall", "--python", PYTHON, "x"]


def test_no_pip_and_no_uv_says_how_to_get_pip(tmp_path: Path) -> None:
    prefix, stdlib = layout(tmp_path)
    found = find_installer(prefix, tmp_path / "base", stdlib, PYTHON, None, has_pip=False)
    assert found.kind == "no-pip" and found.advice("install", ["x"]).endswith(f"{PYTHON} -m ensurepip")


def test_changes_between_two_views() -> None:
    def record(name: str, version: str | None, tools: list[str], status: str = "loaded", error=None) -> dict:
        return {"name": name, "version": version, "tools": tools, "status": status, "error": error}

    before = [record("core", "0.1.0", ["invalid"]), record("llm", "0.1.0", []), record("old", "1", ["o"])]
    after = [
        record("core", "0.1.0", ["invalid"]),
        record("llm", "0.1.0", ["simple_eval"]),
        record("demo", "1.2", ["demo_a", "demo_b"]),
        record("future", "3", [], "failed", "it requires opencode-tools>=9"),
    ]
    assert changes(before, after) == [
        "plugin llm: new tools simple_eval",
        "added plugin demo 1.2: tools demo_a, demo_b",
        "added plugin future 3, which failed to load: it requires opencode-tools>=9",
        "removed plugin old 1: tools o",
    ]
    assert changes(after, after) == []


# -- the command itself ------------------------------------------------------------------------------------


def test_usage_errors_exit_2(run_cli) -> None:
    result = run_cli("plugins", "install", "--", "--upgrade")
    assert result.exit_code == 2 and "options for pip are not passed through" in result.output
    result = run_cli("plugins", "uninstall", "opencode-tools")
    assert result.exit_code == 2 and "not uninstalling opencode-tools itself" in result.output
    assert "Traceback" not in result.output


@pytest.fixture
def fresh(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A fresh virtual environment, a project and an environment to run that venv's ``opencode`` in: a
    private home, no uv on ``PATH`` (its own pip installs), no index, plugins looked for in the venv only."""
    return fresh_environment(tmp_path, make_venv(tmp_path / "venv"))


@pytest.fixture
def fresh_without_simpleeval(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """:func:`fresh`, where llm-tools-simpleeval (and simpleeval) are not installed yet."""
    return fresh_environment(
        tmp_path, make_venv(tmp_path / "venv", hide=("llm_tools_simpleeval", "simpleeval"))
    )


def build_wheel(folder: Path, name: str, requires: str) -> Path:
    """A small real plugin (one tool), built into a wheel offline."""
    module = f"opencode_{name}"
    source = folder / name
    (source / module).mkdir(parents=True)
    (source / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [build-system]
            requires = ["setuptools>=68"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "opencode-{name}"
            version = "1.0"
            dependencies = ["{requires}"]

            [project.entry-points.opencode]
            {name} = "{module}"
        """)
    )
    (source / module / "__init__.py").write_text(
        textwrap.dedent(f'''\
            from opencode_cli import hookimpl, tool


            @tool
            def {name}_say(text: str) -> str:
                """Say the text back."""
                return f"{name} says {{text}}"


            @hookimpl
            def register_tools(register):
                register({name}_say)
        ''')
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(folder / "dist"), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = (folder / "dist").glob(f"opencode_{name}-1.0-*.whl")
    return wheel


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_install_lists_what_came_then_uninstall_takes_it_away(fresh, tmp_path: Path) -> None:
    python, project, env = fresh
    wheel = build_wheel(tmp_path / "build", "hello", f"opencode-tools>={__version__}")

    installed = run_in(python, project, "plugins", "install", str(wheel), env=env)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.splitlines() == ["added plugin hello 1.0: tools hello_say"]
    assert "Successfully installed opencode-hello-1.0" in installed.stderr  # pip's output, on stderr
    listed = run_in(python, project, "tools", "list", "--json", env=env)
    tools = {t["id"]: t for t in json.loads(listed.stdout)["tools"]}
    assert tools["hello_say"]["source"] == {"kind": "plugin", "name": "hello", "version": "1.0"}
    ran = run_in(python, project, "tools", "run", "hello_say", "text=hi", env=env)
    assert ran.stdout.strip() == "hello says hi"

    removed = run_in(python, project, "plugins", "uninstall", "opencode-hello", env=env)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.splitlines() == ["removed plugin hello 1.0: tools hello_say"]
    listed = run_in(python, project, "tools", "list", "--json", env=env)
    assert "hello_say" not in {t["id"] for t in json.loads(listed.stdout)["tools"]}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_failed_install_exits_4_without_a_traceback(fresh, tmp_path: Path) -> None:
    """A plugin that asks for an opencode-tools nobody has: pip cannot satisfy it (offline), says why on
    stderr, and the command exits 4 with nothing added."""
    python, project, env = fresh
    wheel = build_wheel(tmp_path / "build", "future", "opencode-tools>=99")
    done = run_in(python, project, "plugins", "install", str(wheel), env=env)
    assert done.returncode == 4
    assert done.stdout == ""
    assert "opencode-tools>=99" in done.stderr and "failed (exit 1); nothing more was done" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_pipx_environment_gets_the_command_and_exit_3(tmp_path: Path) -> None:
    """The real decision of a real process: a virtual environment that pipx made (its metadata file)."""
    python = make_venv(tmp_path / "opencode-tools")
    metadata = {"main_package": {"package": "opencode-tools"}}
    (tmp_path / "opencode-tools" / "pipx_metadata.json").write_text(json.dumps(metadata))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = run_in(python, project, "plugins", "install", "llm-tools-sqlite", env=env)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.strip().endswith("pipx inject opencode-tools llm-tools-sqlite")
    assert "Traceback" not in done.stderr


# -- one install from the index --------------------------------------------------------------------------


def index_reachable() -> str | None:
    """Why the package index cannot be reached (``None`` when it can)."""
    import urllib.request

    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/llm-tools-simpleeval/", timeout=15) as response:
            response.read(1)
    except OSError as error:
        return f"the package index ({index}) is not reachable: {error}"
    return None


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_an_llm_tool_plugin_from_the_index(fresh_without_simpleeval) -> None:
    """``plugins install llm-tools-simpleeval`` as a user would run it (from the index; llm itself is there
    already). Its tool is listed when the llm bridge is among the built-in plugins."""
    unreachable = index_reachable()
    if unreachable:
        pytest.skip(unreachable)
    from opencode_cli.builtin import PLUGINS

    python, project, env = fresh_without_simpleeval
    env = {key: value for key, value in env.items() if key != "PIP_NO_INDEX"}
    done = run_in(python, project, "plugins", "install", "llm-tools-simpleeval", env=env)
    assert done.returncode == 0, done.stderr
    assert "Successfully installed" in done.stderr
    if "llm" in [entry.name for entry in PLUGINS]:
        assert "plugin llm: new tools simple_eval" in done.stdout.splitlines()
    else:
        assert done.stdout.startswith("no plugin or tool came with it")
