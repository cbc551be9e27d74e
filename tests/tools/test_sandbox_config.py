"""With the sandbox on, a command cannot change the project's configuration or trusted code (issue 35,
finding 2): those places are bound read-only in a private mount namespace before Landlock applies.
``OPENCODE_SANDBOX_MOUNTS=0`` turns the binds off: the control, where the same command succeeds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness

from opencode_cli.sandbox import landlock, mounts

pytestmark = pytest.mark.skipif(
    landlock.kernel_abi()[0] < 1 or not mounts.available()[0], reason="needs Landlock and mount namespaces"
)

CONFIG = '[sandbox]\nmode = "workspace-write"\n'
ATTEMPTS = (
    "echo '[permission]' >> opencode.toml; "
    "echo bad > .opencode/tools/t.py; "
    "echo new > .opencode/tools/new.py; "
    "rm -f opencode.toml; mv .opencode gone; ln opencode.toml hard; "
    "echo fine > ordinary.txt; cat ordinary.txt"
)


class ProjectHarness(Harness):
    def context(self, **changes: Any) -> Any:
        return super().context(**{"project": self.project, **changes})


def _project(make_project: Any, project_dir: Path, tmp_path: Path, **env: str) -> Harness:
    (project_dir / "opencode.toml").write_text(CONFIG)
    (project_dir / ".opencode" / "tools").mkdir(parents=True)
    (project_dir / ".opencode" / "tools" / "t.py").write_text("x = 1\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    extra = {"SHELL": shutil.which("bash") or "/bin/bash", "TMPDIR": str(temp), **env}
    return ProjectHarness(make_project(extra_env=extra), "bash", env=True)


def _untouched(project_dir: Path) -> None:
    assert (project_dir / "opencode.toml").read_text() == CONFIG
    assert (project_dir / ".opencode" / "tools" / "t.py").read_text() == "x = 1\n"
    assert sorted(p.name for p in (project_dir / ".opencode" / "tools").iterdir()) == ["t.py"]
    assert not (project_dir / "gone").exists() and not (project_dir / "hard").exists()


def test_a_sandboxed_command_cannot_change_the_configuration(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    bash = _project(make_project, project_dir, tmp_path)
    result = bash.run({"command": ATTEMPTS})
    _untouched(project_dir)
    assert "Read-only file system" in result.output
    assert result.output.count("fine") == 1 and (project_dir / "ordinary.txt").exists()
    # the binds were the command's own: the host still writes its configuration
    (project_dir / "opencode.toml").write_text(CONFIG + "# host\n")
    assert (project_dir / "opencode.toml").read_text().endswith("# host\n")


def test_without_the_binds_the_same_command_changes_it(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    bash = _project(make_project, project_dir, tmp_path, OPENCODE_SANDBOX_MOUNTS="0")
    bash.run({"command": ATTEMPTS})
    assert not (project_dir / "opencode.toml").exists()
    assert (project_dir / "gone" / "tools" / "new.py").exists()


def test_sandbox_check_says_what_is_and_is_not_covered(tmp_path: Path, cli_env: dict[str, str]) -> None:
    project = tmp_path / "project"
    (project / "opencode.toml").write_text(CONFIG)
    (project / ".opencode").mkdir()
    run = [sys.executable, "-m", "opencode_cli", "sandbox", "check"]
    done = subprocess.run([*run, "--json"], cwd=project, env=cli_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    config = json.loads(done.stdout)["config"]
    real = project.resolve()
    assert config["binds"] is True
    assert config["protected"] == [str(real / "opencode.toml"), str(real / ".opencode")]
    assert str(real / "opencode.json") in config["unprotected"]
    text = subprocess.run(run, cwd=project, env=cli_env, capture_output=True, text=True).stdout
    assert "configuration read-only to commands" in text
    off = subprocess.run(
        [*run, "--json"],
        cwd=project,
        env={**cli_env, "OPENCODE_SANDBOX_MOUNTS": "0"},
        capture_output=True,
        text=True,
    )
    config = json.loads(off.stdout)["config"]
    assert config["binds"] is False and config["protected"] == []
    assert str(real / "opencode.toml") in config["unprotected"]


def test_later_commands_see_the_configuration_as_it_is_now(
    make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    """Keepers confine themselves once and serve many commands: a file replaced since (a new inode, as
    an atomic write makes) and a root made since are seen by the next command, not the old ones."""
    bash = _project(make_project, project_dir, tmp_path)
    assert bash.run({"command": "cat opencode.toml"}).output == CONFIG
    replacement = project_dir / "replacement"
    replacement.write_text(CONFIG + "# changed\n")
    replacement.replace(project_dir / "opencode.toml")
    assert bash.run({"command": "cat opencode.toml"}).output == CONFIG + "# changed\n"
    result = bash.run({"command": "echo x > opencode.toml"})
    assert "Read-only file system" in result.output
    assert (project_dir / "opencode.toml").read_text() == CONFIG + "# changed\n"


SETPRIV = shutil.which("setpriv")
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(
    os.geteuid() != 0 or SETPRIV is None or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root to become another user (setpriv), and a system python3",
)
def test_the_binds_need_no_root() -> None:
    """As an ordinary user (nobody, here), a child bound read-only cannot write the file, and the binds
    stay its own: the parent still writes it. The unprivileged user namespace path of :mod:`mounts`."""
    base = Path(tempfile.mkdtemp(prefix="opencode-binds-"))  # pytest's own folders are root's alone
    try:
        _binds_as_nobody(base)
    finally:
        shutil.rmtree(base)


def _binds_as_nobody(base: Path) -> None:
    base.chmod(0o755)
    place = base / "place"
    place.mkdir(mode=0o777)
    place.chmod(0o777)
    target = place / "opencode.toml"
    target.write_text("original\n")
    target.chmod(0o666)
    # the module is run from a copy nobody can read (a checkout in a 0700 folder is root's alone)
    library = base / "lib"
    library.mkdir(mode=0o755)
    shutil.copy(mounts.__file__, library / "mounts.py")
    (library / "mounts.py").chmod(0o644)
    code = (
        "import os, sys\n"
        f"sys.path.insert(0, {str(library)!r})\n"
        "import mounts\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        f"    mounts.protect([{str(target)!r}])\n"
        "    try:\n"
        f"        open({str(target)!r}, 'a').write('child\\n')\n"
        "    except OSError as error:\n"
        "        print('child:', error.strerror)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        f"open({str(target)!r}, 'a').write('parent\\n')\n"
        "print('uid', os.getuid())\n"
    )
    done = subprocess.run(
        [str(SETPRIV), "--reuid=65534", "--regid=65534", "--clear-groups", SYSTEM_PYTHON, "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["child: Read-only file system", "uid 65534"]
    assert target.read_text() == "original\nparent\n"
