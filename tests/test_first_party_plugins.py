"""The example plugins in ``plugins/``, pip-installed into a fresh virtual environment and driven through
the ``opencode`` command it gets.

The environment is made offline: ``python -m venv --without-pip``, then one ``.pth`` line that puts the
site-packages of the interpreter running these tests (which holds opencode-tools's dependencies, pip,
setuptools, wheel and pytest) *after* the new environment's own. Then the environment's own pip installs
opencode-tools (a copy of this checkout, built non-editable) and both plugins, with ``--no-deps
--no-index --no-build-isolation``: the new site-packages holds exactly those three distributions, and
the ``opencode`` script, the ``opencode`` entry points and the ``pytest11`` entry point are theirs. The
development environment is never written to (pip refuses to uninstall outside the environment it
installs into), and sources are copied first so no build files land in the checkout.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds a venv and installs into it

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ("opencode-demo-tools", "opencode-audit")
IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", ".ruff_cache")


class Venv:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "venv" / "bin"
        self.python = self.bin / "python"
        self.sources = root / "src"
        self.site = ""  # the venv's own site-packages, set once the venv exists


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    env = Venv(tmp_path_factory.mktemp("venv"))
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(env.root / "venv")], check=True, timeout=120
    )
    own = subprocess.run(
        [str(env.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env.site = own
    # this environment's packages, and the base interpreter's too when it sees them (--system-site-packages)
    borrowed = dict.fromkeys(
        [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    )
    Path(own, "_opencode_test_dependencies.pth").write_text("".join(f"{path}\n" for path in borrowed))

    project = env.sources / "opencode-tools"
    project.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, project / name)
    shutil.copytree(ROOT / "opencode_cli", project / "opencode_cli", ignore=IGNORE)
    for plugin in PLUGINS:
        shutil.copytree(ROOT / "plugins" / plugin, env.sources / plugin, ignore=IGNORE)
    install = subprocess.run(
        [str(env.python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", str(project), *(str(env.sources / plugin) for plugin in PLUGINS)],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    installed = sorted(p.name for p in Path(own).glob("*.dist-info"))
    assert installed == [
        "opencode_audit-0.1.0.dist-info",
        "opencode_demo_tools-0.1.0.dist-info",
        "opencode_tools-0.1.0.dist-info",
    ]
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    (project / "notes.txt").write_text("the cat and the hat\nthe end\n")
    return {"home": home, "project": project}


def environment(venv: Venv, workspace: dict[str, Path], **extra: str) -> dict[str, str]:
    home = workspace["home"]
    return {
        "PATH": f"{venv.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        # the plugins installed into the venv, not those of the environment it borrows its dependencies from
        "OPENCODE_PLUGIN_PATH": venv.site,
        **extra,
    }


def opencode(
    venv: Venv, workspace: dict[str, Path], *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv.bin / "opencode"), *args],
        cwd=workspace["project"],
        env=environment(venv, workspace, **env),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def run_json(venv: Venv, workspace: dict[str, Path], *args: str, **env: str) -> dict:
    result = opencode(venv, workspace, *args, "--json", **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_installed_opencode_is_the_fresh_copy(venv: Venv, workspace: dict[str, Path]) -> None:
    code = "import opencode_cli, opencode_demo_tools as d; print(opencode_cli.__file__, d.__file__)"
    result = subprocess.run(
        [str(venv.python), "-c", code],
        cwd=workspace["project"],  # not the checkout: ``-c`` puts the working directory on sys.path
        env=environment(venv, workspace),
        capture_output=True,
        text=True,
        check=True,
    )
    for path in result.stdout.split():
        assert Path(path).is_relative_to(venv.root / "venv"), path


def test_plugins_are_listed_with_version_and_status(venv: Venv, workspace: dict[str, Path]) -> None:
    plugins = {p["name"]: p for p in run_json(venv, workspace, "plugins", "list")["plugins"]}
    demo, audit = plugins["demo-tools"], plugins["audit"]
    assert (demo["version"], demo["kind"], demo["status"]) == ("0.1.0", "entrypoint", "loaded")
    assert demo["hooks"] == ["register_tools"]
    assert demo["tools"] == [
        "demo_word_count",
        "demo_checksum",
        "demo_swatch",
        "demo_steps",
        "demo_notes_add",
        "demo_notes_find",
        "demo_notes_count",
    ]
    assert (audit["version"], audit["status"], audit["tools"]) == ("0.1.0", "loaded", [])
    assert audit["hooks"] == ["tool_definition", "tool_execute_after", "tool_execute_before"]
    text = opencode(venv, workspace, "plugins", "list")
    assert "demo-tools 0.1.0  [entrypoint]  loaded" in text.stdout
    assert "audit 0.1.0  [entrypoint]  loaded" in text.stdout
    assert text.stderr == ""


def test_the_demo_tools_run(venv: Venv, workspace: dict[str, Path], tmp_path: Path) -> None:
    counted = opencode(venv, workspace, "tools", "run", "demo_word_count", "text=@notes.txt", "top:=1")
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout == "2 lines, 7 words, 28 characters\n    3  the\n"

    checksum = run_json(venv, workspace, "tools", "run", "demo_checksum", "path=notes.txt", "algorithm=md5")
    assert checksum["output"].startswith("md5:") and checksum["output"].endswith("  notes.txt")

    swatch = run_json(venv, workspace, "tools", "run", "demo_swatch", "color=#336699", "size:=8")
    [attachment] = swatch["attachments"]
    assert attachment["mime"] == "image/png" and attachment["filename"] == "swatch-336699.png"
    assert base64.b64decode(attachment["url"].split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")

    steps = run_json(venv, workspace, "tools", "run", "demo_steps", "steps:=2", "delay:=0")
    assert steps["metadata"]["done"] == 2 and steps["title"] == "2 of 2 steps"

    described = run_json(venv, workspace, "tools", "inspect", "demo_swatch")
    assert described["source"] == {"kind": "plugin", "name": "demo-tools", "version": "0.1.0"}
    assert described["description"].startswith("Make a small square PNG image")  # package data shipped


def test_the_notes_toolbox_keeps_its_database_across_commands(venv: Venv, workspace: dict[str, Path]) -> None:
    """A toolbox in a pip plugin: each command sets it up (opens the database) and tears it down."""
    first = run_json(venv, workspace, "tools", "run", "demo_notes_add", "text=water the plants")
    assert first["output"] == "Kept note 1."
    found = run_json(venv, workspace, "tools", "run", "demo_notes_find", "words=plants")
    assert found["output"] == "1: water the plants"
    assert (workspace["home"] / ".local" / "share" / "opencode" / "demo-notes.sqlite").is_file()


def test_progress_is_shown_live_on_a_terminal(venv: Venv, workspace: dict[str, Path]) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        str(venv.bin / "opencode"),
        ["tools", "run", "demo_steps", "steps:=3", "delay:=0.2"],
        cwd=str(workspace["project"]),
        env=environment(venv, workspace),
        encoding="utf-8",
        timeout=60,
    )
    for step in (1, 2, 3):
        child.expect(f"step {step} of 3")
    child.expect("Finished 3 of 3 steps.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_audit_log_gets_a_line_per_call(venv: Venv, workspace: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "audit" / "calls.jsonl"
    run_json(venv, workspace, "tools", "run", "demo_word_count", "text=hi", OPENCODE_AUDIT_LOG=str(log))
    run_json(venv, workspace, "tools", "run", "read", "filePath=notes.txt", OPENCODE_AUDIT_LOG=str(log))
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert (first["tool"], first["status"], first["args"]) == ("demo_word_count", "completed", {"text": "hi"})
    assert first["session"].startswith("ses_") and first["call"] is None  # run from the shell: no call id
    assert (second["tool"], second["title"]) == ("read", "notes.txt")

    run_json(venv, workspace, "tools", "run", "glob", "pattern=*.txt")  # no variable: the data directory
    default = workspace["home"] / ".local" / "share" / "opencode" / "audit.jsonl"
    assert json.loads(default.read_text())["tool"] == "glob"


def test_the_audit_blocks_a_configured_pattern(
    venv: Venv, workspace: dict[str, Path], tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    settings = {"OPENCODE_AUDIT_LOG": str(log), "OPENCODE_AUDIT_BLOCK": r'"command": "rm -rf'}
    blocked = opencode(venv, workspace, "tools", "run", "bash", "command=rm -rf build", **settings)
    assert blocked.returncode == 1 and blocked.stdout == ""
    assert "The opencode-audit plugin blocked this bash call" in blocked.stderr
    assert "OPENCODE_AUDIT_BLOCK" in blocked.stderr
    as_json = opencode(venv, workspace, "tools", "run", "bash", "command=rm -rf .", "--json", **settings)
    assert as_json.returncode == 1 and "blocked this bash call" in json.loads(as_json.stdout)["error"]
    allowed = opencode(venv, workspace, "tools", "run", "bash", "command=echo fine", **settings)
    assert allowed.returncode == 0 and allowed.stdout.strip() == "fine"
    statuses = [json.loads(line)["status"] for line in log.read_text().splitlines()]
    assert statuses == ["blocked", "blocked", "completed"]


def test_inspect_shows_the_rewritten_description(venv: Venv, workspace: dict[str, Path]) -> None:
    described = run_json(venv, workspace, "tools", "inspect", "demo_word_count")
    assert described["description"] == (
        "Count the lines, words and characters of a text and list its most common words.\n\n(audited)"
    )
    text = opencode(venv, workspace, "tools", "inspect", "read")
    assert text.returncode == 0 and "(audited)" in text.stdout


def test_a_disabled_plugin_does_nothing(venv: Venv, workspace: dict[str, Path], tmp_path: Path) -> None:
    (workspace["project"] / "opencode.toml").write_text('[plugins]\ndisabled = ["audit"]\n')
    plugins = {p["name"]: p for p in run_json(venv, workspace, "plugins", "list")["plugins"]}
    assert plugins["audit"]["status"] == "blocked" and plugins["demo-tools"]["status"] == "loaded"
    log = tmp_path / "audit.jsonl"
    described = run_json(venv, workspace, "tools", "inspect", "demo_word_count", OPENCODE_AUDIT_LOG=str(log))
    assert "(audited)" not in described["description"]
    run_json(venv, workspace, "tools", "run", "demo_word_count", "text=x", OPENCODE_AUDIT_LOG=str(log))
    assert not log.exists()


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_plugins_own_tests_pass_with_the_installed_pytest_plugin(
    venv: Venv, workspace: dict[str, Path], plugin: str
) -> None:
    """Each plugin's suite uses ``opencode_cli.testing``, found by the installed ``pytest11`` entry point."""
    result = subprocess.run(
        [str(venv.python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=venv.sources / plugin,
        env=environment(venv, workspace),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout.splitlines()[-1] and "failed" not in result.stdout.splitlines()[-1]
