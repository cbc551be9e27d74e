"""The plugin API: one module, ``opencode_cli.plugin``, that says its version; the docs list exactly its
names; the plugins and examples we ship import nothing else of ``opencode_cli`` (but the test kit)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import opencode_cli
from opencode_cli import plugin
from opencode_cli.cli.plugin_template import render

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The modules of opencode_cli a plugin may import.
PUBLIC = {"opencode_cli", "opencode_cli.plugin", "opencode_cli.testing"}


def test_every_name_resolves_and_is_the_same_object_as_at_the_top() -> None:
    for name in plugin.__all__:
        value = getattr(plugin, name)
        if name in opencode_cli.__all__:
            assert getattr(opencode_cli, name) is value, name
    assert opencode_cli.__version__ == plugin.API_VERSION
    with pytest.raises(AttributeError, match="the plugin API"):
        plugin.Registry  # noqa: B018


def test_importing_it_imports_nothing_else() -> None:
    code = (
        "import sys, opencode_cli.plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith('opencode_cli')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['opencode_cli', 'opencode_cli.plugin']"


def test_the_docs_table_lists_exactly_the_api() -> None:
    text = (DOCS / "plugin-api.md").read_text(encoding="utf-8")
    section = text.split("## What a plugin may import", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    listed = [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[2])]
    assert sorted(listed) == sorted(plugin.__all__)
    assert len(listed) == len(set(listed))


def test_the_docs_example_registers_its_tool() -> None:
    (code,) = re.findall(r"```python\n(.*?)```", (DOCS / "plugin-api.md").read_text(), re.DOTALL)
    module = types.ModuleType("weather_example")
    exec(compile(code, "plugin-api.md", "exec"), module.__dict__)
    from opencode_cli.plugins import Plugins

    plugins = Plugins(autoload=False, builtin=(), extra=[("weather", module)])
    registered: list = []
    plugins.manager.hook.register_tools(register=registered.append, flags=None, project=None)
    assert [tool.id for tool in registered] == ["weather_now"]


def imported(code: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of each import of an ``opencode_cli`` module in ``code``."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opencode_cli"):
            found.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("opencode_cli")]
    return found


def plugin_code() -> dict[str, str]:
    """Where plugin code is shown or shipped: the example plugins, the package ``plugins new`` writes, and
    the Python blocks of the plugin authors' pages."""
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "plugins").rglob("*.py")}
    sources |= {
        f"plugins new: {path}": text for path, text in render("demo", ">=0.1").items() if path.endswith(".py")
    }
    for page in ("plugins.md", "plugin-api.md", "tools.md"):
        blocks = re.findall(r"^```python\n(.*?)^```", (DOCS / page).read_text(), re.MULTILINE | re.DOTALL)
        sources |= {f"docs/{page} block {n}": block for n, block in enumerate(blocks, 1)}
    return sources


def test_plugins_and_examples_import_only_the_plugin_api() -> None:
    offending = []
    sources = plugin_code()
    assert len(sources) > 30 and sum(len(imported(code)) for code in sources.values()) > 40
    for where, code in sources.items():
        for module, names in imported(code):
            if module not in PUBLIC:
                offending.append(f"{where}: {module}")
            elif module != "opencode_cli.testing":
                offending += [f"{where}: {module}.{name}" for name in names if name not in plugin.__all__]
    assert not offending, "\n".join(offending)
