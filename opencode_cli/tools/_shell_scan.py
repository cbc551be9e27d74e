"""The permission scan of a bash command line (builtin-tools spec §2.3), on a real parser: tree-sitter-bash.

:func:`scan` parses the command and walks the syntax tree in source order. It returns

* ``patterns``: the source text of every simple command (inside pipelines, ``&&``/``||``/``;`` lists,
  subshells, ``$(...)``, backticks, process substitutions, here-documents, function bodies...), except
  the commands that only change directory (``cd``, ``pushd``...) — these become the ``bash`` ask;
* ``always``: for each such command its arity prefix plus `` *`` (:mod:`._arity`);
* ``dirs``: every directory outside the project that a path argument of a *file command*, a word of any
  other command naming an existing path, or a redirection target, lies in — these become one
  ``external_directory`` ask.

What OpenCode does (the baseline) and what this scan adds (marked *ours* below, so a reader can tell):

* File commands: OpenCode's list (``cd chdir popd pushd rm cp mv mkdir touch chmod chown cat`` and the
  PowerShell names). Ours: ``tee ln install rsync truncate rmdir unlink shred chgrp mkfifo head tail less
  more grep sed source .``, a shell's script file, ``dd`` (its ``if=``/``of=`` operands) and ``find``
  (its start paths, and the command after ``-exec``). A command named by a path (``/bin/rm``) or
  escaped (``\\rm``, ``"rm"``) is still recognised (ours).
* Any other command (ours): every argument word that names a path which *exists* outside the project
  counts, whatever the command (``awk 1 /x/secret``, ``ls /x``, ``python /x/s.py``, ``tar cf - /x``,
  ``git -C /x log``), and so do the value of ``--opt=PATH`` / ``-o=PATH`` and of ``NAME=PATH``
  (``make DESTDIR=/x``); words are read and resolved as below (``~``, ``$HOME``, ``cd`` tracking). A
  word that names nothing that exists (``-n``, ``HEAD~1``, a URL, a pattern, a number, an output file
  still to be made) asks nothing; a glob counts by its literal prefix, or the directory it lies in. The
  command name itself, values glued to a short option (``-I/x``) and paths inside larger words
  (``-v /x:/mnt``) are not read. A wrapper's own words count too (``xargs -a /x/list``). The directory
  asked for is the same as for a file command: the path itself when it is a directory, else the
  directory it lies in (real paths, symlinks resolved).
* Redirection targets (``>``, ``>>``, ``2>``, ``&>``, ``<``, here-documents' ``> file``) are checked like
  path arguments (ours; OpenCode does not look at redirections). Harmless devices such as ``/dev/null``
  are never reported, whichever command names them (ours).
* Words are read as the shell reads them (ours): quotes and backslashes are removed wherever they stand
  (``"/a b"/c``, ``/etc/x\\ y``, ``$'\\x2fetc'``), ``~`` and ``~user`` are expanded, and ``$NAME`` /
  ``${NAME}`` take their value from the environment the command will get, from an earlier static
  assignment in the same command line, ``$PWD`` from the tracked directory, and an unset variable is
  empty, as in the shell. What cannot be known before running — command output, arithmetic, ``$1``,
  variables set by ``read``/``for``/shell internals — makes the word *dynamic*: it is skipped, as upstream.
  A glob keeps its literal prefix (``/etc/pa*`` → ``/etc/pa``; ``*`` alone → the directory itself).
* The working directory is tracked (ours; OpenCode resolves every path against the ``workdir``): ``cd``,
  ``pushd`` and ``popd`` change it for the commands that follow in the same list, but not out of a
  subshell, a pipeline, a substitution or a background job (``&``), exactly as the shell scopes it.
* Wrappers run their argument as a command (ours): ``sudo doas env nice nohup time timeout xargs exec
  command builtin stdbuf ionice setsid`` and ``find -exec``; the wrapped command is scanned and added to
  the patterns too, so a rule ``rm *: deny`` also stops ``sudo rm``.
* Scripts given as static text are parsed and scanned in turn (ours): ``bash|sh|zsh|dash|ksh -c '...'``
  and ``eval '...'`` (nested at most eight deep).
* Backquoted commands in an unquoted here-document, which tree-sitter-bash leaves as plain text, are
  found and scanned (ours).
* A statement with redirections but no simple command in it (``> file``, ``[[ -f a ]] > log``) is a
  pattern of its own (ours), so the ``bash`` rules see it.

Paths are resolved against the tracked directory and judged by :func:`opencode_cli.boundary.is_inside`
(symlink-aware). An outside path adds its real directory when it is one, else the real directory it lies
in. A command line tree-sitter cannot parse without error is refused (``Failed to parse command``): the
parts of a broken tree cannot be trusted to be what the shell will run.
"""

