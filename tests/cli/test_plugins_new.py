"""``opencode plugins new NAME``: a package that installs and passes its own tests as written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from _venvs import fresh_environment, make_venv, run_in

from opencode_cli import __version__
from opencode_cli.compat import series

pytest_plugins = ["pytester"]


def test_writes_the_package(run_cli, cli_env) -> None:
    result = run_cli("plugins", "new", "weather")
    assert result.exit_code == 0, result.output
    folder = Path(cli_env["project"], "weather")
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "README.md",
        "pyproject.toml",
        "src/opencode_weather/__init__.py",
        "src/opencode_weather/tools.py",
        "tests/conftest.py",
        "tests/test_weather.py",
    ]
    pyproject = (folder / "pyproject.toml").read_text()
    assert 'name = "opencode-weather"' in pyproject
    assert f'dependencies = ["opencode-tools{series(__version__)}"]' in pyproject
    assert '[project.entry-points.opencode]\nweather = "opencode_weather"' in pyproject
    assert "created weather/ (the package opencode-weather)" in result.output
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".weather.")]  # nothing left aside


def test_never_writes_into_an_existing_directory(run_cli, cli_env) -> None:
    existing = Path(cli_env["project"], "weather")
    existing.mkdir()
    result = run_cli("plugins", "new", "weather")
    assert result.exit_code == 2 and "weather already exists; not writing into it" in result.output
    assert list(existing.iterdir()) == []


@pytest.mark.parametrize(("name", "hint"), [("My-Tools", "my_tools"), ("9lives", None), ("a" * 41, None)])
def test_a_bad_name_is_a_usage_error(run_cli, name: str, hint: str | None) -> None:
    result = run_cli("plugins", "new", name)
    assert result.exit_code == 2 and f"{name!r} is not a plugin name" in result.output
    assert (f"(e.g. {hint})" in result.output) == (hint is not None)
    assert "Traceback" not in result.output


def test_the_series_a_release_keeps() -> None:
    assert series("0.1.0") == ">=0.1,<0.2"
    assert series("0.10.3rc1") == ">=0.10,<0.11"
    assert series("1.4.2") == ">=1.4,<2"


def test_its_tests_pass_without_installing(
    run_cli, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated tests, run by pytest with the package on the path (all but the one that checks the
    installed entry point, which is the slow test's). In a process of its own: run in this one, pytest
    would take the modules it imported out of ``sys.modules`` afterwards, and a later import of one of
    ours would make a second copy of its classes."""
    assert run_cli("plugins", "new", "demo").exit_code == 0
    folder = Path("demo").absolute()  # in the current directory: pytester's
    inherited = os.environ.get("PYTHONPATH")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(folder / "src"), *([inherited] if inherited else [])])
    )
    result = pytester.runpytest_subprocess(
        str(folder / "tests"), "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "-k",
        "not installed_under_its_entry_point",
    )  # fmt: skip
    result.assert_outcomes(passed=4, deselected=1)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_new_then_pip_install_then_pytest_passes(tmp_path: Path) -> None:
    """``opencode plugins new demo && pip install -e demo && pytest demo`` in a fresh environment, offline;
    then the environment's ``opencode`` lists the plugin and runs its tools."""
    python = make_venv(tmp_path / "venv")
    _, project, env = fresh_environment(tmp_path, python)
    created = run_in(python, project, "plugins", "new", "demo", env=env)
    assert created.returncode == 0, created.stderr

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *args], cwd=project, env=env, capture_output=True, text=True, timeout=600
        )

    installed = run("-m", "pip", "install", "--no-build-isolation", "-e", "demo")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    tested = run("-m", "pytest", "demo", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0")
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert "5 passed" in tested.stdout

    listed = run_in(python, project, "plugins", "list", "--json", env=env)
    (demo,) = [p for p in json.loads(listed.stdout)["plugins"] if p["name"] == "demo"]
    assert (demo["version"], demo["status"]) == ("0.1.0", "loaded")
    assert demo["tools"] == ["demo_greet", "demo_count_add", "demo_count_show"]
    ran = run_in(python, project, "tools", "run", "demo_greet", "name=Ada", env=env)
    assert ran.stdout.strip() == "Hello, Ada!"
