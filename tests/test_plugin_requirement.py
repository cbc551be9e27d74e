"""A plugin's declared requirement on opencode-tools (its ``Requires-Dist``), read from real ``*.dist-info``
directories and checked at load: a plugin built for another version is failed, both versions named, and
never imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import __version__
from opencode_cli.compat import mismatch, requirement
from opencode_cli.entrypoints import discover
from opencode_cli.plugins import Plugins


def make_distribution(site: Path, name: str, module: str, requires: list[str], version: str = "1.0") -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {line}" for line in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (info / "entry_points.txt").write_text(f"[opencode]\n{module} = {module}\n")
    # importing the module leaves a mark, so a test can tell whether it was imported at all
    (site / f"{module}.py").write_text(
        "import os\n"
        "from opencode_cli import hookimpl, tool\n"
        "open(os.environ['IMPORT_LOG'], 'a').write(__name__ + '\\n')\n\n"
        "@tool\n"
        f"def {module}_hello() -> str:\n"
        '    """Say hello."""\n'
        "    return 'hello'\n\n"
        "@hookimpl\n"
        "def register_tools(register):\n"
        f"    register({module}_hello)\n"
    )


def test_the_requirement_is_read_from_requires_dist() -> None:
    assert requirement(["opencode-tools>=0.1,<0.2"]) == "<0.2,>=0.1"
    assert requirement(["Opencode_Tools (>=0.3)"]) == ">=0.3"
    assert requirement(["opencode-tools"]) == ""
    assert requirement(["httpx>=0.27", "pluggy"]) is None
    assert requirement(None) is None
    assert requirement(["opencode-toolsmith>=9"]) is None  # another distribution
    # a line under a marker that does not hold here does not count
    assert requirement(['opencode-tools>=9; extra == "dev"']) is None
    assert requirement(['opencode-tools>=9; python_version < "3"']) is None
    assert requirement(['opencode-tools>=0.1; python_version >= "3"']) == ">=0.1"
    assert requirement(["opencode-tools>=>=1"]) is None  # pip would not have installed it


@given(st.lists(st.text(max_size=40), max_size=4))
def test_any_metadata_is_read_without_raising(lines: list[str]) -> None:
    found = requirement(["opencode-tools" + line for line in lines])
    assert found is None or isinstance(found, str)
    assert mismatch(found) is None or __version__ in (mismatch(found) or "")


def test_a_mismatch_names_both_versions() -> None:
    assert mismatch(None) is None and mismatch("") is None
    assert mismatch(">=0.1", "0.1.0") is None
    assert mismatch(">=0.1", "0.2.0rc1") is None  # our pre-release counts
    reason = mismatch(">=2.0,<3", "0.1.0")
    assert reason is not None
    assert "requires opencode-tools>=2.0,<3" in reason and "this is opencode-tools 0.1.0" in reason


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("IMPORT_LOG", str(tmp_path / "imported.txt"))
    return folder


def test_an_incompatible_plugin_is_failed_and_never_imported(site: Path, tmp_path: Path) -> None:
    make_distribution(site, "opencode-future", "future_plugin", ["opencode-tools>=99.0"], "3.1")
    make_distribution(site, "opencode-today", "today_plugin", [f"opencode-tools>={__version__}"], "1.0")
    make_distribution(site, "opencode-any", "any_plugin", ["httpx"], "0.5")
    entries = {e.name: e for e in discover("opencode", tmp_path / "cache", [str(site)])}
    assert entries["future_plugin"].requires == ">=99.0"
    assert entries["any_plugin"].requires is None
    # the cache keeps the requirement
    assert {e.name: e for e in discover("opencode", tmp_path / "cache", [str(site)])} == entries

    warnings: list[str] = []
    plugins = Plugins(builtin=(), warn=warnings.append, search_path=[str(site)])
    records = {record.name: record for record in plugins.records}
    future = records["future_plugin"]
    assert future.status == "failed" and future.version == "3.1" and future.hooks == []
    assert future.error == (
        f"opencode-future 3.1: it requires opencode-tools>=99.0, and this is opencode-tools {__version__}: "
        f"install a release of the plugin built for {__version__}, or the opencode-tools it asks for"
    )
    assert warnings == [f"plugin future_plugin was not loaded: {future.error}"]
    assert records["today_plugin"].status == "loaded" and records["any_plugin"].status == "loaded"
    imported = (tmp_path / "imported.txt").read_text().split()
    assert sorted(imported) == ["any_plugin", "today_plugin"]  # the refused one was never imported
    for module in imported:
        sys.modules.pop(module, None)


def test_plugins_list_shows_the_refused_plugin(site: Path, tmp_path: Path) -> None:
    """The CLI, as a real process: the refused plugin is listed failed with both versions, its tool absent,
    and the command still works."""
    import json
    import os
    import subprocess

    make_distribution(site, "opencode-future", "future_plugin", ["opencode-tools>=99.0"], "3.1")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".data"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_PLUGIN_PATH": str(site),
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    listed = subprocess.run(
        [sys.executable, "-m", "opencode_cli", "plugins", "list", "--json"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    (record,) = [r for r in json.loads(listed.stdout)["plugins"] if r["name"] == "future_plugin"]
    assert record["status"] == "failed" and record["tools"] == []
    assert (
        "requires opencode-tools>=99.0" in record["error"]
        and f"opencode-tools {__version__}" in record["error"]
    )
    assert "plugin future_plugin was not loaded" in listed.stderr
    assert not (tmp_path / "imported.txt").exists()