from __future__ import annotations

import codecs
import functools
import os
import pwd
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import boundary
from ..errors import ToolError
from . import _arity

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

PARSE_FAILED = "Failed to parse command"
MAX_SCRIPT_DEPTH = 8

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

#: Variables the shell itself sets: their value is not known before running.
SHELL_VARIABLES = _words(
    """BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_ARGV0 BASH_CMDS BASH_COMMAND
    BASH_EXECUTION_STRING BASH_LINENO BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_VERSINFO BASH_VERSION
    COLUMNS DIRSTACK EPOCHREALTIME EPOCHSECONDS EUID FUNCNAME GROUPS HISTCMD HOSTNAME HOSTTYPE IFS LINENO
    LINES MACHTYPE OPTARG OPTIND OSTYPE PIPESTATUS PPID RANDOM REPLY SECONDS SHELLOPTS SHLVL SRANDOM UID
    ZSH_NAME ZSH_VERSION ZSH_SUBSHELL"""
)

#: Node types whose text is a command word for patterns and arity (as OpenCode counts them).
TOKEN_TYPES = frozenset({"command_name", "word", "string", "raw_string", "concatenation"})

#: Characters that start a glob in an unquoted word (``{`` for brace expansion).
_GLOB = frozenset("*?[{")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_BACKTICKS = re.compile(r"(?<!\\)`((?:[^`\\]|\\.)*)`", re.DOTALL)
_ANSI_NUMERIC = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3})")


@dataclass
class Scan:
    """What the scan found: ordered, without duplicates."""

    dirs: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    always: list[str] = field(default_factory=list)

    def _add(self, items: list[str], value: str) -> None:
        if value not in items:
            items.append(value)

    def add_dir(self, directory: str) -> None:
        """Record an outside directory."""
        self._add(self.dirs, directory)

    def add_command(self, pattern: str, tokens: list[str]) -> None:
        """Record a command's text and its "always" prefix."""
        if not pattern:
            return
        self._add(self.patterns, pattern)
        self._add(self.always, _arity.always_pattern(tokens) if tokens else pattern)

    @property
    def dir_patterns(self) -> list[str]:
        """``<dir>/*`` for every outside directory."""
        return [os.path.join(directory, "*") for directory in self.dirs]


@dataclass
class _Literal:
    """The value of a word as the shell sees it, and where its first unquoted glob character is."""

    text: str
    glob: int | None = None

    def __add__(self, other: _Literal) -> _Literal:
        glob = self.glob
        if glob is None and other.glob is not None:
            glob = len(self.text) + other.glob
        return _Literal(self.text + other.text, glob)


@dataclass
class _State:
    """The shell's state as far as the scan follows it: directory, directory stack, variables."""

    cwd: str
    oldpwd: str | None = None
    stack: list[str] = field(default_factory=list)
    variables: dict[str, str | None] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(self.cwd, self.oldpwd, list(self.stack), dict(self.variables))


@functools.cache
def _language() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language

    return Language(tree_sitter_bash.language())


_local = threading.local()


