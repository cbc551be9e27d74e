"""bash in the Landlock sandbox (issue 27), with real processes on this kernel.

Each escape is a command that tries to write outside the project (or to reach a TCP listener on
127.0.0.1). In ``workspace-write`` with the network off it must leave nothing outside and reach nothing;
with ``mode = "off"`` the same command is shown doing it (the control: the test can fail). The process
runs as root here, and Landlock confines root too.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness

from opencode_cli import Project
from opencode_cli.errors import ToolError
from opencode_cli.sandbox import landlock
from opencode_cli.tools import _ripgrep

pytestmark = pytest.mark.skipif(landlock.kernel_abi()[0] < 4, reason="needs Landlock ABI 4 (network rules)")

SECRET = "the-secret-42"


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts (and answers HTTP).

    The count is set by the accept thread: read it with :meth:`connections`, which first waits for the
    thread to have accepted everything that reached the listener so far (the kernel completes a
    connection before ``accept`` returns it, so a command may have connected and exited while its
    connection still waits in the queue)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self.changed = threading.Condition()
        self.probes: set[int] = set()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, peer = self.socket.accept()
            except OSError:
                return
            with self.changed:
                if peer[1] in self.probes:
                    self.probes.discard(peer[1])
                else:
                    self.accepted += 1
                self.changed.notify_all()
            with connection:
                connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")

    def connections(self, timeout: float = 30) -> int:
        """How many connections (other than its own probe) were accepted, once the accept thread has
        taken every connection made before this call: a probe connection, queued after them, is waited
        for."""
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        with self.changed:
            self.probes.add(port)
        with probe:
            probe.connect(("127.0.0.1", self.port))
            with self.changed:
                assert self.changed.wait_for(lambda: port not in self.probes, timeout), "probe not accepted"
                return self.accepted

    def close(self) -> None:
        self.socket.shutdown(socket.SHUT_RDWR)  # wakes the accept()
        self.socket.close()
        self.thread.join(timeout=5)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@dataclass
class Place:
    """The test's places: the project, a directory outside it (with a file to keep), the temp dir."""

    project: Path
    outside: Path
    temp: Path
    home: Path

    @property
    def kept(self) -> Path:
        return self.outside / "existing"


def configure(project_dir: Path, sandbox: str) -> None:
    (project_dir / "opencode.toml").write_text(f"[sandbox]\n{sandbox}\n")


@pytest.fixture
def place(project_dir: Path, tmp_path: Path, env: dict[str, str]) -> Place:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "existing").write_text("original")
    temp = tmp_path / "tmp"
    temp.mkdir()
    return Place(project_dir, outside, temp, Path(env["HOME"]))


class ProjectHarness(Harness):
    """The bash harness with the call's project on its context (where the ``[sandbox]`` config is read)."""

    def context(self, **changes: Any) -> Any:
        return super().context(**{"project": self.project, **changes})


def harness(make_project: Any, place: Place, mode: str, **config: str) -> Harness:
    lines = [f'mode = "{mode}"', *(f"{key} = {value}" for key, value in config.items())]
    configure(place.project, "\n".join(lines))
    project: Project = make_project(
        extra_env={"SHELL": shutil.which("bash") or "/bin/bash", "TMPDIR": str(place.temp)}
    )
    return ProjectHarness(project, "bash", env=True)


@dataclass(frozen=True)
class Escape:
    """A command (``{o}``: the outside directory, ``{port}``: the listener's, ``{py}``: python) and how
    to tell it got out: ``file`` (``{o}/<name>`` exists), ``kept`` (``{o}/existing`` changed or gone),
    ``net`` (the listener accepted a connection), ``bind`` (it printed BOUND)."""

    name: str
    command: str
    kind: str = "file"
    target: str = ""
    """The file a ``file`` escape makes (default: its name)."""


