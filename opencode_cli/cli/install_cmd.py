"""``opencode plugins install NAME…`` and ``opencode plugins uninstall NAME…``.

Packages go into the environment ``opencode`` itself runs from: its interpreter's pip (``python -m pip``),
or ``uv pip --python`` that interpreter when uv is on ``PATH``. An environment that another tool owns gets
the one command that works there instead, and nothing is run: a pipx installation (``pipx inject``), a
``uv tool`` installation (``uv tool install … --with``), and a Python the system manages (PEP 668's
``EXTERNALLY-MANAGED``). :func:`find_installer` makes that decision from the directories alone.

The installer's own output goes to stderr; stdout says what the packages added or took away (the plugins,
their versions and tools), from a fresh process, since this one read the entry points before the install.
Exit codes: 0 done, 2 usage, 3 the environment belongs to another tool (the command to run is printed),
4 the installer failed (its messages above).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..compat import DISTRIBUTION
from .common import EXIT_ELSEWHERE, EXIT_INSTALL_FAILED, EXIT_INTERRUPTED, err, fail

Action = Literal["install", "uninstall"]
Kind = Literal["pip", "uv", "pipx", "uv-tool", "system", "no-pip"]

#: The marker of PEP 668 in the standard library's directory: pip refuses to install beside it.
EXTERNALLY_MANAGED = "EXTERNALLY-MANAGED"


@dataclass(frozen=True)
class Installer:
    """How packages get into the environment ``opencode`` runs from, or why they do not (then
    :meth:`advice` says what to run instead)."""

    kind: Kind
    python: str
    """The interpreter ``opencode`` runs on (``sys.executable``)."""
    uv: str | None = None
    """uv's executable, when it is on ``PATH``."""
    tool: str = DISTRIBUTION
    """Under pipx or ``uv tool``: the name opencode-tools is installed under there."""
    withs: tuple[str, ...] = ()
    """Under ``uv tool``: the packages it was installed ``--with`` (kept in the command given)."""
    marker: Path | None = None
    """Under a system-managed Python: its ``EXTERNALLY-MANAGED`` file."""

    def command(self, action: Action, names: list[str]) -> list[str]:
        """The command that installs or removes ``names`` here (for ``pip`` and ``uv`` only)."""
        if self.kind == "uv" and self.uv is not None:
            return [self.uv, "pip", action, "--python", self.python, *names]
        if action == "install":
            return [self.python, "-m", "pip", "install", "--disable-pip-version-check", *names]
        return [self.python, "-m", "pip", "uninstall", "--yes", "--disable-pip-version-check", *names]

    def advice(self, action: Action, names: list[str]) -> str:
        """Why nothing is installed here, and the one command that does it (for the other kinds)."""
        quoted = " ".join(shlex.quote(name) for name in names)
        if self.kind == "pipx":
            verb = "inject" if action == "install" else "uninject"
            return (
                f"opencode runs from a pipx installation ({self.tool}); pipx adds packages to it:\n"
                f"    pipx {verb} {shlex.quote(self.tool)} {quoted}"
            )
        if self.kind == "uv-tool":
            lower = {_normal(name) for name in names}
            kept = [w for w in self.withs if _normal(w) not in lower]
            withs = [*kept, *names] if action == "install" else kept
            flags = "".join(f" --with {shlex.quote(w)}" for w in withs)
            return (
                f"opencode runs from a uv tool installation ({self.tool}); uv installs it again with the "
                f"packages it should hold:\n    uv tool install {shlex.quote(self.tool)}{flags}"
            )
        if self.kind == "system":
            if action == "uninstall":
                return (
                    f"this Python ({self.python}) is managed by the system (PEP 668: {self.marker}); pip "
                    "does not remove packages from it: use the system's package manager"
                )
            if self.uv is not None:
                flags = "".join(f" --with {shlex.quote(name)}" for name in names)
                command = f"uv tool install {DISTRIBUTION}{flags}"
            else:
                command = f"pipx install {DISTRIBUTION} && pipx inject {DISTRIBUTION} {quoted}"
            return (
                f"this Python ({self.python}) is managed by the system (PEP 668: {self.marker}), so pip does "
                f"not install into it; install opencode-tools with its plugins in an environment of their "
                f"own:\n    {command}"
            )
        return (  # no-pip
            f"this Python ({self.python}) has no pip, and uv is not on PATH; add pip to it first:\n"
            f"    {shlex.quote(self.python)} -m ensurepip"
        )


