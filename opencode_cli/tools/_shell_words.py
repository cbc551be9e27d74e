"""Words of a bash command line read as the shell will read them, for the permission scan
(:mod:`._shell_scan`): quotes and backslashes removed, ``~`` and ``~user`` expanded, ``$NAME`` and
``${NAME}`` taken from the environment the command will get or from the state the scan follows, ANSI-C
strings decoded, and where a word's first unquoted glob character is. A word only known at run time
(command output, arithmetic, ``$1``, variables the shell sets) is ``None``: *dynamic*.
"""

from __future__ import annotations

import codecs
import os
import pwd
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

#: Variables the shell itself sets: their value is not known before running.
SHELL_VARIABLES = frozenset(
    """BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_ARGV0 BASH_CMDS BASH_COMMAND
    BASH_EXECUTION_STRING BASH_LINENO BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_VERSINFO BASH_VERSION
    COLUMNS DIRSTACK EPOCHREALTIME EPOCHSECONDS EUID FUNCNAME GROUPS HISTCMD HOSTNAME HOSTTYPE IFS LINENO
    LINES MACHTYPE OPTARG OPTIND OSTYPE PIPESTATUS PPID RANDOM REPLY SECONDS SHELLOPTS SHLVL SRANDOM UID
    ZSH_NAME ZSH_VERSION ZSH_SUBSHELL""".split()  # noqa: SIM905 - a list of words, read as one
)

#: Characters that start a glob in an unquoted word (``{`` for brace expansion).
_GLOB = frozenset("*?[{")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_ANSI_NUMERIC = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3})")


@dataclass
class Literal:
    """The value of a word as the shell sees it, and where its first unquoted glob character is."""

    text: str
    glob: int | None = None

    def __add__(self, other: Literal) -> Literal:
        glob = self.glob
        if glob is None and other.glob is not None:
            glob = len(self.text) + other.glob
        return Literal(self.text + other.text, glob)


@dataclass
class State:
    """The shell's state as far as the scan follows it: directory, directory stack, variables."""

    cwd: str
    oldpwd: str | None = None
    stack: list[str] = field(default_factory=list)
    variables: dict[str, str | None] = field(default_factory=dict)

    def copy(self) -> State:
        return State(self.cwd, self.oldpwd, list(self.stack), dict(self.variables))


def node_text(node: Node) -> str:
    """The source text of a syntax-tree node."""
    return (node.text or b"").decode("utf-8", "surrogatepass")


class Words:
    """Reads words for one scan: ``env`` is the environment the command will get (``$HOME``, ``$NAME``)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def literal(self, node: Node | None, state: State, *, first: bool = True) -> Literal | None:
        """The word's value as the shell will see it, or ``None`` when it is only known at run time."""
        if node is None:
            return None
        kind = node.type
        if kind == "command_name":
            return self.literal(node.named_children[0], state) if node.named_children else None
        if kind == "word":
            return self._word(node_text(node), first)
        if kind == "number":
            return Literal(node_text(node))
        if kind == "raw_string":
            return Literal(node_text(node)[1:-1])
        if kind == "ansi_c_string":
            return Literal(_ansi_c(node_text(node)[2:-1]))
        if kind == "string":
            return self._string(node, state)
        if kind == "translated_string":
            inner = next((c for c in node.named_children if c.type == "string"), None)
            return self._string(inner, state) if inner is not None else None
        if kind in ("simple_expansion", "expansion"):
            value = self._variable(node, state)
            return None if value is None else Literal(value)
        if kind == "concatenation":
            result = Literal("")
            for index, child in enumerate(node.children):
                part = self.literal(child, state, first=first and index == 0)
                if part is None:
                    return None
                result = result + part
            return result
        return None

    def _word(self, raw: str, first: bool) -> Literal:
        out: list[str] = []
        glob: int | None = None
        index = 0
        if first and raw.startswith("~"):
            end = raw.find("/")
            user = raw[1:] if end < 0 else raw[1:end]
            home = self.home(user)
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
        return Literal("".join(out), glob)

    def home(self, user: str) -> str | None:
        """The home directory ``~user`` names (``""``: the command's own ``$HOME``), if known."""
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

    def _string(self, node: Node, state: State) -> Literal | None:
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
        return Literal("".join(out))

    def _variable(self, node: Node, state: State) -> str | None:
        named = node.named_children
        if len(named) != 1 or named[0].type != "variable_name":
            return None
        if node.type == "expansion" and [c.type for c in node.children] != ["${", "variable_name", "}"]:
            return None
        name = node_text(named[0])
        if name in state.variables:
            return state.variables[name]
        if name == "PWD":
            return state.cwd
        if name == "OLDPWD":
            return state.oldpwd
        if name in SHELL_VARIABLES:
            return None
        return self.env.get(name, "")


def path_candidates(value: Literal, home: str | None) -> list[Literal]:
    """The texts in a word that may name a path: the word, or the value of an option or assignment."""
    text = value.text
    if not text or "\0" in text:
        return []
    name, equals, rest = text.partition("=")
    if text.startswith("-"):
        if not equals or not rest:
            return []  # an option (``-n``, ``--verbose``) or ``-`` (standard input)
        candidate = Literal(rest, shift(value.glob, len(name) + 1))
    elif equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        if not rest:
            return [value]
        candidate = Literal(rest, shift(value.glob, len(name) + 1))
        if value.glob is not None and value.glob <= len(name):
            candidate = Literal(rest, 0)
        return [value, _tilde(candidate, home)]
    else:
        return [value]
    if value.glob is not None and value.glob <= len(name):
        candidate = Literal(rest, 0)
    return [_tilde(candidate, home)]


def _tilde(value: Literal, home: str | None) -> Literal:
    """``~`` or ``~/...`` at the start of an option's value, expanded (to ask rather than miss)."""
    if home and (value.text == "~" or value.text.startswith("~/")):
        return Literal(home + value.text[1:], None if value.glob is None else value.glob + len(home) - 1)
    return value


def shift(glob: int | None, by: int) -> int | None:
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
