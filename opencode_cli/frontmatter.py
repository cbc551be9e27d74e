"""The front matter of a Markdown file (``SKILL.md``): ``---`` lines around a small subset of YAML.

:func:`split_front_matter` finds the block; :func:`parse_yaml` reads the subset such files use
(``key: value`` pairs, quoted strings, ``|``/``>`` block scalars, simple lists and nested tables), so
reading a skill needs neither PyYAML nor pydantic. :class:`FrontMatterError` names the line at fault.
"""

from __future__ import annotations

import re
from typing import Any


class FrontMatterError(ValueError):
    """The front matter is not the YAML this parser reads; the message names the line."""


# Patterns of the front matter reader, compiled on first use (the re module keeps them).
_KEY = r"""^(?P<key>[^\s#'"\-?:,\[\]{}][^:#]*?|"[^"]*"|'[^']*')\s*:(?:\s+(?P<value>.*))?$"""
_INT = r"^[-+]?[0-9]+$"
_HEX_OCT = r"^0x[0-9a-fA-F]+$|^0o[0-7]+$"
_FLOAT = r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"
_SPECIAL_FLOAT = r"^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
_BLOCK = r"^(?P<style>[|>])(?P<flags>[-+0-9]*)\s*(#.*)?$"


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """``(front matter, body, line number of the first front-matter line)``.

    The front matter is ``None`` when the text does not start with a ``---`` line. Raises
    :class:`FrontMatterError` when the block is never closed.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")  # only "\n" ends a line (not the other characters str.splitlines knows)
    if lines[0].rstrip() != "---":
        return None, text, 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), 2
    raise FrontMatterError("the front matter starting on line 1 is never closed by a '---' line")


def parse_yaml(text: str, first_line: int = 1) -> dict[str, Any]:
    """A mapping from the simple YAML a front matter holds; :class:`FrontMatterError` names the line."""
    lines = [(first_line + i, line.rstrip("\r\n")) for i, line in enumerate(text.split("\n"))]
    parser = _Parser(lines)
    result = parser.mapping(0)
    parser.expect_end()
    return result


class _Parser:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.at = 0

    # helpers over lines

    @staticmethod
    def _blank(line: str) -> bool:
        stripped = line.strip()
        return not stripped or stripped.startswith("#")

    @staticmethod
    def _indent(line: str) -> int:
        return len(line) - len(line.lstrip(" \t"))

    def _skip_blank(self) -> None:
        while self.at < len(self.lines) and self._blank(self.lines[self.at][1]):
            self.at += 1

    def _next_indent(self) -> int | None:
        """The indentation of the next meaningful line (``None`` at the end)."""
        self._skip_blank()
        return self._indent(self.lines[self.at][1]) if self.at < len(self.lines) else None

    def expect_end(self) -> None:
        self._skip_blank()
        if self.at < len(self.lines):
            number, line = self.lines[self.at]
            raise FrontMatterError(f"line {number}: unexpected indentation in {line.strip()!r}")

    # structures

    def mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while (found := self._next_indent()) is not None and found == indent:
            number, line = self.lines[self.at]
            match = re.match(_KEY, line.strip())
            if match is None:
                raise FrontMatterError(f"line {number}: expected 'key: value', found {line.strip()!r}")
            key = match["key"].strip()
            if key[:1] in "\"'":
                key = key[1:-1]
            if key in result:
                raise FrontMatterError(f"line {number}: the key {key!r} appears twice")
            self.at += 1
            result[key] = self.value(match["value"], indent, number)
        return result

    def sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while (found := self._next_indent()) is not None and found == indent:
            number, line = self.lines[self.at]
            stripped = line.strip()
            if not (stripped == "-" or stripped.startswith("- ")):
                break
            self.at += 1
            rest = stripped[1:].strip()
            if re.match(_KEY, rest) and not rest.startswith(("'", '"')):
                # "- key: value" starts a table inside the list
                inner = indent + 2
                self.lines.insert(self.at, (number, " " * inner + rest))
                items.append(self.mapping(inner))
            else:
                items.append(self.value(rest or None, indent, number))
        return items

    def value(self, text: str | None, indent: int, number: int) -> Any:
        if text is not None:
            text = text.strip()
        if not text or text.startswith("#"):
            child = self._next_indent()
            if child is None or child <= indent:
                if child == indent and self.lines[self.at][1].strip().startswith("- "):
                    return self.sequence(indent)  # a list at the key's own indentation
                return None
            if self.lines[self.at][1].strip().startswith("-"):
                return self.sequence(child)
            return self.mapping(child)
        block = re.match(_BLOCK, text)
        if block:
            return self.block_scalar(block["style"], block["flags"], indent)
        if text[0] in "\"'":
            return self.quoted(text, number)
        if text[0] in "[{":
            return self.flow(text, number)
        return self.plain(text, indent)

    def block_scalar(self, style: str, flags: str, indent: int) -> str:
        chomp = "-" if "-" in flags else "+" if "+" in flags else ""
        digits = "".join(c for c in flags if c.isdigit())
        block_indent = indent + int(digits) if digits else None
        lines: list[str] = []
        while self.at < len(self.lines):
            line = self.lines[self.at][1]
            if line.strip():
                current = self._indent(line)
                if current <= indent or (block_indent is not None and current < block_indent):
                    break
                if block_indent is None:
                    block_indent = current
                lines.append(line[block_indent:])
            else:
                lines.append("")
            self.at += 1
        trailing = 0
        while lines and lines[-1] == "":
            lines.pop()
            trailing += 1
        if not lines:
            return ""
        body = "\n".join(lines) if style == "|" else _fold(lines)
        if chomp == "-":
            return body
        return body + "\n" * (trailing + 1 if chomp == "+" else 1)

    def quoted(self, text: str, number: int) -> str:
        quote = text[0]
        while True:
            end = _closing_quote(text, quote)
            if end is not None:
                break
            if self.at >= len(self.lines):
                raise FrontMatterError(f"line {number}: the {quote} quoted string is never closed")
            continuation = self.lines[self.at][1].strip()
            self.at += 1
            text += "\n" + continuation
        rest = text[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            raise FrontMatterError(f"line {number}: unexpected text after the quoted string: {rest!r}")
        inner = re.sub(r"[ \t]*\n[ \t]*", " ", text[1:end])  # line breaks in a quoted string fold
        if quote == "'":
            return inner.replace("''", "'")
        return _unescape(inner, number)

    def flow(self, text: str, number: int) -> Any:
        closing = "]" if text[0] == "[" else "}"
        while not text.rstrip().endswith(closing) and self.at < len(self.lines):
            text += " " + self.lines[self.at][1].strip()
            self.at += 1
        text = text.strip()
        if not text.endswith(closing):
            raise FrontMatterError(f"line {number}: {text[0]!r} is never closed")
        items = [item.strip() for item in _split_flow(text[1:-1])]
        items = [item for item in items if item]
        if closing == "]":
            return [self._flow_scalar(item, number) for item in items]
        result: dict[str, Any] = {}
        for item in items:
            key, colon, value = item.partition(":")
            if not colon:
                raise FrontMatterError(f"line {number}: expected 'key: value' in {item!r}")
            result[key.strip().strip("\"'")] = self._flow_scalar(value.strip(), number)
        return result

    def _flow_scalar(self, item: str, number: int) -> Any:
        if item[:1] in "\"'":
            end = _closing_quote(item, item[0])
            if end is None:
                raise FrontMatterError(f"line {number}: the {item[0]} quoted string is never closed")
            inner = item[1:end]
            return inner.replace("''", "'") if item[0] == "'" else _unescape(inner, number)
        return _typed(item)

    def plain(self, text: str, indent: int) -> Any:
        text = re.sub(r"\s+#.*$", "", text)
        parts = [text]
        # a plain scalar may go on over more-indented lines (folded with spaces)
        while self.at < len(self.lines):
            line = self.lines[self.at][1]
            if not line.strip() or self._indent(line) <= indent:
                break
            parts.append(re.sub(r"\s+#.*$", "", line.strip()))
            self.at += 1
        joined = " ".join(part for part in parts if part)
        return _typed(joined) if len(parts) == 1 else joined


def _fold(lines: list[str]) -> str:
    """The lines of a ``>`` block joined as YAML folds them: a single line break becomes a space, blank
    lines become line breaks, and more-indented lines keep their line breaks."""
    result = ""
    previous: str | None = None
    blanks = 0
    for line in lines:
        if not line:
            blanks += 1
            continue
        kind = "more" if line[0] in " \t" else "normal"
        if previous is None:
            result += "\n" * blanks
        elif previous == kind == "normal":
            result += "\n" * blanks if blanks else " "
        else:
            result += "\n" * (blanks + 1)
        result += line
        previous, blanks = kind, 0
    return result


def _closing_quote(text: str, quote: str) -> int | None:
    index = 1
    while index < len(text):
        char = text[index]
        if quote == '"' and char == "\\":
            index += 2
            continue
        if char == quote:
            if quote == "'" and text[index + 1 : index + 2] == "'":
                index += 2
                continue
            return index
        index += 1
    return None


_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
    "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
    "P": "\u2029",
}  # fmt: skip


def _unescape(text: str, number: int) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        code = text[index + 1 : index + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            index += 2
        elif code in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = text[index + 2 : index + 2 + width]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise FrontMatterError(f"line {number}: bad escape \\{code}{digits}") from None
            index += 2 + width
        else:
            raise FrontMatterError(f"line {number}: unknown escape \\{code} in a double-quoted string")
    return "".join(out)


def _split_flow(text: str) -> list[str]:
    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            current += char
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            current += char
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _typed(text: str) -> Any:
    """A plain scalar as YAML 1.2's core schema types it: null, booleans and numbers, else the string."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.match(_INT, text):
        return int(text, 10)
    if re.match(_HEX_OCT, text):
        return int(text, 0)
    if re.match(_FLOAT, text):
        return float(text)
    if re.match(_SPECIAL_FLOAT, text):
        return float(text.replace(".", "", 1))  # ".inf" -> "inf", "-.inf" -> "-inf", ".nan" -> "nan"
    return text


_TYPE_NAMES = {
    type(None): "empty (nothing after the colon)",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def kind_of(value: Any) -> str:
    """How the type of a front-matter value reads in a message (``a table``, ``a list``, …)."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return _TYPE_NAMES.get(type(value), type(value).__name__)