def _normal(name: str) -> str:
    """A requirement's project name as PEP 503 compares them (``LLM_Tools.x>=1`` → ``llm-tools-x``)."""
    import re

    project = re.split(r"[\s\[<>=!~;@(]", name.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", project).lower()


def find_installer(
    prefix: Path, base_prefix: Path, stdlib: Path, python: str, uv: str | None, has_pip: bool
) -> Installer:
    """Who installs packages into the environment at ``prefix`` (``sys.prefix``): pipx (its
    ``pipx_metadata.json``), ``uv tool`` (its ``uv-receipt.toml``), the system (not a virtual environment,
    and PEP 668's marker in ``stdlib``), else uv when it is on ``PATH``, else the interpreter's pip."""
    if (prefix / "pipx_metadata.json").is_file():
        return Installer("pipx", python, uv, tool=_pipx_package(prefix))
    if (prefix / "uv-receipt.toml").is_file():
        tool, withs = _uv_receipt(prefix)
        return Installer("uv-tool", python, uv, tool=tool, withs=withs)
    marker = stdlib / EXTERNALLY_MANAGED
    if prefix.resolve() == base_prefix.resolve() and marker.is_file():
        return Installer("system", python, uv, marker=marker)
    if uv is not None:
        return Installer("uv", python, uv)
    return Installer("pip" if has_pip else "no-pip", python, uv)


def _pipx_package(prefix: Path) -> str:
    """The package a pipx environment was made for (its metadata's ``main_package``), else its name."""
    try:
        data: Any = json.loads((prefix / "pipx_metadata.json").read_text(encoding="utf-8"))
        package = data["main_package"]["package"]
    except (OSError, ValueError, KeyError, TypeError):
        return prefix.name
    return package if isinstance(package, str) and package else prefix.name


def _uv_receipt(prefix: Path) -> tuple[str, tuple[str, ...]]:
    """The tool a ``uv tool`` environment holds and the requirements it was installed ``--with``."""
    import tomllib

    try:
        tool = tomllib.loads((prefix / "uv-receipt.toml").read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError):
        return prefix.name, ()
    name = prefix.name
    entries = [e for e in tool.get("entrypoints", []) if isinstance(e, dict)]
    for entry in entries:
        if isinstance(entry.get("from"), str):
            name = entry["from"]
            break
    withs = []
    for requirement in tool.get("requirements", []):
        if not isinstance(requirement, dict) or not isinstance(requirement.get("name"), str):
            continue
        if _normal(requirement["name"]) == _normal(name):
            continue
        withs.append(requirement["name"] + str(requirement.get("specifier") or ""))
    return name, tuple(withs)


def this_installer() -> Installer:
    """The installer of the environment this process runs from."""
    import importlib.util
    import sysconfig

    return find_installer(
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sysconfig.get_path("stdlib")),
        sys.executable,
        shutil.which("uv"),
        importlib.util.find_spec("pip") is not None,
    )


# -- what the plugins are, before and after --------------------------------------------------------------


