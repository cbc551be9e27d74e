"""The bash tool's description, generated for the machine it runs on (builtin-tools spec §2.1).

It names the operating system, the shell and the working directory, the scratch directory, the output
limits and the default timeout, then tells the model how to use the tool well. The text is our own; its
content follows OpenCode's ``shell.txt`` template for POSIX shells.

This module is imported when tools are listed, so it imports nothing heavy.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

DEFAULT_TIMEOUT_MS = 120_000


def default_timeout_ms(flag_value: int | None) -> int:
    """``OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS`` when set to a positive number, else 2 minutes."""
    return flag_value if flag_value is not None and flag_value > 0 else DEFAULT_TIMEOUT_MS


def _duration(ms: int) -> str:
    if ms % 60_000 == 0:
        minutes = ms // 60_000
        return f"{minutes} minute" + ("s" if minutes != 1 else "")
    if ms % 1000 == 0:
        seconds = ms // 1000
        return f"{seconds} second" + ("s" if seconds != 1 else "")
    return f"{ms / 1000:g} seconds"


TEMPLATE = """\
Runs a {shell} command line and returns what it printed, standard output and standard error merged in the \
order they were written. Each call starts a fresh shell: nothing (variables, the current directory, \
background state) carries over from one call to the next.

Environment: OS: {os}; Shell: {shell}; Working directory: {directory}

Commands start in the working directory above. To run somewhere else, pass that directory as `workdir` \
rather than beginning the command with `cd <dir> &&`.

The scratch directory {tmp} exists and may be used without asking for permission; put throwaway files \
there rather than in the project.

This tool is for terminal work: git, package managers, build and test runners, docker, and similar \
programs. Do not use it to read, write, edit or search files; the dedicated tools do that better.

Before you run a command:
1. If it creates a directory or a file, check first (with `ls`) that the parent directory exists and is \
the one you mean. Before `mkdir a/b`, look at `a`.
2. Put double quotes around every path that contains spaces:
   - mkdir "/home/me/My Documents"    (right)
   - mkdir /home/me/My Documents      (wrong: two arguments)
   - python "/path with spaces/run.py" (right)
   Then run it and read what it printed.

Usage notes:
  - `command` is required.
  - `timeout` is optional and in milliseconds. If you leave it out, commands will time out after \
{timeout_ms}ms ({timeout_words}). A command that has to run longer needs a larger timeout.
  - Output over {max_lines} lines or {max_bytes} bytes is cut: you get its end, and the whole output is \
saved to a file whose path is given. Read that file with the Read tool (offset/limit) or search it with \
Grep. Do not pipe commands through `head` or `tail` to keep the output short; the full text is kept for \
you anyway.
  - Prefer the dedicated tools to these commands unless the user asks for them or nothing else will do:
    - finding files: Glob, not `find` or `ls`
    - searching contents: Grep, not `grep` or `rg`
    - reading files: Read, not `cat`, `head` or `tail`
    - editing files: Edit, not `sed` or `awk`
    - writing files: Write, not `echo >` or `cat <<EOF`
    - talking to the user: plain text in your answer, not `echo` or `printf`
  - Several commands:
    - Independent ones: make several bash calls in the same message, so they run in parallel (for \
example `git status` and `git diff` as two calls).
    - Dependent ones: one call, chained with `&&` so each runs only if the one before succeeded \
(`git add . && git commit -m "message" && git push`; `mkdir` before `cp`).
    - Chain with `;` only when a later command should run even if an earlier one failed.
    - Never separate commands with newlines (a newline inside a quoted string is fine).
  - Do not `cd` inside the command; use `workdir`:
    <good-example>
    workdir="/repo/backend", command: pytest tests
    </good-example>
    <bad-example>
    cd /repo/backend && pytest tests
    </bad-example>

# Git and GitHub

Commit, push or open a pull request only when the user asks you to. When asked to commit:
1. Look first, in parallel calls: `git status` (untracked files), `git diff` (staged and unstaged \
changes) and `git log` (how this repository words its commit messages).
2. Write a short message (one or two sentences) that says why the change was made more than what it \
changed. Leave out files that look like secrets (.env, credentials) and say so if the user asked for \
them.
3. Stage the relevant files, commit, and run `git status` to check the commit went in.
4. If a pre-commit hook fails or changes files, fix the problem and make a new commit; do not amend one \
that was already made.

Never change the git configuration, never skip hooks (`--no-verify`), never force-push (and never to \
main or master), and never use interactive flags such as `git rebase -i` or `git add -i`: they wait for \
input that cannot come. Do not push unless asked. Make no empty commit when there is nothing to commit.

For anything on GitHub (issues, pull requests, checks, releases) use the `gh` command. To open a pull \
request: look at the branch's whole history since it left the base branch (`git log`, \
`git diff <base>...HEAD`), push with `-u` if the branch has no upstream yet, then create it with a \
heredoc body:
    gh pr create --title "the title" --body "$(cat <<'EOF'
    ## Summary
    - one to three points
    EOF
    )"
and give the user the pull request's URL.
"""


def render(
    *,
    shell: str,
    directory: str,
    default_timeout: int = DEFAULT_TIMEOUT_MS,
    max_lines: int,
    max_bytes: int,
    platform: str | None = None,
    tmp: str | None = None,
) -> str:
    """The description text for these values."""
    from ..paths import tmp_dir

    return TEMPLATE.format(
        shell=shell,
        os=platform or sys.platform,
        directory=directory,
        tmp=tmp or str(tmp_dir()),
        timeout_ms=default_timeout,
        timeout_words=_duration(default_timeout),
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def describer(
    flags: object, env: Mapping[str, str] | None = None, directory: str | os.PathLike[str] | None = None
) -> Callable[[], str]:
    """A zero-argument callable giving the description, for :func:`opencode_cli.define`.

    ``flags`` are the project's :class:`~opencode_cli.flags.Flags` (the default timeout); ``env`` its
    environment (the shell, the scratch directory; default: this process's); ``directory`` the project's
    directory, where commands run (default: this process's current directory, for a registry with no
    project).
    """

    def describe() -> str:
        from ..limits import MAX_BYTES, MAX_LINES
        from ..paths import tmp_dir
        from . import _shell_choice

        source = os.environ if env is None else env
        return render(
            shell=_shell_choice.name(_shell_choice.choose(source)),
            directory=os.getcwd() if directory is None else os.fspath(directory),
            default_timeout=default_timeout_ms(getattr(flags, "bash_default_timeout_ms", None)),
            max_lines=MAX_LINES,
            max_bytes=MAX_BYTES,
            tmp=str(tmp_dir(source)),
        )

    return describe