ESCAPES = [
    Escape("python", "{py} -c \"open('{o}/python', 'w').write('x')\""),
    Escape("perl", 'perl -e \'open(my $f, ">", "{o}/perl") or die $!; print $f "x"\''),
    Escape("node", "node -e \"require('fs').writeFileSync('{o}/node', 'x')\""),
    Escape("awk", 'awk \'BEGIN {{ print "x" > "{o}/awk" }}\''),
    Escape("tee", "echo x | tee {o}/tee"),
    Escape("cp", "echo x > f.txt && cp f.txt {o}/cp"),
    Escape("mv", "echo x > m.txt && mv m.txt {o}/mv"),
    Escape("symlink", "ln -s {o}/symlink link && echo x > link"),
    Escape("hardlink", "echo x > h.txt && ln h.txt {o}/hardlink"),
    Escape("dd", "echo x | dd of={o}/dd"),
    Escape("git", "git -C {o} init", target=".git"),
    Escape("grandchild", "bash -c \"bash -c 'echo x > {o}/grandchild'\""),
    Escape("background", "sh -c 'echo x > {o}/background' & wait"),
    Escape("script", 'printf \'open("{o}/script", "w").write("x")\\n\' > s.py && {py} s.py'),
    Escape("make", "printf 'all:\\n\\techo x > {o}/make\\n' > Makefile && make"),
    Escape("subprocess", "{py} -c \"import subprocess; subprocess.run(['touch', '{o}/subprocess'])\""),
    Escape("mkdir", "mkdir {o}/mkdir"),
    Escape("touch", "touch {o}/touch"),
    Escape("redirect", "echo x > {o}/redirect"),
    Escape("heredoc", "cat > {o}/heredoc <<'EOF'\nx\nEOF"),
    Escape("xargs", "echo {o}/xargs | xargs touch"),
    Escape("find", "find . -maxdepth 0 -exec touch {o}/find ';'"),
    Escape("install", "install -D /dev/null {o}/install/x"),
    Escape("tar", "tar -cf {o}/tar ."),
    Escape("mkfifo", "mkfifo {o}/mkfifo"),
    Escape("pysymlink", "{py} -c \"import os; os.symlink('/etc/passwd', '{o}/pysymlink')\""),
    Escape("cd", "cd {o} && echo x > cd"),
    Escape("cptree", "mkdir -p t && echo x > t/a && cp -r t {o}/cptree"),
    Escape("append", "echo pwned >> {o}/existing", "kept"),
    Escape("truncate", ": > {o}/existing", "kept"),
    Escape("sed", "sed -i s/original/pwned/ {o}/existing", "kept"),
    Escape("rm", "rm -f {o}/existing", "kept"),
    Escape("pyrename", "{py} -c \"import os; os.rename('{o}/existing', '{o}/renamed')\"", "kept"),
    Escape("curl", "curl -s --max-time 5 http://127.0.0.1:{port}/", "net"),
    Escape(
        "pysocket", "{py} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\"", "net"
    ),
    Escape("devtcp", "cat < /dev/tcp/127.0.0.1/{port}", "net"),
    Escape(
        "perlsocket", "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(\"127.0.0.1:{port}\") or die'", "net"
    ),
    Escape(
        "nodesocket",
        "node -e \"require('net').connect({port}, '127.0.0.1').on('connect', s => process.exit(0))\"",
        "net",
    ),
    Escape(
        "bind",
        "{py} -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print('BOUND')\"",
        "bind",
    ),
]
HEAVY = {"node", "nodesocket", "make", "tar"}


def _params() -> list[Any]:
    return [
        pytest.param(escape, id=escape.name, marks=[pytest.mark.slow] if escape.name in HEAVY else [])
        for escape in ESCAPES
    ]


def _run_escape(harness: Harness, escape: Escape, place: Place, listener: Listener) -> tuple[Any, bool]:
    command = escape.command.format(o=place.outside, port=listener.port, py=sys.executable)
    result = harness.run({"command": command, "timeout": 60000})
    if escape.kind == "file":
        made = place.outside / (escape.target or escape.name)
        escaped = made.exists() or made.is_symlink()
    elif escape.kind == "kept":
        escaped = not place.kept.exists() or place.kept.read_text() != "original"
    elif escape.kind == "net":
        escaped = listener.connections() > 0
    else:
        escaped = "BOUND" in result.output
    return result, escaped


@pytest.mark.parametrize("escape", _params())
def test_escape_is_blocked_in_workspace_write(
    escape: Escape, make_project: Any, place: Place, listener: Listener
) -> None:
    bash = harness(make_project, place, "workspace-write")
    result, escaped = _run_escape(bash, escape, place, listener)
    assert not escaped, result.output
    assert sorted(p.name for p in place.outside.iterdir()) == ["existing"]
    if result.metadata["exit"] != 0:  # a failing command is told why (some, like find -exec, exit 0)
        assert result.output.splitlines()[-1].startswith("This command ran in the workspace-write sandbox")


@pytest.mark.parametrize("escape", _params())
def test_escape_gets_out_with_the_sandbox_off(
    escape: Escape, make_project: Any, place: Place, listener: Listener
) -> None:
    bash = harness(make_project, place, "off")
    result, escaped = _run_escape(bash, escape, place, listener)
    assert escaped, result.output
    assert "sandbox" not in result.output


def test_read_only_mode_blocks_the_project_too_but_not_the_temp_dir(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "read-only")
    result = bash.run({"command": 'echo x > in-project.txt; echo y > "$TMPDIR/t" && cat "$TMPDIR/t"'})
    assert not (place.project / "in-project.txt").exists()
    assert (place.temp / "t").read_text() == "y\n"
    assert "line 1: in-project.txt: Permission denied\ny\n" in result.output