def plugin_view(disabled: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every plugin (built-in or installed) of the project in the current directory, as ``plugins list
    --json`` shows it, with the tools each registers; no MCP server is started."""
    from ..project import Project

    project = Project(warn=lambda message: None, disabled_plugins=dict(disabled or {}))
    try:
        project.generation.registry  # noqa: B018 - building it fills in each plugin's tools
        return [record.as_dict() for record in project.plugins.records]
    finally:
        project.close()


def fresh_view(disabled: dict[str, str]) -> list[dict[str, Any]] | None:
    """:func:`plugin_view` from a new process of this interpreter, which reads the entry points as they are
    now (this process read them before the install); ``None`` when it could not be had (the reason on
    stderr)."""
    code = "import json, sys\nfrom opencode_cli.cli.install_cmd import plugin_view\n"
    code += "print(json.dumps(plugin_view(json.loads(sys.argv[1]))))"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(disabled)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
        )  # fmt: skip
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
        reason = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as error:
        reason = [str(error)]
    err(f"warning: could not list the plugins: {reason[0]}")
    return None


def changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """What came and went between two views, a line each: a plugin added (with its version, distribution
    and tools, or why it failed), a plugin removed, a new version, tools a plugin added or lost."""
    old = {record["name"]: record for record in before}
    new = {record["name"]: record for record in after}
    lines = []
    for name, record in new.items():
        was = old.get(name)
        if was is None:
            lines.append(f"added {_describe(record)}")
            continue
        if record["version"] != was["version"]:
            lines.append(f"plugin {name}: {was['version'] or '?'} -> {record['version'] or '?'}")
        if record["status"] == "failed" and was["status"] != "failed":
            lines.append(f"plugin {name} failed: {record['error']}")
        gained = [tool for tool in record["tools"] if tool not in was["tools"]]
        lost = [tool for tool in was["tools"] if tool not in record["tools"]]
        if gained:
            lines.append(f"plugin {name}: new tools {', '.join(gained)}")
        if lost:
            lines.append(f"plugin {name}: tools gone {', '.join(lost)}")
    lines += [f"removed {_describe(record)}" for name, record in old.items() if name not in new]
    return lines


def _describe(record: dict[str, Any]) -> str:
    version = f" {record['version']}" if record.get("version") else ""
    if record["status"] == "failed":
        return f"plugin {record['name']}{version}, which failed to load: {record['error']}"
    if record["status"] == "blocked":
        return f"plugin {record['name']}{version} ({record['error']})"
    return f"plugin {record['name']}{version}: tools {', '.join(record['tools']) or '-'}"


# -- the commands ------------------------------------------------------------------------------------------


def run_installer(action: Action, names: list[str], installer: Installer | None = None) -> None:
    """``plugins install`` / ``plugins uninstall``: check the names, run the installer with its output on
    stderr, then print what changed."""
    from . import common

    for name in names:
        if name.startswith("-"):
            fail(f"error: {name!r} is not a package; options for pip are not passed through ({action} NAME…)")
        if action == "uninstall" and _normal(name) == DISTRIBUTION:
            fail(f"error: not uninstalling {DISTRIBUTION} itself from the environment it runs from")
    installer = installer or this_installer()
    if installer.kind not in ("pip", "uv"):
        fail(f"error: {installer.advice(action, names)}", EXIT_ELSEWHERE)
    disabled = dict(common.DISABLED_PLUGINS)
    before = fresh_view(disabled)
    command = installer.command(action, names)
    code = _stream_to_stderr(command)
    if code != 0:
        fail(f"error: {shlex.join(command)} failed (exit {code}); nothing more was done", EXIT_INSTALL_FAILED)
    after = fresh_view(disabled)
    if before is None or after is None:
        return
    lines = changes(before, after)
    for line in lines:
        print(line)
    if not lines and action == "install":
        print(
            "no plugin or tool came with it (an opencode plugin declares an entry point in the group "
            "'opencode', or a tool plugin of an ecosystem opencode bridges)"
        )
        from ..entrypoints import PATH_VARIABLE

        if PATH_VARIABLE in os.environ:
            err(f"note: {PATH_VARIABLE} is set: plugins are looked for only in the directories it names")


def _stream_to_stderr(command: list[str]) -> int:
    """Run ``command``, its output (stdout and stderr) copied line by line to our stderr; its exit code
    (Ctrl-C: it is let finish its own interruption, then we exit 130)."""
    try:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    except OSError as error:
        fail(f"error: could not run {command[0]}: {error}", EXIT_INSTALL_FAILED)
    with process:
        assert process.stdout is not None
        try:
            for line in process.stdout:
                sys.stderr.write(line.decode("utf-8", "replace"))
            sys.stderr.flush()
            return process.wait()
        except KeyboardInterrupt:
            process.wait()
            fail("interrupted", EXIT_INTERRUPTED)
