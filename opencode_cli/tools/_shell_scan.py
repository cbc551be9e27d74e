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

The tables of what the scan knows about commands are :mod:`._shell_commands`; how a word is read is
:mod:`._shell_words`. This module walks the tree.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import boundary
from ..errors import ToolError
from . import _arity
from ._shell_commands import (
    BASELINE_FILE_COMMANDS,
    CWD_COMMANDS,
    EXTRA_FILE_COMMANDS,
    HARMLESS_TARGETS,
    READERS,
    SHELLS,
    WRAPPERS,
    ArgSpec,
)
from ._shell_words import Literal, State, Words, node_text, path_candidates, shift

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

PARSE_FAILED = "Failed to parse command"
MAX_SCRIPT_DEPTH = 8

#: Node types whose text is a command word for patterns and arity (as OpenCode counts them).
TOKEN_TYPES = frozenset({"command_name", "word", "string", "raw_string", "concatenation"})

_BACKTICKS = re.compile(r"(?<!\\)`((?:[^`\\]|\\.)*)`", re.DOTALL)


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
        scanner.visit(root, State(cwd))
    except RecursionError:
        raise ToolError(PARSE_FAILED) from None
    return scanner.result


class _Scanner:
    def __init__(self, directory: str, worktree: str | None, env: Mapping[str, str]) -> None:
        self.directory = directory
        self.worktree = worktree
        self.env = env
        self.words = Words(env)
        self.result = Scan()
        self.depth = 0

    # -- walking the tree ----------------------------------------------------------------------------------

    def visit(self, node: Node, state: State) -> None:
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
                state.variables[node_text(variable)] = None
            self.sequence(node.children, state)
        else:
            self.sequence(node.children, state)

    def sequence(self, children: Iterable[Node], state: State) -> None:
        nodes = list(children)
        for index, child in enumerate(nodes):
            backgrounded = index + 1 < len(nodes) and nodes[index + 1].type == "&"
            self.visit(child, state.copy() if backgrounded else state)

    def redirected(self, node: Node, state: State) -> None:
        body = node.child_by_field_name("body")
        if body is None or not _has_command(body):
            # ours: a statement that redirects without any simple command still names a bash pattern
            self.result.add_command(node_text(node).strip(), [])
        before = state.copy()  # redirections are opened before the body runs (and changes directory)
        if body is not None:
            self.visit(body, state)
        for child in node.children:
            if child is not body:
                self.visit(child, before)

    def redirect(self, node: Node, state: State) -> None:
        destination = node.child_by_field_name("destination")
        for child in node.children:
            if child is not destination:
                self.visit(child, state.copy())
        if destination is None:
            return
        self.visit(destination, state.copy())
        operator = next((c.type for c in node.children if not c.is_named), "")
        value = self.words.literal(destination, state)
        if value is None:
            return
        if operator in (">&", "<&", ">&-", "<&-") and (value.text.isdigit() or value.text == "-"):
            return  # duplicates or closes a file descriptor
        full = self.resolve(value, state)
        if full is not None:
            self.check(full)

    def heredoc_backticks(self, node: Node, state: State) -> None:
        """Scan the backquoted commands of an unquoted here-document, which tree-sitter leaves as text."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if start is None or body is None or any(q in node_text(start) for q in "'\"\\"):
            return  # a quoted delimiter: the body is taken literally
        raw = bytearray(body.text or b"")
        for child in body.named_children:
            if child.type != "heredoc_content":  # parsed already: blank it out
                raw[child.start_byte - body.start_byte : child.end_byte - body.start_byte] = b" " * (
                    child.end_byte - child.start_byte
                )
        for match in _BACKTICKS.finditer(raw.decode("utf-8", "surrogatepass")):
            self.script(re.sub(r"\\([\\`$])", r"\1", match.group(1)), state.copy())

    def assignment(self, node: Node, state: State, *, persist: bool) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        for child in node.children:
            if child is not name_node:
                self.visit(child, state.copy())
        if not persist or name_node is None or name_node.type != "variable_name":
            return
        value = self.words.literal(value_node, state) if value_node is not None else Literal("")
        state.variables[node_text(name_node)] = None if value is None else value.text

    def declaration(self, node: Node, state: State) -> None:
        unset = node.type == "unset_command" or (node.children and node.children[0].type == "unset")
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child, state, persist=True)
            elif child.type in ("variable_name", "word"):
                if unset:
                    state.variables[node_text(child)] = ""
            else:
                self.visit(child, state.copy())

    # -- simple commands -------------------------------------------------------------------------------------

    def command(self, node: Node, state: State) -> None:
        tokens = [node_text(child) for child in node.children if child.type in TOKEN_TYPES]
        name_node = node.child_by_field_name("name")
        name = self.words.literal(name_node, state) if name_node is not None else None
        base = os.path.basename(name.text) if name is not None else None
        if tokens and base not in CWD_COMMANDS:
            parent = node.parent
            source = parent if parent is not None and parent.type == "redirected_statement" else node
            self.result.add_command(node_text(source).strip(), tokens)
        for child in node.children:
            if child.type == "variable_assignment":
                self.assignment(child, state, persist=False)
            elif child.type != "word":
                self.visit(child, state.copy())
        arguments = [c for c in node.children if _field(c) == "argument"]
        if base is not None:
            self.simple(base, arguments, state)

    def simple(self, base: str, arguments: list[Node], state: State) -> None:
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
                value = self.words.literal(argument, state)
                if value is not None and value.text.startswith(("if=", "of=")):
                    self.path(Literal(value.text[3:], shift(value.glob, 3)), state)
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
                value = self.words.literal(argument, state)
                if value is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value.text):
                    state.variables[value.text] = None
        else:
            self.existing_paths(arguments, state)

    def path_arguments(
        self, base: str, arguments: list[Node], state: State, spec: ArgSpec | None
    ) -> list[Literal]:
        """The literal path arguments (dynamic words are left out)."""
        spec = spec or ArgSpec()
        words = [self.words.literal(argument, state) for argument in arguments]
        found: list[Literal] = []
        positional: list[Literal] = []
        options_done = False
        scripted = False
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word is None:
                positional.append(Literal("\0"))  # a dynamic word still takes a position
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
                        found.append(Literal(value))
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

    def change_directory(self, base: str, arguments: list[Node], state: State) -> None:
        words = [self.words.literal(argument, state) for argument in arguments]
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

    def wrapped(self, base: str, arguments: list[Node], state: State) -> None:
        valued = WRAPPERS[base]
        index = 0
        cwd_override: str | None = None
        skip_positional = 1 if base == "timeout" else 0
        while index < len(arguments):
            value = self.words.literal(arguments[index], state)
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
                        target = self.words.literal(arguments[index + 1], state)
                        cwd_override = None if target is None else self.resolve(target, state)
                    index += 2
                else:
                    if base == "env" and option == "--chdir" and "=" in text:
                        cwd_override = self.resolve(Literal(text.split("=", 1)[1]), state)
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

    def inner_command(self, words: list[Node], state: State) -> None:
        """A command given as words of another (``sudo rm x``): a pattern of its own, and its effects."""
        name = self.words.literal(words[0], state)
        tokens = [node_text(word) for word in words if word.type in TOKEN_TYPES]
        base = os.path.basename(name.text) if name is not None else None
        if base not in CWD_COMMANDS:
            self.result.add_command(" ".join(node_text(word) for word in words), tokens)
        if base is not None:
            self.simple(base, words[1:], state)

    def find(self, arguments: list[Node], state: State) -> None:
        index = 0
        words = [self.words.literal(argument, state) for argument in arguments]
        while index < len(words) and (flag := words[index]) is not None and flag.text in ("-H", "-L", "-P"):
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
                while end < len(words) and not ((last := words[end]) is not None and last.text in (";", "+")):
                    end += 1
                if end > index:
                    self.inner_command(arguments[index:end], state.copy())
                index = end + 1
            elif word.text in ("-fprint", "-fprint0", "-fprintf", "-fls") and index < len(words):
                target = words[index]
                if target is not None:
                    self.path(target, state)
                index += 1

    def shell_script(self, arguments: list[Node], state: State) -> None:
        words = [self.words.literal(argument, state) for argument in arguments]
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

    def eval_script(self, arguments: list[Node], state: State) -> None:
        words = [self.words.literal(argument, state) for argument in arguments]
        if words and all(word is not None for word in words):
            self.script(" ".join(word.text for word in words if word is not None), state)

    def script(self, text: str, state: State) -> None:
        if self.depth >= MAX_SCRIPT_DEPTH:
            raise ToolError(PARSE_FAILED)
        root = parse(text)
        self.depth += 1
        try:
            self.visit(root, state)
        finally:
            self.depth -= 1

    # -- paths ---------------------------------------------------------------------------------------------

    def path(self, value: Literal, state: State) -> None:
        full = self.resolve(value, state)
        if full is not None:
            self.check(full)

    def existing_paths(self, arguments: list[Node], state: State) -> None:
        """Check every word of ``arguments`` that names an existing path (any command; ours).

        A word counts when, read as the shell reads it and resolved against the tracked directory, it
        names a path that exists now; so do the value of ``--opt=VALUE`` / ``-o=VALUE`` and of
        ``NAME=VALUE`` (``make DESTDIR=...``). A glob counts by its literal prefix, or the directory that
        prefix lies in. A word that names nothing (``-n``, ``HEAD~1``, a URL, a pattern, a number, a path
        that does not exist) asks nothing. Dynamic words are skipped, as everywhere.
        """
        for argument in arguments:
            value = self.words.literal(argument, state)
            if value is None:
                continue
            for candidate in path_candidates(value, self.words.home("")):
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

    def resolve(self, value: Literal, state: State) -> str | None:
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


def _has_command(node: Node) -> bool:
    if node.type == "command":
        return True
    return any(_has_command(child) for child in node.named_children)