def _parser() -> Parser:
    """This thread's parser (a tree-sitter parser must not be shared between threads)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        from tree_sitter import Parser

        parser = _local.parser = Parser(_language())
    return parser


def parse(command: str) -> Node:
    """The root node of ``command``'s syntax tree; raises ``Failed to parse command`` on any error."""
    try:
        tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    except Exception:
        raise ToolError(PARSE_FAILED) from None
    if tree is None or tree.root_node.has_error:
        raise ToolError(PARSE_FAILED)
    return tree.root_node


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _field(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for index, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(index)
    return None


def scan(
    command: str,
    *,
    cwd: str,
    directory: str | os.PathLike[str],
    worktree: str | os.PathLike[str] | None,
    env: Mapping[str, str],
) -> Scan:
    """Scan ``command`` run in ``cwd`` for a project rooted at ``directory`` (and ``worktree``).

    ``env`` is the environment the command will get (``$HOME``, ``$NAME`` values). Raises
    :class:`~opencode_cli.errors.ToolError` ``Failed to parse command`` when the command does not parse.
    """
    root = parse(command)
    scanner = _Scanner(str(directory), None if worktree is None else str(worktree), env)
    try:
        scanner.visit(root, _State(cwd))
    except RecursionError:
        raise ToolError(PARSE_FAILED) from None
    return scanner.result


class _Scanner:
    def __init__(self, directory: str, worktree: str | None, env: Mapping[str, str]) -> None:
        self.directory = directory
        self.worktree = worktree
        self.env = env
        self.result = Scan()
        self.depth = 0

    # -- walking the tree ----------------------------------------------------------------------------------

    def visit(self, node: Node, state: _State) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, state)
        elif kind == "redirected_statement":
            self.redirected(node, state)
        elif kind == "file_redirect":
            self.redirect(node, state)
        elif kind in ("subshell", "command_substitution", "process_substitution", "function_definition"):
            self.sequence(node.children, state.copy())
        elif kind == "pipeline":
            for child in node.children:
                self.visit(child, state.copy())
        elif kind == "variable_assignment":
            self.assignment(node, state, persist=True)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, state)
        elif kind == "heredoc_redirect":
            self.sequence(node.children, state)
            self.heredoc_backticks(node, state)
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None:
                state.variables[_text(variable)] = None
            self.sequence(node.children, state)
        else:
            self.sequence(node.children, state)

    def sequence(self, children: Iterable[Node], state: _State) -> None:
        nodes = list(children)
        for index, child in enumerate(nodes):
            backgrounded = index + 1 < len(nodes) and nodes[index + 1].type == "&"
            self.visit(child, state.copy() if backgrounded else state)

    def redirected(self, node: Node, state: _State) -> None:
        body = node.child_by_field_name("body")
        if body is None or not _has_command(body):
            # ours: a statement that redirects without any simple command still names a bash pattern
            self.result.add_command(_text(node).strip(), [])
        before = state.copy()  # redirections are opened before the body runs (and changes directory)
        if body is not None:
            self.visit(body, state)
        for child in node.children:
            if child is not body:
                self.visit(child, before)

    def redirect(self, node: Node, state: _State) -> None:
        destination = node.child_by_field_name("destination")
        for child in node.children:
            if child is not destination:
                self.visit(child, state.copy())
        if destination is None:
            return
        self.visit(destination, state.copy())
        operator = next((c.type for c in node.children if not c.is_named), "")
        value = self.literal(destination, state)
        if value is None:
            return
        if operator in (">&", "<&", ">&-", "<&-") and (value.text.isdigit() or value.text == "-"):
            return  # duplicates or closes a file descriptor
        full = self.resolve(value, state)
        if full is not None:
            self.check(full)

    def heredoc_backticks(self, node: Node, state: _State) -> None:
        """Scan the backquoted commands of an unquoted here-document, which tree-sitter leaves as text."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if start is None or body is None or any(q in _text(start) for q in "'\"\\"):
            return  # a quoted delimiter: the body is taken literally
        raw = bytearray(body.text or b"")
        for child in body.named_children:
            if child.type != "heredoc_content":  # parsed already: blank it out
                raw[child.start_byte - body.start_byte : child.end_byte - body.start_byte] = b" " * (
                    child.end_byte - child.start_byte
                )
        for match in _BACKTICKS.finditer(raw.decode("utf-8", "surrogatepass")):
            self.script(re.sub(r"\\([\\`$])", r"\1", match.group(1)), state.copy())

    def assignment(self, node: Node, state: _State, *, persist: bool) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        for child in node.children:
            if child is not name_node:
                self.visit(child, state.copy())
        if not persist or name_node is None or name_node.type != "variable_name":
            return
        value = self.literal(value_node, state) if value_node is not None else _Literal("")
        state.variables[_text(name_node)] = None if value is None else value.text

    def declaration(self, node: Node, state: _State) -> None:
        unset = node.type == "unset_command" or (node.children and node.children[0].type == "unset")
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child, state, persist=True)
            elif child.type in ("variable_name", "word"):
                if unset:
                    state.variables[_text(child)] = ""
            else:
                self.visit(child, state.copy())

    # -- simple commands -------------------------------------------------------------------------------------

    def command(self, node: Node, state: _State) -> None:
        tokens = [_text(child) for child in node.children if child.type in TOKEN_TYPES]
        name_node = node.child_by_field_name("name")
        name = self.literal(name_node, state) if name_node is not None else None
        base = os.path.basename(name.text) if name is not None else None
        if tokens and base not in CWD_COMMANDS:
            parent = node.parent
            source = parent if parent is not None and parent.type == "redirected_statement" else node
            self.result.add_command(_text(source).strip(), tokens)
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child, state, persist=False)
            elif child.type != "word":
                self.visit(child, state.copy())
        arguments = [c for c in node.children if _field(c) == "argument"]
        if base is not None:
            self.simple(base, arguments, state)

    def simple(self, base: str, arguments: list[Node], state: _State) -> None:
        """The effects of running command ``base`` with ``arguments``: paths, wrapped commands, cd."""
        if base in WRAPPERS:
            self.wrapped(base, arguments, state)
        elif base in SHELLS:
            self.shell_script(arguments, state)
        elif base == "eval":
            self.eval_script(arguments, state)
        elif base == "find":
            self.find(arguments, state)
        elif base == "dd":
            for argument in arguments:
                value = self.literal(argument, state)
                if value is not None and value.text.startswith(("if=", "of=")):
                    self.path(_Literal(value.text[3:], _shift(value.glob, 3)), state)
        elif base in BASELINE_FILE_COMMANDS:
            for value in self.path_arguments(base, arguments, state, None):
                self.path(value, state)
            if base in CWD_COMMANDS:
                self.change_directory(base, arguments, state)
        elif base in EXTRA_FILE_COMMANDS:
            for value in self.path_arguments(base, arguments, state, EXTRA_FILE_COMMANDS[base]):
                self.path(value, state)
        elif base in READERS:
            for argument in arguments:
                value = self.literal(argument, state)
                if value is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value.text):
                    state.variables[value.text] = None
        else:
            self.existing_paths(arguments, state)

    def path_arguments(
        self, base: str, arguments: list[Node], state: _State, spec: ArgSpec | None
    ) -> list[_Literal]:
        """The literal path arguments (dynamic words are left out)."""
        spec = spec or ArgSpec()
        words = [self.literal(argument, state) for argument in arguments]
        found: list[_Literal] = []
        positional: list[_Literal] = []
        options_done = False
        scripted = False
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word is None:
                positional.append(_Literal("\0"))  # a dynamic word still takes a position
                continue
            text = word.text
            if not options_done and text == "--":
                options_done = True
                continue
            if not options_done and text.startswith("-") and text != "-":
                option, equals, value = text.partition("=")
                if option in spec.script_options:
                    scripted = True
                if equals:
                    if option in spec.path_valued or "/" in value or value.startswith("~"):
                        found.append(_Literal(value))
                elif (option in spec.valued or option in spec.path_valued) and index < len(words):
                    value_word = words[index]
                    index += 1
                    if option in spec.path_valued and value_word is not None:
                        found.append(value_word)
                continue
            if base == "chmod" and text.startswith("+"):
                continue
            positional.append(word)
        if spec.skip_first and not scripted and positional:
            positional = positional[1:]
        if spec.first_only:
            positional = positional[:1]
        return found + [word for word in positional if word.text != "\0"]

    def change_directory(self, base: str, arguments: list[Node], state: _State) -> None:
        words = [self.literal(argument, state) for argument in arguments]
        targets = [w for w in words if w is None or not (w.text.startswith("-") and w.text != "-")]
        previous = state.cwd
        if base == "popd":
            if state.stack:
                state.cwd = state.stack.pop()
                state.oldpwd = previous
            return
        if not targets:
            home = self.env.get("HOME")
            if home and base not in ("pushd",):
                state.cwd, state.oldpwd = home, previous
            return
        target = targets[0]
        if target is None:
            return  # dynamic: the directory is not known; paths keep resolving against the last known one
        if target.text == "-":
            if state.oldpwd is None:
                return
            new = state.oldpwd
        else:
            resolved = self.resolve(target, state)
            if resolved is None:
                return
            new = resolved
        if base == "pushd":
            state.stack.append(previous)
        state.cwd, state.oldpwd = new, previous

    def wrapped(self, base: str, arguments: list[Node], state: _State) -> None:
        valued = WRAPPERS[base]
        index = 0
        cwd_override: str | None = None
        skip_positional = 1 if base == "timeout" else 0
        while index < len(arguments):
            value = self.literal(arguments[index], state)
            if value is None:
                return  # the wrapped command is not known
            text = value.text
            if text == "--":
                index += 1
                break
            if text.startswith("-") and text != "-":
                option = text.split("=", 1)[0]
                if base in ("command", "builtin") and option in ("-v", "-V"):
                    return  # only looks the command up
                if option in valued and "=" not in text:
                    if base == "env" and option in ("-C", "--chdir") and index + 1 < len(arguments):
                        target = self.literal(arguments[index + 1], state)
                        cwd_override = None if target is None else self.resolve(target, state)
                    index += 2
                else:
                    if base == "env" and option == "--chdir" and "=" in text:
                        cwd_override = self.resolve(_Literal(text.split("=", 1)[1]), state)
                    index += 1
                continue
            if base == "env" and "=" in text:
                index += 1
                continue
            if skip_positional:
                skip_positional -= 1
                index += 1
                continue
            break
        self.existing_paths(arguments[:index], state)  # the wrapper's own words (``xargs -a FILE``)
        rest = arguments[index:]
        if not rest:
            return
        inner_state = state
        if cwd_override is not None:
            self.check(cwd_override)
            inner_state = state.copy()
            inner_state.cwd = cwd_override
        self.inner_command(rest, inner_state)

    def inner_command(self, words: list[Node], state: _State) -> None:
        """A command given as words of another (``sudo rm x``): a pattern of its own, and its effects."""
        name = self.literal(words[0], state)
        tokens = [_text(word) for word in words if word.type in TOKEN_TYPES]
        base = os.path.basename(name.text) if name is not None else None
        if base not in CWD_COMMANDS:
            self.result.add_command(" ".join(_text(word) for word in words), tokens)
        if base is not None:
            self.simple(base, words[1:], state)

    def find(self, arguments: list[Node], state: _State) -> None:
        index = 0
        words = [self.literal(argument, state) for argument in arguments]
        while index < len(words) and words[index] is not None and words[index].text in ("-H", "-L", "-P"):
            index += 1
        while index < len(words):
            word = words[index]
            if word is not None and (word.text.startswith(("-", "(", "!", ")")) or word.text == ","):
                break
            if word is not None:
                self.path(word, state)
            index += 1
        while index < len(words):
            word = words[index]
            index += 1
            if word is None:
                continue
            if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
                end = index
                while end < len(words) and not (words[end] is not None and words[end].text in (";", "+")):
                    end += 1
                if end > index:
                    self.inner_command(arguments[index:end], state.copy())
                index = end + 1
            elif word.text in ("-fprint", "-fprint0", "-fprintf", "-fls") and index < len(words):
                target = words[index]
                if target is not None:
                    self.path(target, state)
                index += 1

    def shell_script(self, arguments: list[Node], state: _State) -> None:
        words = [self.literal(argument, state) for argument in arguments]
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word is None:
                return
            text = word.text
            if text in ("-o", "+o", "-O", "+O"):
                index += 1
            elif text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
                script = words[index] if index < len(words) else None
                if script is not None:
                    self.script(script.text, state.copy())
                self.existing_paths(arguments[index + 1 :], state)  # the script's $0, $1...
                return
            elif text == "--" or not text.startswith(("-", "+")):
                script_file = words[index] if text == "--" and index < len(words) else word
                if script_file is not None and script_file.text != "--":
                    self.path(script_file, state)  # a script file is read like source reads one
                self.existing_paths(arguments[index + 1 if text == "--" else index :], state)
                return

    def eval_script(self, arguments: list[Node], state: _State) -> None:
        words = [self.literal(argument, state) for argument in arguments]
        if words and all(word is not None for word in words):
            self.script(" ".join(word.text for word in words if word is not None), state)

    def script(self, text: str, state: _State) -> None:
        if self.depth >= MAX_SCRIPT_DEPTH:
            raise ToolError(PARSE_FAILED)
        root = parse(text)
        self.depth += 1
        try:
            self.visit(root, state)
        finally:
            self.depth -= 1

    # -- paths ---------------------------------------------------------------------------------------------

    def path(self, value: _Literal, state: _State) -> None:
        full = self.resolve(value, state)
        if full is not None:
            self.check(full)

    def existing_paths(self, arguments: list[Node], state: _State) -> None:
        """Check every word of ``arguments`` that names an existing path (any command; ours).

        A word counts when, read as the shell reads it and resolved against the tracked directory, it
        names a path that exists now; so do the value of ``--opt=VALUE`` / ``-o=VALUE`` and of
        ``NAME=VALUE`` (``make DESTDIR=...``). A glob counts by its literal prefix, or the directory that
        prefix lies in. A word that names nothing (``-n``, ``HEAD~1``, a URL, a pattern, a number, a path
        that does not exist) asks nothing. Dynamic words are skipped, as everywhere.
        """
        for argument in arguments:
            value = self.literal(argument, state)
            if value is None:
                continue
            for candidate in _path_candidates(value, self._home("")):
                full = self.resolve(candidate, state)
                if full is None:
                    continue
                if not os.path.lexists(full):
                    if candidate.glob is None:
                        continue
                    full = os.path.dirname(full)
                    if not os.path.isdir(full):
                        continue
                self.check(full)

    def resolve(self, value: _Literal, state: _State) -> str | None:
        """The absolute path a literal word names (a glob keeps its literal prefix)."""
        text = value.text if value.glob is None else value.text[: value.glob]
        if "\0" in text:
            return None
        return os.path.normpath(os.path.join(state.cwd, text)) if text else state.cwd

    def check(self, full: str) -> None:
        if full in HARMLESS_TARGETS or full.startswith("/dev/fd/"):
            return
        if boundary.is_inside(full, self.directory, self.worktree):
            return
        real = boundary.real(full)
        self.result.add_dir(real if os.path.isdir(real) else os.path.dirname(real))

    # -- words -----------------------------------------------------------------------------------------------

    def literal(self, node: Node | None, state: _State, *, first: bool = True) -> _Literal | None:
        """The word's value as the shell will see it, or ``None`` when it is only known at run time."""
        if node is None:
            return None
        kind = node.type
        if kind == "command_name":
            return self.literal(node.named_children[0], state) if node.named_children else None
        if kind == "word":
            return self._word(_text(node), first)
        if kind == "number":
            return _Literal(_text(node))
        if kind == "raw_string":
            return _Literal(_text(node)[1:-1])
        if kind == "ansi_c_string":
            return _Literal(_ansi_c(_text(node)[2:-1]))
        if kind == "string":
            return self._string(node, state)
        if kind == "translated_string":
            inner = next((c for c in node.named_children if c.type == "string"), None)
            return self._string(inner, state) if inner is not None else None
        if kind in ("simple_expansion", "expansion"):
            value = self._variable(node, state)
            return None if value is None else _Literal(value)
        if kind == "concatenation":
            result = _Literal("")
            for index, child in enumerate(node.children):
                part = self.literal(child, state, first=first and index == 0)
                if part is None:
                    return None
                result = result + part
            return result
        return None

    def _word(self, raw: str, first: bool) -> _Literal:
        out: list[str] = []
        glob: int | None = None
        index = 0
        if first and raw.startswith("~"):
            end = raw.find("/")
            user = raw[1:] if end < 0 else raw[1:end]
            home = self._home(user)
            if home is not None:
                out.append(home)
                index = len(raw) if end < 0 else end
        while index < len(raw):
            char = raw[index]
            if char == "\\" and index + 1 < len(raw):
                if raw[index + 1] != "\n":
                    out.append(raw[index + 1])
                index += 2
                continue
            if char in _GLOB and glob is None:
                glob = sum(len(part) for part in out)
            out.append(char)
            index += 1
        return _Literal("".join(out), glob)

    def _home(self, user: str) -> str | None:
        if not user:
            home = self.env.get("HOME")
            if home:
                return home
            try:
                return pwd.getpwuid(os.getuid()).pw_dir
            except KeyError:
                return None
        if not re.fullmatch(r"[A-Za-z0-9._-]+", user):
            return None
        try:
            return pwd.getpwnam(user).pw_dir
        except KeyError:
            return None

    def _string(self, node: Node, state: _State) -> _Literal | None:
        source = node.text or b""
        base = node.start_byte
        out: list[str] = []
        position = base + 1
        end = node.end_byte - 1
        for child in node.children:
            if not child.is_named:
                continue
            if child.start_byte > position:
                out.append(_unescape_double(source[position - base : child.start_byte - base]))
            if child.type == "string_content":
                out.append(_unescape_double(source[child.start_byte - base : child.end_byte - base]))
            elif child.type in ("simple_expansion", "expansion"):
                value = self._variable(child, state)
                if value is None:
                    return None
                out.append(value)
            else:
                return None
            position = child.end_byte
        if end > position:
            out.append(_unescape_double(source[position - base : end - base]))
        return _Literal("".join(out))

    def _variable(self, node: Node, state: _State) -> str | None:
        named = node.named_children
        if len(named) != 1 or named[0].type != "variable_name":
            return None
        if node.type == "expansion" and [c.type for c in node.children] != ["${", "variable_name", "}"]:
            return None
        name = _text(named[0])
        if name in state.variables:
            return state.variables[name]
        if name == "PWD":
            return state.cwd
        if name == "OLDPWD":
            return state.oldpwd
        if name in SHELL_VARIABLES:
            return None
        return self.env.get(name, "")


