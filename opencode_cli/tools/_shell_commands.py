"""What the bash permission scan (:mod:`._shell_scan`) knows about commands: which ones change directory,
which take paths and how their options take values, which run another command, which are shells, which
set variables at run time, and the devices never reported.

The scan's documentation (what OpenCode does, and what is ours) is :mod:`._shell_scan`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Commands that change the working directory (they ask no ``bash`` permission of their own).
CWD_COMMANDS = frozenset({"cd", "chdir", "popd", "pushd", "push-location", "set-location"})

#: OpenCode's file commands: each non-option argument is a path (builtin-tools spec §2.3).
BASELINE_FILE_COMMANDS = CWD_COMMANDS | frozenset(
    {
        "rm", "cp", "mv", "mkdir", "touch", "chmod", "chown", "cat",
        "get-content", "set-content", "add-content", "copy-item", "move-item", "remove-item", "new-item",
        "rename-item",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ArgSpec:
    """How to find the paths among a command's arguments (for the commands this scan adds)."""

    valued: frozenset[str] = frozenset()
    """Options whose value is the next word and is not a path."""
    path_valued: frozenset[str] = frozenset()
    """Options whose value is the next word and is a path."""
    skip_first: bool = False
    """The first non-option word is not a path (a pattern, a script, a group) unless ``script_options``."""
    script_options: frozenset[str] = frozenset()
    """Options that carry the pattern or script, so that no positional word is skipped."""
    first_only: bool = False
    """Only the first non-option word is a path (``source FILE ARGS...``)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _spec(**values: object) -> ArgSpec:
    converted = {
        key: frozenset(str(value).split()) if key.endswith(("valued", "options")) else value
        for key, value in values.items()
    }
    # the keys are ArgSpec's fields, each value of its field's type: mypy sees one type for all values
    return ArgSpec(**converted)  # type: ignore[arg-type]


#: File commands this scan adds to OpenCode's list (ours).
EXTRA_FILE_COMMANDS: dict[str, ArgSpec] = {
    "tee": ArgSpec(),
    "ln": _spec(valued="-S --suffix", path_valued="-t --target-directory"),
    "install": _spec(valued="-m --mode -o --owner -g --group -S --suffix", path_valued="-t"),
    "rsync": _spec(valued="-e --rsh --exclude --include --filter -f --chmod --chown", path_valued="-T"),
    "truncate": _spec(valued="-s --size", path_valued="-r --reference"),
    "rmdir": ArgSpec(),
    "unlink": ArgSpec(),
    "shred": _spec(valued="-n --iterations -s --size"),
    "chgrp": ArgSpec(skip_first=True),
    "mkfifo": _spec(valued="-m --mode"),
    "head": _spec(valued="-n -c --lines --bytes"),
    "tail": _spec(valued="-n -c --lines --bytes -s --sleep-interval --pid"),
    "less": ArgSpec(),
    "more": ArgSpec(),
    "grep": _spec(
        valued="-e --regexp -m --max-count -A -B -C --context --include --exclude --exclude-dir",
        path_valued="-f --file",
        skip_first=True,
        script_options="-e --regexp -f --file",
    ),
    "sed": _spec(
        valued="-e --expression -l --line-length",
        path_valued="-f --file",
        skip_first=True,
        script_options="-e --expression -f --file",
    ),
    "source": ArgSpec(first_only=True),
    ".": ArgSpec(first_only=True),
}

#: Commands that run another command given as their arguments (ours), with their options taking a value.
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": _words("-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r -t -U -T"),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": _words("-I -i -n -L -l -P -s -d -E -e -a --arg-file --max-args --max-procs --delimiter"),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-t"}),
    "setsid": frozenset(),
}  # fmt: skip

#: Builtins that set the variables named by their arguments to values known only at run time.
READERS = frozenset({"read", "mapfile", "readarray", "getopts"})

#: Shells whose ``-c`` script is scanned in turn (ours).
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})

#: Paths that are never reported (ours): devices every program may use.
HARMLESS_TARGETS = frozenset(
    {"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random",
     "/dev/urandom", "/dev/full"}
)  # fmt: skip


#: The variable and the words that grant or withdraw workspace trust (:mod:`opencode_cli.trust`).
TRUST_VARIABLE = "OPENCODE_TRUST"
TRUST_SUBCOMMANDS = frozenset({"trust", "untrust"})
#: ``opencode``'s root options that take a value (skipped to find its subcommand).
OPENCODE_VALUED = frozenset({"-p", "--disable-plugin"})


def changes_trust(command: str) -> bool:
    """Whether a simple command grants or withdraws workspace trust: ``opencode trust``/``untrust``,
    ``opencode --trust …``, or any word setting ``OPENCODE_TRUST`` (``OPENCODE_TRUST=1 opencode …``,
    ``export OPENCODE_TRUST=1``). Such a command asks ``config``: a model cannot trust for the user."""
    import os
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if any(word.startswith(TRUST_VARIABLE + "=") or word == TRUST_VARIABLE for word in words):
        return True
    for index, word in enumerate(words):
        if os.path.basename(word) != "opencode" and word != "opencode_cli":
            continue
        rest = iter(words[index + 1 :])
        for argument in rest:
            if argument == "--trust":
                return True
            if argument in OPENCODE_VALUED:
                next(rest, None)
            elif not argument.startswith("-"):
                if argument in TRUST_SUBCOMMANDS:
                    return True
                break
    return False
