"""The wall keeps the user's secrets in (issue 41): whatever ``read`` is, and whatever ``PATH`` holds, a
sandboxed command reads and writes neither opencode's data directory nor the well-known credential files,
while ordinary commands and the programs on ``PATH`` still run. Real commands under Landlock on this
kernel, a fake home in ``tmp_path``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.files import contains
from opencode_cli.sandbox import landlock, plan, private
from opencode_cli.sandbox.settings import Settings

pytestmark = pytest.mark.skipif(landlock.kernel_abi()[0] < 1, reason="needs Landlock")

SECRET = "the-token-7f3a"


@dataclass
class Home:
    """A fake home: ``~/.local/bin`` (with a program), ``~/.cargo/bin``, the data directory in its default
    place, and secrets in it."""

    home: Path
    temp: Path
    secrets: dict[str, Path]

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share" / "opencode"

    @property
    def env(self) -> dict[str, str]:
        search = f"{self.home}/.local/bin:{self.home}/.cargo/bin:{os.environ.get('PATH', '/usr/bin:/bin')}"
        return {
            "HOME": str(self.home),
            "XDG_DATA_HOME": "",  # the default: ~/.local/share
            "XDG_CONFIG_HOME": "",  # ~/.config
            "PATH": search,
            "TMPDIR": str(self.temp),
            "SHELL": shutil.which("bash") or "/bin/bash",
        }


@pytest.fixture
def fake_home(tmp_path: Path, env: dict[str, str]) -> Home:
    home = Path(env["HOME"])
    temp = tmp_path / "tmp"
    temp.mkdir()
    files = {
        "mcp-auth": ".local/share/opencode/mcp-auth.json",
        "store": ".local/share/opencode/opencode.db",
        "cargo": ".cargo/credentials.toml",
        "ssh": ".ssh/id_ed25519",
        "netrc": ".netrc",
        "gh": ".config/gh/hosts.yml",
        "keyring": ".local/share/keyrings/login.keyring",
    }
    secrets = {}
    for name, relative in files.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET} ({name})\n")
        secrets[name] = path
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "config.toml").write_text("[net]\noffline = true\n")
    (home / ".local" / "bin").mkdir(parents=True)
    hello = home / ".local" / "bin" / "hello-tool"
    hello.write_text("#!/bin/sh\necho hello from the tool\n")
    hello.chmod(0o755)
    return Home(home, temp, secrets)


def _harness(make_project: Any, project_dir: Path, fake_home: Home, mode: str, read: str) -> Harness:
    (project_dir / "opencode.toml").write_text(f'[sandbox]\nmode = "{mode}"\nread = "{read}"\n')
    return Harness(make_project(extra_env=fake_home.env), "bash", env=True)


MODES = [(mode, read) for mode in ("workspace-write", "read-only") for read in ("project", "all")]


@pytest.mark.parametrize(("mode", "read"), MODES)
def test_secrets_are_neither_read_nor_written_in_every_mode(
    mode: str, read: str, make_project: Any, project_dir: Path, fake_home: Home
) -> None:
    bash = _harness(make_project, project_dir, fake_home, mode, read)
    for name, path in fake_home.secrets.items():
        result = bash.run({"command": f"cat {path}"})
        assert SECRET not in result.output, name
        assert result.metadata["exit"] != 0, name
    for target in (fake_home.data / "planted", fake_home.home / ".ssh" / "authorized_keys"):
        bash.run({"command": f"echo key > {target}"})
        assert not target.exists()
    bash.run({"command": f"rm -f {fake_home.secrets['store']}; mv {fake_home.secrets['cargo']} here.toml"})
    assert all(path.exists() for path in fake_home.secrets.values())
    listed = bash.run({"command": "ls ~/.cargo/bin >/dev/null && hello-tool && cat ~/.cargo/config.toml"})
    assert listed.metadata["exit"] == 0, listed.output
    assert "hello from the tool" in listed.output and "offline = true" in listed.output


def test_the_same_reads_get_through_with_the_sandbox_off(
    make_project: Any, project_dir: Path, fake_home: Home
) -> None:
    bash = _harness(make_project, project_dir, fake_home, "off", "all")
    for path in fake_home.secrets.values():
        assert SECRET in bash.run({"command": f"cat {path}"}).output


def test_reading_all_still_reads_the_rest_of_the_home_and_the_system(
    make_project: Any, project_dir: Path, fake_home: Home, tmp_path: Path
) -> None:
    (fake_home.home / "notes.txt").write_text("ordinary\n")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("elsewhere\n")
    bash = _harness(make_project, project_dir, fake_home, "workspace-write", "all")
    result = bash.run({"command": f"cat ~/notes.txt {elsewhere} && ls / ~ >/dev/null && head -1 /etc/passwd"})
    assert result.metadata["exit"] == 0, result.output
    assert "ordinary" in result.output and "elsewhere" in result.output


def test_the_spill_directory_stays_reachable(make_project: Any, project_dir: Path, fake_home: Home) -> None:
    bash = _harness(make_project, project_dir, fake_home, "workspace-write", "project")
    result = bash.run({"command": "seq 1 5000"})
    spill = Path(result.metadata["outputPath"])
    assert spill.parent == fake_home.data / "tool-output"
    again = bash.run({"command": f"tail -1 {spill}"})
    assert again.output.startswith("5000"), again.output


def test_the_reproduction_through_the_cli(fake_home: Home, project_dir: Path, env: dict[str, str]) -> None:
    """``PATH=$HOME/.local/bin:$PATH opencode tools run bash command='cat …/mcp-auth.json'`` with the
    sandbox on and reads confined to the project: the tokens stay in."""
    (project_dir / "opencode.toml").write_text('[sandbox]\nmode = "workspace-write"\nread = "project"\n')
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "opencode"),
            "tools",
            "run",
            "bash",
            "command=cat ~/.local/share/opencode/mcp-auth.json",
            "--allow",
            "bash",
            "--allow",
            "external_directory",
        ],
        cwd=project_dir,
        env={**env, **fake_home.env},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert SECRET not in done.stdout + done.stderr
    assert "Permission denied" in done.stdout, done.stdout + done.stderr


# -- what the rules are built from ------------------------------------------------------------------------


def test_a_bin_directory_on_path_opens_what_its_programs_load_not_its_parent(fake_home: Home) -> None:
    home = fake_home.home
    venv = home / "venvs" / "app"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib").mkdir()
    (venv / "share").mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = home / ".local" / "share" / "uv" / "tools" / "ruff"
    (tool / "bin").mkdir(parents=True)
    (tool / "bin" / "ruff").write_text("")
    (home / ".local" / "bin" / "ruff").symlink_to(tool / "bin" / "ruff")
    env = {**fake_home.env, "PATH": f"{home}/.local/bin:{home}/.cargo/bin:{venv}/bin:/usr/bin"}
    found = plan.tool_dirs(env)
    for opened in (".local/bin", ".local/lib", ".cargo", ".rustup", "venvs/app/bin", "venvs/app/lib"):
        assert str(home / opened) in found, opened
    assert str(venv / "pyvenv.cfg") in found and str(tool / "bin") in found
    for closed in (home, home / ".local", home / ".local" / "share", venv, venv / "share"):
        assert str(closed) not in found, closed


def test_the_walls_follow_the_variables_that_move_them(tmp_path: Path, fake_home: Home) -> None:
    cargo = tmp_path / "cargo-home"
    env = {**fake_home.env, "CARGO_HOME": str(cargo), "XDG_DATA_HOME": str(tmp_path / "data")}
    walls = private.walls(env, spill=str(tmp_path / "data" / "opencode" / "tool-output")).places
    assert walls[str(cargo / "credentials.toml")] is None
    assert walls[str(tmp_path / "data" / "opencode")] is None
    assert walls[str(tmp_path / "data" / "opencode" / "tool-output")] == "w"
    assert walls[str(fake_home.home / ".config" / "opencode")] == "r"  # the user's configuration: read-only
    assert walls[str(fake_home.home / ".opencode")] == "r"


def test_rules_around_a_wall(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for part in ("a/secret", "a/open", "b"):
        (root / part).mkdir(parents=True)
    (root / "a" / "file").write_text("")
    (root / "a" / "link").symlink_to(root / "a" / "secret")
    built = dict(private.around([(str(root), "w")], private.Walls.of({str(root / "a" / "secret"): None})))
    assert built == {
        str(root): "l",
        str(root / "a"): "l",
        str(root / "a" / "file"): "w",
        str(root / "a" / "open"): "w",
        str(root / "b"): "w",
    }
    # a read grant does not carve around a wall that does not exist
    nothing = private.Walls.of({str(root / "nothing"): None})
    assert private.around([(str(root), "r")], nothing) == [(str(root), "r")]
    secret = private.Walls.of({str(root / "a" / "secret"): None})
    assert private.around([(str(root / "a" / "secret" / "x"), "r")], secret) == []


def test_settings_with_a_secret_as_a_root_grant_nothing_there(fake_home: Home, project_dir: Path) -> None:
    settings = Settings(
        mode="workspace-write", read="project", writable=("~/.ssh",), readable=("~/.local/share/opencode",)
    )
    built = plan.build(settings, directory=project_dir, worktree=None, env=fake_home.env)
    rules = built.rules(landlock.kernel_abi()[0])
    for path in (*rules.write, *rules.read):
        assert not path.startswith(str(fake_home.home / ".ssh")), path
        assert not path.startswith(str(fake_home.data)), path


# -- the rules around walls, for any tree -----------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", ".ssh", "data"])
TREES = st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3), st.sampled_from(["dir", "file", "link"])))


@settings(max_examples=60, deadline=None)
@given(
    tree=TREES,
    walls=st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3), st.sampled_from([None, "r", "w"]))),
    kind=st.sampled_from(["r", "w"]),
)
def test_no_grant_reaches_into_a_wall_and_nothing_else_is_lost(
    tree: list[tuple[list[str], str]], walls: list[tuple[list[str], str | None]], kind: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = os.path.realpath(folder)
        for parts, shape in tree:
            path = os.path.join(root, *parts)
            if os.path.lexists(path) or not os.path.isdir(os.path.dirname(path)):
                continue
            if shape == "dir":
                os.mkdir(path)
            elif shape == "file":
                Path(path).write_text("x")
            else:
                os.symlink(root, path)
        places = {os.path.join(root, *parts): allowed for parts, allowed in walls}
        walled = private.Walls.of(places)
        built = dict(private.around([(root, kind)], walled))

        def expected(path: str) -> str | None:  # the grant, lowered by the innermost wall holding path
            holding = [place for place in places if contains(place, path)]
            if not holding:
                return kind
            allowed = places[max(holding, key=len)]
            return (
                None
                if allowed is None
                else private.KINDS[max(private.KINDS.index(kind), private.KINDS.index(allowed))]
            )

        def granted(path: str) -> str | None:  # what the rules give path, as Landlock adds them up
            found = [built[place] for place in built if contains(place, path) and built[place] != "l"]
            return min(found, key=private.KINDS.index) if found else None

        for current, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                path = os.path.join(current, name)
                if os.path.islink(path):
                    continue
                if built.get(path) == "l" and expected(path) is not None:  # on the way down to a wall
                    assert path in walled.holders and os.path.isdir(path)
                    continue
                assert granted(path) == expected(path), (path, built)
        for place, given_kind in built.items():
            assert given_kind == "l" or not os.path.islink(place) or place == root
            if given_kind == "l":
                assert place in walled.holders


def test_a_secret_moved_behind_a_link_is_walled_where_it_now_is(fake_home: Home) -> None:
    home = fake_home.home
    assert private.walls(fake_home.env).places[str(home / ".ssh")] is None
    (home / ".ssh").rename(home / "keys")
    (home / ".ssh").symlink_to(home / "keys")  # as a dotfiles manager does
    assert private.walls(fake_home.env).places[str(home / "keys")] is None


def test_a_project_in_the_home_directory_writes_beside_the_private_places_only(
    make_project: Any, fake_home: Home
) -> None:
    home = fake_home.home
    (home / ".git").mkdir()
    (home / "src").mkdir()
    (home / ".opencode").mkdir()
    (home / "opencode.toml").write_text('[sandbox]\nmode = "workspace-write"\n')
    bash = Harness(make_project(home, extra_env=fake_home.env), "bash", env=True)
    result = bash.run({"command": "echo ok > src/made.txt && cat src/made.txt"})
    assert result.output.startswith("ok"), result.output
    for target in (".opencode/tool.py", ".config/opencode/opencode.toml", ".ssh/authorized_keys", ".netrc2"):
        bash.run({"command": f"mkdir -p $(dirname {target}); echo x > {target}"})
        assert not (home / target).exists(), target
    assert SECRET not in bash.run({"command": "cat .netrc .cargo/credentials.toml"}).output
