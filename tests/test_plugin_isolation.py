"""The suite sees only the plugins it installs: a developer's own plugin, installed in the same virtual
environment (as docs/plugins.md suggests), does not change what the suite's listing tests see.

A real virtual environment borrows this one's packages (opencode-tools included) and gets a throwaway
plugin distribution installed with pip; the suite's listing tests then run under that environment's
interpreter, in a pytest of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent

PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "opencode-intruder"
version = "0.0.1"

[project.entry-points.opencode]
intruder = "opencode_intruder"

[tool.setuptools]
packages = ["opencode_intruder"]
"""

PLUGIN = '''
from opencode_cli import hookimpl, tool


@tool
def intruder(text: str) -> str:
    """A developer's own tool."""
    return text


@hookimpl
def register_tools(register):
    register(intruder)
'''

#: Listing tests that see every tool or plugin a real process loads.
LISTING_TESTS = [
    "tests/test_plugin_distribution.py::test_plugin_tools_listed_and_described_by_hook",
    "tests/test_plugin_distribution.py::test_installed_plugin_is_listed_with_version_and_status",
    "tests/cli/test_plugin_reports.py::test_a_real_plugin_disabled_and_a_broken_one",
    "tests/cli/test_cli.py::test_real_process_list_and_read",
]


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv's interpreter: this environment's packages, plus the intruder plugin in its own site."""
    root = tmp_path_factory.mktemp("intruded")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    # addsitedir (not a plain path line) so that this environment's editable install is found too
    borrowed = sysconfig.get_paths()["purelib"]
    Path(own, "_borrowed.pth").write_text(f"import site; site.addsitedir({borrowed!r})\n")
    script = venv / "bin" / "opencode"
    script.write_text(f"#!{python}\nfrom opencode_cli.cli import main\nmain()\n")
    script.chmod(0o755)
    source = root / "src"
    (source / "opencode_intruder").mkdir(parents=True)
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "opencode_intruder" / "__init__.py").write_text(PLUGIN)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", own, str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return python


def outside_environment() -> dict[str, str]:
    """This process's environment without the suite's own narrowing of the plugin search."""
    return {key: value for key, value in os.environ.items() if key != "OPENCODE_PLUGIN_PATH"}


def test_the_environment_really_holds_a_plugin(python: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(python), "-m", "opencode_cli", "tools", "list", "--json"],
        cwd=tmp_path, env={**outside_environment(), "HOME": str(tmp_path)},
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tools = {tool["id"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert tools["intruder"]["source"] == {"kind": "plugin", "name": "intruder", "version": "0.0.1"}


def test_the_listing_tests_do_not_see_it(python: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q",
         "--basetemp", str(tmp_path / "basetemp"), *LISTING_TESTS],
        cwd=ROOT, env=outside_environment(),
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=500,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(LISTING_TESTS)} passed" in done.stdout
