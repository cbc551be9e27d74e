"""Fresh virtual environments for tests that install packages the way a user does: over this interpreter,
seeing this environment's packages (pip, setuptools, opencode-tools' dependencies) through a ``.pth`` file,
with a private home, no uv on ``PATH`` and no package index, plugins looked for in the new environment
only."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path


def make_venv(folder: Path, hide: tuple[str, ...] = ()) -> Path:
    """A fresh virtual environment over this interpreter, seeing this environment's packages (its pip,
    setuptools and opencode-tools' dependencies) as a site directory added by a ``.pth`` file:
    ``--system-site-packages`` would show the base interpreter's, not this virtual environment's. The
    packages whose names start with one of ``hide`` are left out (a directory of links to the others).
    Returns its python."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    outer = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    if hide:
        shown = folder / "outer-site"
        shown.mkdir()
        for site in outer:
            for entry in Path(site).iterdir():
                if not entry.name.lower().startswith(hide) and not (shown / entry.name).exists():
                    (shown / entry.name).symlink_to(entry)
        outer = [str(shown)]
    lines = [f"import site; site.addsitedir({site!r})" for site in outer]
    Path(purelib, "zz_outer_environment.pth").write_text("\n".join(lines) + "\n")
    return python


def run_in(python: Path, project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "opencode_cli", *args],
        cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
    )  # fmt: skip


def fresh_environment(tmp_path: Path, python: Path) -> tuple[Path, Path, dict[str, str]]:
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not Path(d, "uv").exists()]
    env = {
        "PATH": os.pathsep.join([str(python.parent), *path]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".data"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_PLUGIN_PATH": site,
        "PIP_NO_INDEX": "1",
        "PIP_NO_CACHE_DIR": "1",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    return python, project, env
