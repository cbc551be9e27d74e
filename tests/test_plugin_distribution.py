"""A real plugin distribution: a package with an ``opencode`` entry point, built into a wheel and installed
with pip (offline, into a private directory), then driven through the ``opencode`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)  # the module fixture builds and installs a wheel

PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "opencode-demo"
version = "1.2.3"

[project.entry-points.opencode]
demo = "opencode_demo"
broken = "opencode_broken"
notes = "opencode_notes:toolbox"

[tool.setuptools]
packages = ["opencode_demo", "opencode_broken", "opencode_notes"]
"""

#: A toolbox instance named by an entry point: a plugin by itself, with three tools and a setup and a
#: teardown that say when they run.
NOTES = '''
import os

from opencode_cli import Toolbox


class Notes(Toolbox):
    prefix = "notes"

    def setup(self, project):
        self.kept = []
        self._log(f"setup in {project.directory.name}")

    async def teardown(self):
        self._log("teardown")

    def _log(self, line):
        with open(os.environ["NOTES_LOG"], "a") as log:
            log.write(line + "\\n")

    def add(self, text: str) -> str:
        """Keep a note."""
        self.kept.append(text)
        return f"{len(self.kept)} kept"

    def count(self) -> str:
        """How many notes are kept."""
        return str(len(self.kept))

    async def last(self) -> str:
        """The last note kept."""
        return self.kept[-1] if self.kept else "none"


toolbox = Notes()
'''


