"""Adversarial commands: ways of reaching outside the project, and which of them the bash scan catches.

Every command goes through the real tool with a permission recorder that rejects each ask, and with the
shell replaced by a tripwire: nothing is ever executed. A command the scan *catches* must raise one
``external_directory`` ask naming exactly the expected directories (it comes first, so the rejection
stops the call there). A command it does *not* catch still gets the ``bash`` ask (a human sees the whole
command line), and the table says why the scan cannot see the outside path. A command it *refuses*
does not parse and is never asked about.

``OURS`` marks what is caught only thanks to this scan's additions to OpenCode's baseline (see
:mod:`opencode_cli.tools._shell_scan`): redirections, cd tracking, word expansion, extra file commands,
wrappers, scripts of ``sh -c`` / ``eval``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import Project
from opencode_cli.context import PermissionRequest, ToolContext
from opencode_cli.errors import RejectedError, ToolError
from opencode_cli.tools import _shell

BASE = "baseline"
OURS = "ours"


@dataclass(frozen=True)
class Case:
    command: str
    dirs: tuple[str, ...] | None
    """Expected outside directories; ``None`` when the scan cannot see one."""
    why: str
    """Why it is caught (``BASE``/``OURS``), or the reason it is not."""
    refused: bool = False


def caught(command: str, *dirs: str, by: str = BASE) -> Case:
    return Case(command, dirs, by)


def missed(command: str, reason: str) -> Case:
    return Case(command, None, reason)


def refused(command: str, reason: str) -> Case:
    return Case(command, None, reason, refused=True)


# {outer} is a directory outside the project, {home} the user's home (outside too), {up} the project's
# parent directory; project/link is a symlink to {outer}.
CASES = [
    # redirections
    caught("echo pwned > /etc/x", "/etc", by=OURS),
    caught("echo pwned >> ~/.bashrc", "{home}", by=OURS),
    caught("ls 2> /tmp/../etc/y", "/etc", by=OURS),
    caught("echo hi &> {outer}/log", "{outer}", by=OURS),
    caught("cat < /etc/passwd", "/etc", by=OURS),
    caught("echo x >| '{outer}/quoted name'", "{outer}", by=OURS),
    caught("> /etc/cron.daily/job", "/etc/cron.daily", by=OURS),
    caught("cat <<EOF > /etc/profile.d/evil.sh\nexport X=1\nEOF", "/etc/profile.d", by=OURS),
    # substitutions
    caught("echo $(cat /etc/passwd)", "/etc"),
    caught("echo `cat /etc/shadow`", "/etc"),
    caught("cat <<EOF\n$(cat /etc/shadow)\nEOF", "/etc"),
    caught("cat <<EOF\n`rm -rf {outer}/data`\nEOF", "{outer}/data", by=OURS),
    caught("diff <(cat /etc/passwd) a", "/etc"),
    caught("echo data > >(tee /etc/x)", "/etc", by=OURS),
    caught("echo $(( $(cat /etc/shadow | wc -l) + 1 ))", "/etc"),
    # directories and the working directory
    caught("cd /; ls", "/"),
    caught("cd /; cat etc/passwd", "/", "/etc", by=OURS),
    caught("cd {outer} && rm -rf data", "{outer}", "{outer}/data", by=OURS),
    caught("(cd {outer} && rm -rf data)", "{outer}", "{outer}/data", by=OURS),
    caught("cd ~; rm -rf .ssh", "{home}", by=OURS),
    caught("pushd /etc && rm hosts; popd", "/etc", by=OURS),
    caught("cat ../secret", "{up}"),
    caught("rm -rf ../../x", "{up_up}"),
    caught("touch /tmp/../../etc/x", "/etc"),
    caught("cat link/passwd", "{outer}", by=OURS),  # the symlink-aware guard; upstream compares text
    # quoting and expansion
    caught('cat "/etc/pass wd"', "/etc"),
    caught("cat '/etc'/passwd", "/etc", by=OURS),
    caught("cat /etc/pass\\ wd", "/etc"),
    caught("cat $'\\x2fetc/passwd'", "/etc", by=OURS),
    caught("cat ~/.ssh/id_rsa", "{home}/.ssh"),
    caught("cat $HOME/.netrc", "{home}", by=OURS),
    caught('cat "${HOME}/.profile"', "{home}", by=OURS),
    caught("D=/etc; rm $D/passwd", "/etc", by=OURS),
    caught("rm -rf $UNSET_VARIABLE/*", "/", by=OURS),
    caught("cat /etc/{passwd,shadow}", "/etc"),
    caught("cat /e?c/passwd", "/"),
    # commands
    caught("cp a /etc/", "/etc"),
    caught("mv secret.txt {outer}/", "{outer}"),
    caught("chmod 777 /etc/passwd", "/etc"),
    caught("mkdir -p /opt/evil/dir", "/opt/evil"),
    caught("/bin/rm /etc/x", "/etc", by=OURS),
    caught("\\rm -rf {outer}", "{outer}", by=OURS),
    caught("tee /etc/x < a", "/etc", by=OURS),
    caught("dd if=a of=/etc/x", "/etc", by=OURS),
    caught("ln -s /etc/passwd p", "/etc", by=OURS),
    caught("truncate -s 0 /etc/hosts", "/etc", by=OURS),
    caught("install -m 755 a /usr/local/bin/a", "/usr/local/bin", by=OURS),
    caught("rsync -a src/ {outer}/backup/", "{outer}", by=OURS),
    caught("sed -i s/a/b/ /etc/hosts", "/etc", by=OURS),
    caught("tail -f /var/log/syslog", "/var/log", by=OURS),
    caught("grep -r password /etc", "/etc", by=OURS),
    caught("find / -delete", "/", by=OURS),
    caught("find . -exec cp {} /etc/ \\;", "/etc", by=OURS),
    caught("ls | xargs rm /etc/x", "/etc", by=OURS),
    caught("sudo rm -rf /var/lib/x", "/var/lib", by=OURS),
    caught("env -C /etc cat passwd", "/etc", by=OURS),
    caught("nohup rm -rf {outer}/data &", "{outer}/data", by=OURS),
    caught("bash -c 'cat /etc/passwd'", "/etc", by=OURS),
    caught('sh -c "rm -rf {outer}/data"', "{outer}/data", by=OURS),
    caught("eval 'rm /etc/x'", "/etc", by=OURS),
    caught("source /etc/profile", "/etc", by=OURS),
    caught(". {outer}/env.sh", "{outer}", by=OURS),
    caught("bash {outer}/script.sh", "{outer}", by=OURS),
    # what the scan cannot see
    missed('python -c \'open("/etc/x", "w").write("pwned")\'', "code in another language is opaque"),
    missed("perl -e 'unlink \"/etc/x\"'", "code in another language is opaque"),
    missed('node -e \'require("fs").rmSync("/etc/x")\'', "code in another language is opaque"),
    missed("cat $(echo /etc/passwd)", "the path is the output of a command, known only at run time"),
    missed('cd "$(dirname /etc/x)"; rm passwd', "the directory is the output of a command"),
    missed('for f in /etc/*; do cat "$f"; done', "a loop variable is set at run time"),
    missed('read -r p < list.txt; rm "$p"', "a variable set by read is known only at run time"),
    missed("echo /etc/x | xargs rm", "xargs takes its paths from standard input"),
    missed('f() { rm -rf "$1"; }; f /etc/x', "function arguments are not followed into the body"),
    missed("X=$(pwd)/../x; rm $X", "a variable holding command output is dynamic"),
    missed('bash -c "$CMD"', "a script in a variable is dynamic"),
    missed("curl -o /etc/x http://127.0.0.1:9/x", "curl is not a file command: its options are not read"),
    missed("git -C /etc status", "git is not a file command"),
    missed("tar -xf a.tar -C /etc", "tar is not a file command"),
    missed("awk '{print > \"/etc/x\"}' a", "awk's program is opaque"),
    missed("ls /etc", "ls is deliberately not a file command (listing asks nothing, as upstream)"),
    missed("vim -c ':w! /etc/x' -c ':q' a", "an editor's commands are opaque"),
    # what the scan refuses
    refused("exec 3<> /etc/x", "tree-sitter-bash cannot parse <> (read-write redirection)"),
    refused("cat /etc/passwd; echo )", "a syntax error: a broken tree is never trusted"),
]


@pytest.fixture
def world(make_project: Any, tmp_path: Path, home: Path) -> dict[str, str]:
    outer = tmp_path / "outer"
    (outer / "data").mkdir(parents=True)
    project = make_project(extra_env={"SHELL": "/bin/bash"})
    (project.directory / "link").symlink_to(outer, target_is_directory=True)
    return {
        "outer": str(outer),
        "home": str(home),
        "up": str(project.directory.parent),
        "up_up": str(project.directory.parent.parent),
        "project": str(project.directory),
    }


def fill(text: str, world: dict[str, str]) -> str:
    """``text`` with ``{outer}``, ``{home}``... replaced (other braces are shell syntax and stay)."""
    for key, value in world.items():
        text = text.replace("{" + key + "}", value)
    return text


def test_there_are_at_least_forty_adversarial_commands() -> None:
    assert len(CASES) >= 40
    assert sum(case.dirs is not None for case in CASES) >= 40
    assert len({case.command for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.command.split("\n")[0][:60] for c in CASES])
def test_adversarial_command(
    case: Case, world: dict[str, str], make_project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def tripwire(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the command was executed")

    monkeypatch.setattr(_shell, "run", tripwire)
    project: Project = make_project(extra_env={"SHELL": "/bin/bash"})
    requests: list[PermissionRequest] = []

    async def reject(request: PermissionRequest) -> None:
        requests.append(request)
        raise RejectedError()

    context = ToolContext(
        directory=project.directory,
        worktree=project.worktree,
        asker=reject,
        truncator=project.truncator,
        env=project.env,
    )
    command = fill(case.command, world)
    tool = project.registry.get("bash").tool.load()
    if case.refused:
        with pytest.raises(ToolError, match=r"^Failed to parse command$"):
            asyncio.run(tool.run({"command": command}, context))
        assert requests == []
        return
    with pytest.raises(RejectedError):
        asyncio.run(tool.run({"command": command}, context))
    assert len(requests) == 1
    [request] = requests
    if case.dirs is None:
        assert request.permission == "bash", f"now caught: {request.patterns}; move it to the caught list"
        assert request.metadata == {"command": command}
        return
    expected = [fill(d, world) for d in case.dirs]
    assert request.permission == "external_directory"
    assert request.metadata["directories"] == expected
    assert request.patterns == request.always == [f"{d.rstrip('/')}/*" for d in expected]
    assert request.metadata["command"] == command


def table() -> str:
    """The adversarial table as Markdown (``python tests/tools/test_bash_adversarial.py``)."""
    rows = ["| # | command | scan | why |", "|---|---|---|---|"]
    for number, case in enumerate(CASES, 1):
        shown = case.command.replace("\n", "\\n").replace("|", "\\|")
        verdict = "refused" if case.refused else ("caught" if case.dirs is not None else "not caught")
        why = case.why if case.dirs is None else ("ours" if case.why == OURS else "baseline")
        rows.append(f"| {number} | `{shown}` | {verdict} | {why} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