def _has_command(node: Node) -> bool:
    if node.type == "command":
        return True
    return any(_has_command(child) for child in node.named_children)


def _path_candidates(value: _Literal, home: str | None) -> list[_Literal]:
    """The texts in a word that may name a path: the word, or the value of an option or assignment."""
    text = value.text
    if not text or "\0" in text:
        return []
    name, equals, rest = text.partition("=")
    if text.startswith("-"):
        if not equals or not rest:
            return []  # an option (``-n``, ``--verbose``) or ``-`` (standard input)
        candidate = _Literal(rest, _shift(value.glob, len(name) + 1))
    elif equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        if not rest:
            return [value]
        candidate = _Literal(rest, _shift(value.glob, len(name) + 1))
        if value.glob is not None and value.glob <= len(name):
            candidate = _Literal(rest, 0)
        return [value, _tilde(candidate, home)]
    else:
        return [value]
    if value.glob is not None and value.glob <= len(name):
        candidate = _Literal(rest, 0)
    return [_tilde(candidate, home)]


def _tilde(value: _Literal, home: str | None) -> _Literal:
    """``~`` or ``~/...`` at the start of an option's value, expanded (to ask rather than miss)."""
    if home and (value.text == "~" or value.text.startswith("~/")):
        return _Literal(home + value.text[1:], None if value.glob is None else value.glob + len(home) - 1)
    return value


def _shift(glob: int | None, by: int) -> int | None:
    return None if glob is None else max(0, glob - by)


def _unescape_double(raw: bytes) -> str:
    text = raw.decode("utf-8", "surrogatepass")
    return re.sub(r'\\([\\"$`])|\\\n', lambda m: m.group(1) or "", text)


def _ansi_c(body: str) -> str:
    def numeric(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU":
            return chr(int(code[1:], 16))
        return chr(int(code, 8) & 0xFF)

    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 >= len(body):
            out.append(char)
            index += 1
            continue
        following = body[index + 1]
        if following in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[following])
            index += 2
            continue
        match = _ANSI_NUMERIC.match(body, index)
        if match:
            out.append(numeric(match))
            index = match.end()
            continue
        out.append(char)
        index += 1
    return codecs.decode(codecs.encode("".join(out), "utf-8", "surrogatepass"), "utf-8", "replace")