PLUGIN = '''
import json
import os

from opencode_cli import Attachment, ToolResult, hookimpl, tool


@tool
def demo_echo(text: str) -> str:
    """Echo the text."""
    return f"echo: {text}"


@tool
async def demo_image() -> ToolResult:
    """Return a tiny attachment."""
    picture = Attachment(mime="image/png", url="data:image/png;base64,AA==")
    return ToolResult(output="here is an image", attachments=[picture])


@hookimpl
def register_tools(register):
    register(demo_echo)
    register(demo_image)


@hookimpl
def tool_definition(tool_id, output):
    if tool_id == "demo_echo":
        output.description = "Echo (described by the plugin)."


@hookimpl
def tool_execute_before(tool, args):
    if tool == "demo_echo":
        if args.get("text") == "forbidden":
            raise ValueError("demo blocks the word forbidden")
        args["text"] = args["text"] + "!"


@hookimpl
async def tool_execute_after(tool, args, result):
    log = os.environ.get("DEMO_AUDIT")
    if log:
        with open(log, "a") as handle:
            handle.write(json.dumps({"tool": tool, "args": args, "title": result.title}) + "\\n")
    result.metadata["audited"] = True
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build and install the demo distribution into a private site directory; return that directory."""
    root = tmp_path_factory.mktemp("dist")
    source = root / "src"
    (source / "opencode_demo").mkdir(parents=True)
    (source / "opencode_broken").mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "opencode_demo" / "__init__.py").write_text(PLUGIN)
    (source / "opencode_broken" / "__init__.py").write_text("import a_module_that_does_not_exist\n")
    (source / "opencode_notes").mkdir()
    (source / "opencode_notes" / "__init__.py").write_text(NOTES)
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )  # fmt: skip
    assert (site / "opencode_demo-1.2.3.dist-info" / "entry_points.txt").is_file()
    return site


def opencode(site: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    home = project.parent / "home"
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".data"),
        "PYTHONPATH": str(site),
        "OPENCODE_PLUGIN_PATH": str(site),  # only what this module installed, whatever the venv holds
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "opencode_cli", *args],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_installed_plugin_is_listed_with_version_and_status(installed: Path, project_path: Path) -> None:
    result = opencode(installed, project_path, "plugins", "list", "--json")
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)["plugins"]}
    demo = plugins["demo"]
    assert demo["version"] == "1.2.3" and demo["status"] == "loaded" and demo["kind"] == "entrypoint"
    assert demo["hooks"] == ["register_tools", "tool_definition", "tool_execute_after", "tool_execute_before"]
    assert demo["tools"] == ["demo_echo", "demo_image"]
    broken = plugins["broken"]
    assert broken["status"] == "failed" and "ModuleNotFoundError" in broken["error"]
    assert "plugin broken failed to load" in result.stderr


def test_plugin_tools_listed_and_described_by_hook(installed: Path, project_path: Path) -> None:
    result = opencode(installed, project_path, "tools", "list", "--json")
    assert result.returncode == 0, result.stderr
    tools = {t["id"]: t for t in json.loads(result.stdout)["tools"]}
    assert tools["demo_echo"]["source"] == {"kind": "plugin", "name": "demo", "version": "1.2.3"}
    assert tools["demo_echo"]["description"] == "Echo (described by the plugin)."
    assert [tool_id for tool_id in tools if not tool_id.startswith("notes_")][-2:] == [
        "demo_echo",
        "demo_image",
    ]


def test_plugin_tool_runs_through_both_execute_hooks(
    installed: Path, project_path: Path, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    result = opencode(
        installed, project_path, "tools", "run", "demo_echo", "text=hi", "--json", DEMO_AUDIT=str(audit)
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["output"] == "echo: hi!" and data["metadata"]["audited"] is True
    assert json.loads(audit.read_text()) == {"tool": "demo_echo", "args": {"text": "hi!"}, "title": ""}


def test_before_hook_blocks_with_its_message(installed: Path, project_path: Path) -> None:
    result = opencode(installed, project_path, "tools", "run", "demo_echo", "text=forbidden")
    assert result.returncode == 1 and "demo blocks the word forbidden" in result.stderr


def test_attachment_gets_a_part_id(installed: Path, project_path: Path) -> None:
    result = opencode(installed, project_path, "tools", "run", "demo_image", "--json")
    data = json.loads(result.stdout)
    assert data["output"] == "here is an image"
    [attachment] = data["attachments"]
    assert attachment["mime"] == "image/png" and attachment["id"].startswith("prt_")


def test_autoload_off_and_disabled_by_config(installed: Path, project_path: Path) -> None:
    off = opencode(installed, project_path, "plugins", "list", "--json", OPENCODE_DISABLE_PLUGIN_AUTOLOAD="1")
    names = [p["name"] for p in json.loads(off.stdout)["plugins"]]
    assert "demo" not in names
    (project_path / "opencode.toml").write_text('[plugins]\ndisabled = ["demo", "broken"]\n')
    blocked = opencode(installed, project_path, "plugins", "list", "--json")
    plugins = {p["name"]: p for p in json.loads(blocked.stdout)["plugins"]}
    assert plugins["demo"]["status"] == "blocked" and plugins["broken"]["status"] == "blocked"
    tools = opencode(installed, project_path, "tools", "list", "--json")
    assert "demo_echo" not in [t["id"] for t in json.loads(tools.stdout)["tools"]]


def test_an_installed_toolbox_is_set_up_and_torn_down_by_each_command(
    installed: Path, project_path: Path, tmp_path: Path
) -> None:
    log = tmp_path / "notes.log"
    listed = opencode(installed, project_path, "plugins", "list", "--json", NOTES_LOG=str(log))
    notes = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}["notes"]
    assert (notes["status"], notes["version"], notes["hooks"]) == ("loaded", "1.2.3", ["register_tools"])
    assert notes["tools"] == ["notes_add", "notes_count", "notes_last"]
    assert not log.exists()  # listing sets nothing up
    added = opencode(installed, project_path, "tools", "run", "notes_add", "text=hello", NOTES_LOG=str(log))
    assert added.returncode == 0 and added.stdout.strip() == "1 kept", added.stderr
    last = opencode(installed, project_path, "tools", "run", "notes_last", NOTES_LOG=str(log))
    assert last.stdout.strip() == "none"  # a new command, a new setup: nothing kept in memory
    assert log.read_text() == "setup in project\nteardown\nsetup in project\nteardown\n"
    off = opencode(installed, project_path, "-p", "no:notes", "tools", "list", "--json", NOTES_LOG=str(log))
    assert not [t for t in json.loads(off.stdout)["tools"] if t["id"].startswith("notes_")]