def test_the_temp_dir_is_our_own_not_its_parent(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    sibling = place.temp.parent / "sibling"
    result = bash.run({"command": f'echo x > "$TMPDIR/mine" && echo y > {sibling}'})
    assert (place.temp / "mine").exists()
    assert not sibling.exists()
    assert "Permission denied" in result.output


def test_writable_roots_may_be_written(make_project: Any, place: Place, tmp_path: Path) -> None:
    extra = tmp_path / "cache"
    extra.mkdir()
    bash = harness(make_project, place, "workspace-write", writable=f'["{extra}"]')
    result = bash.run({"command": f"echo x > {extra}/ok && echo y > {place.outside}/no"})
    assert (extra / "ok").exists()
    assert not (place.outside / "no").exists()
    assert result.metadata["exit"] != 0


def test_a_symlinked_writable_root_is_granted_by_its_real_path(
    make_project: Any, place: Place, tmp_path: Path
) -> None:
    real = tmp_path / "real-cache"
    real.mkdir()
    (place.project / "cache-link").symlink_to(real)
    bash = harness(make_project, place, "workspace-write", writable='["cache-link"]')
    assert bash.run({"command": "echo x > cache-link/ok"}).metadata["exit"] == 0
    assert (real / "ok").exists()


def test_network_true_lets_tcp_through(make_project: Any, place: Place, listener: Listener) -> None:
    bash = harness(make_project, place, "workspace-write", network="true")
    command = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 5)\""
    )
    assert bash.run({"command": command}).metadata["exit"] == 0
    assert listener.connections() == 1


