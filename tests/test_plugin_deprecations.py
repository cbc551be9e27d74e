"""Deprecations through pluggy: a hook spec declared with ``warn_on_impl`` (or ``warn_on_impl_args``) makes a
plugin implementing it warn, naming the replacement and the plugin's file, once per change of that file.

No hook of the contract is deprecated today, so these tests declare test-only specs, as a release that
deprecates a hook would in ``hookspecs.py``."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

from opencode_cli.cli.quiet import OncePerChange
from opencode_cli.hookspecs import PluginDeprecationWarning, deprecated, hookspec
from opencode_cli.plugins import Plugins


@hookspec(warn_on_impl=deprecated("the hook tool_retired", "implement tool_current(tool) instead", "0.3"))
def tool_retired(tool):
    """A test-only hook, deprecated."""


@hookspec(warn_on_impl_args={"legacy": deprecated("tool_current's argument legacy", "read tool.id", "0.4")})
def tool_current(tool, legacy):
    """A test-only hook, one of whose arguments is deprecated."""


SPECS = types.SimpleNamespace(tool_retired=tool_retired, tool_current=tool_current)

PLUGIN = """\
from opencode_cli import hookimpl


@hookimpl
def tool_retired(tool):
    return "old"


@hookimpl
def tool_current(tool, legacy):
    return "new"
"""


def load_module(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plugins_with_test_specs(warn) -> Plugins:
    plugins = Plugins(autoload=False, builtin=(), warn=warn)
    plugins.manager.add_hookspecs(SPECS)
    return plugins


def test_a_deprecated_hook_warns_with_its_replacement(tmp_path: Path) -> None:
    path = tmp_path / "old_plugin.py"
    path.write_text(PLUGIN)
    said: list[str] = []
    plugins = plugins_with_test_specs(said.append)
    record = plugins.register(load_module(path), name="old")
    assert record.status == "loaded"
    assert said == [  # in pluggy's order of registering
        f"{path}:9: plugin old: tool_current's argument legacy is deprecated and will be removed in "
        "opencode-tools 0.4: read tool.id",
        f"{path}:4: plugin old: the hook tool_retired is deprecated and will be removed in "
        "opencode-tools 0.3: implement tool_current(tool) instead",
    ]
    assert record.warnings == [line.replace(" plugin old:", "") for line in said]
    # the plugin still works, through pluggy, alone and with the others
    assert plugins.manager.hook.tool_retired(tool="x") == ["old"]
    assert plugins.manager.hook.tool_current(tool="x", legacy=None) == ["new"]


def test_a_plugin_not_implementing_it_is_not_warned(tmp_path: Path) -> None:
    said: list[str] = []
    plugins = plugins_with_test_specs(said.append)
    plugin = types.SimpleNamespace()
    record = plugins.register(plugin, name="quiet")
    assert record.warnings == [] and said == []


def test_the_warning_is_shown_once_until_the_plugin_changes(tmp_path: Path) -> None:
    """As a command shows it (cli/quiet.py): once, then again only after the plugin's file changed."""
    path = tmp_path / "old_plugin.py"
    path.write_text(PLUGIN)
    shown: list[str] = []
    once = OncePerChange(tmp_path / "data" / "warnings-shown.json", shown.append)
    for _ in range(2):  # two commands
        plugins_with_test_specs(OncePerChange(once.record, shown.append)).register(
            load_module(path), name="old"
        )
    assert len(shown) == 2 and all(str(path) in line for line in shown)
    path.write_text(PLUGIN + "\n# edited\n")
    plugins_with_test_specs(OncePerChange(once.record, shown.append)).register(load_module(path), name="old")
    assert len(shown) == 4


def test_the_warning_is_a_deprecation_warning() -> None:
    warning = deprecated("the hook x", "use y", "1.0")
    assert isinstance(warning, PluginDeprecationWarning) and isinstance(warning, DeprecationWarning)
    with pytest.warns(PluginDeprecationWarning, match="use y"):
        import warnings

        warnings.warn(warning, stacklevel=1)