def test_a_failing_sandboxed_command_ends_with_the_sandbox_line(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    result = bash.run({"command": f"touch {place.outside}/no"})
    assert result.metadata["exit"] == 1
    assert result.output == (
        f"touch: cannot touch '{place.outside}/no': Permission denied\n\n"
        "This command ran in the workspace-write sandbox, which blocks: writing outside the project, the "
        "worktree, the temporary directory and the writable roots; TCP connections (such attempts fail with "
        "permission denied)."
    )


def test_a_succeeding_command_gets_no_sandbox_line(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    result = bash.run({"command": "echo fine"})
    assert result.output == "fine\n"


def test_the_parse_still_asks_for_outside_paths(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    bash.run({"command": f"touch {place.outside}/asked"})
    [ask] = bash.asked("external_directory")
    assert ask.patterns == [f"{place.outside}/*"]


# -- ordinary work --------------------------------------------------------------------------------------

GIT = "git -c user.name=t -c user.email=t@example.com"


def _git_repo(project: Path) -> None:
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q", str(project)], check=True)


def test_git_commit_in_the_project_works(make_project: Any, place: Place) -> None:
    _git_repo(place.project)
    bash = harness(make_project, place, "workspace-write")
    result = bash.run(
        {"command": f"echo x > a.txt && git add a.txt && {GIT} commit -qm first && git log --oneline"}
    )
    assert result.metadata["exit"] == 0, result.output
    assert "first" in result.output


def test_pytest_runs_in_the_project(make_project: Any, place: Place) -> None:
    (place.project / "test_it.py").write_text(
        "def test_it(tmp_path):\n    (tmp_path / 'f').write_text('x')\n"
    )
    bash = harness(make_project, place, "workspace-write")
    result = bash.run(
        {"command": f"{sys.executable} -m pytest -q -n 0 -p no:randomly test_it.py", "timeout": 120000}
    )
    assert result.metadata["exit"] == 0, result.output
    assert "1 passed" in result.output


def test_venv_without_pip_in_the_project(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    result = bash.run(
        {"command": f"{sys.executable} -m venv --without-pip .venv && .venv/bin/python -c 'print(1)'"}
    )
    assert result.metadata["exit"] == 0, result.output
    assert (place.project / ".venv" / "pyvenv.cfg").exists()


@pytest.mark.slow
def test_python_m_venv_in_the_project(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write")
    result = bash.run({"command": "python3 -m venv .venv && .venv/bin/pip --version", "timeout": 300000})
    assert result.metadata["exit"] == 0, result.output
    assert (place.project / ".venv" / "bin" / "pip").exists()


# -- read = "project" -----------------------------------------------------------------------------------


@pytest.fixture
def secrets(place: Place, tmp_path: Path) -> dict[str, Path]:
    ssh = place.home / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_x").write_text(SECRET)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret").write_text(SECRET)
    return {"ssh": ssh / "id_x", "elsewhere": elsewhere / "secret"}


READS = {
    "cat": "cat ~/.ssh/id_x",
    "python": "{py} -c \"print(open('{elsewhere}').read())\"",
    "awk": "awk 'BEGIN {{ while ((getline line < \"{elsewhere}\") > 0) print line }}'",
    "dd": "dd if={elsewhere}",
}


@pytest.mark.parametrize("name", list(READS))
def test_read_project_keeps_outside_files_unread(
    name: str, make_project: Any, place: Place, secrets: dict[str, Path]
) -> None:
    bash = harness(make_project, place, "workspace-write", read='"project"')
    command = READS[name].format(py=sys.executable, elsewhere=secrets["elsewhere"])
    result = bash.run({"command": command})
    assert SECRET not in result.output
    if name != "awk":  # awk's getline answers -1 and the program ends normally
        assert result.metadata["exit"] != 0
        assert "reading outside them" in result.output.splitlines()[-1]


@pytest.mark.parametrize("name", [name for name in READS if name != "cat"])  # ~/.ssh: never (private)
def test_read_all_lets_the_same_reads_through(
    name: str, make_project: Any, place: Place, secrets: dict[str, Path]
) -> None:
    bash = harness(make_project, place, "workspace-write")
    command = READS[name].format(py=sys.executable, elsewhere=secrets["elsewhere"])
    assert SECRET in bash.run({"command": command}).output


def test_read_project_still_runs_ordinary_tools(make_project: Any, place: Place) -> None:
    _git_repo(place.project)
    (place.project / "notes.txt").write_text("needle here\n")
    bash = harness(make_project, place, "workspace-write", read='"project"')
    rg = _ripgrep.binary()
    result = bash.run({"command": f"python3 -c 'import json' && git status --short && {rg} needle"})
    assert result.metadata["exit"] == 0, result.output
    assert "notes.txt" in result.output
    assert "needle here" in result.output


def test_readable_roots_may_be_read(make_project: Any, place: Place, secrets: dict[str, Path]) -> None:
    folder = secrets["elsewhere"].parent
    bash = harness(make_project, place, "workspace-write", read='"project"', readable=f'["{folder}"]')
    assert SECRET in bash.run({"command": f"cat {secrets['elsewhere']}"}).output


# -- where the kernel cannot ----------------------------------------------------------------------------


def test_without_landlock_it_warns_and_runs_unsandboxed(
    make_project: Any, place: Place, capfd: pytest.CaptureFixture[str]
) -> None:
    bash = harness(make_project, place, "workspace-write")
    for name in ("one", "two"):
        bash.run({"command": f"touch {place.outside}/{name}"}, env=bash.env(OPENCODE_LANDLOCK_ABI="0"))
    assert (place.outside / "one").exists() and (place.outside / "two").exists()
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("warning: sandbox")]
    assert (
        warnings
        == [
            "warning: sandbox workspace-write not enforced, the command runs unsandboxed: "
            "OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable"
        ]
        * 2
    )


def test_required_refuses_without_landlock(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write", required="true")
    message = bash.error({"command": f"touch {place.outside}/no"}, env=bash.env(OPENCODE_LANDLOCK_ABI="0"))
    assert message == (
        "The workspace-write sandbox is required (sandbox.required) but cannot be enforced: "
        "OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable. The command was not run."
    )
    assert not (place.outside / "no").exists()


def test_without_network_rules_files_stay_confined_and_tcp_is_let_through_with_a_warning(
    make_project: Any, place: Place, listener: Listener, capfd: pytest.CaptureFixture[str]
) -> None:
    bash = harness(make_project, place, "workspace-write")
    connect = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 5)\""
    )
    bash.run({"command": f"{connect}; touch {place.outside}/no"}, env=bash.env(OPENCODE_LANDLOCK_ABI="3"))
    assert listener.connections() == 1
    assert not (place.outside / "no").exists()
    assert "TCP connections are not blocked" in capfd.readouterr().err


def test_required_refuses_without_network_rules(make_project: Any, place: Place) -> None:
    bash = harness(make_project, place, "workspace-write", required="true")
    with pytest.raises(ToolError, match="has no network rules"):
        bash.run({"command": "true"}, env=bash.env(OPENCODE_LANDLOCK_ABI="3"))


def test_rules_the_launcher_cannot_apply_stop_the_command(tmp_path: Path) -> None:
    # An empty write path is not a rule: the child reports it and never runs the command unconfined.
    import asyncio

    from opencode_cli.context import AbortSignal
    from opencode_cli.tools import _shell

    marker = tmp_path / "ran"

    async def main() -> None:
        await _shell.run(
            "/bin/sh",
            f"touch {marker}",
            cwd=str(tmp_path),
            env={"PATH": "/usr/bin:/bin"},
            timeout=30,
            abort=AbortSignal(),
            on_output=lambda text: None,
            rules=landlock.Rules(landlock.kernel_abi()[0], write=[""]),
        )

    with pytest.raises(_shell.SandboxError, match="the sandbox could not be applied: not a rule: 'w:'"):
        asyncio.run(main())
    assert not marker.exists()
