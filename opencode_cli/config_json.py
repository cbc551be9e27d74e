"""OpenCode's JSON config files: ``opencode.json`` / ``opencode.jsonc`` as OpenCode reads them.

* JSONC: ``//`` and ``/* */`` comments and trailing commas are allowed. They are blanked out (newlines
  kept), so a syntax error still points at the line and column of the file as written.
* Substitutions, done on the text before it is parsed, as OpenCode does:

  - ``{env:NAME}`` becomes the variable's value as is (an unset variable becomes the empty string);
  - ``{file:path}`` becomes the trimmed content of that file, escaped for a JSON string. A relative path is
    relative to the config file's folder (the working directory for ``OPENCODE_CONFIG_CONTENT``),
    ``~/`` is the home directory; a missing file is an error. References inside comments are not read.

The top level must be an object; an empty file is an empty config.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import paths
from .errors import ConfigError

ENV_REFERENCE = re.compile(r"\{env:([^}]+)\}")
FILE_REFERENCE = re.compile(r"\{file:([^}]+)\}")


def blank_jsonc(text: str, *, commas: bool = True) -> str:
    """``text`` with comments (and, with ``commas``, trailing commas) replaced by spaces.

    Every other character, newlines included, keeps its position. An unterminated block comment is a
    :class:`ValueError` whose message gives the line and column where it starts.
    """
    out = list(text)
    index, length = 0, len(text)
    in_string = False
    pending_comma: int | None = None
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            if char == '"':
                in_string = False
            index += 1
            continue
        if char == "/" and index + 1 < length and text[index + 1] in "/*":
            end = _comment_end(text, index)
            for position in range(index, end):
                if out[position] not in "\r\n":
                    out[position] = " "
            index = end
            continue
        if char in " \t\r\n":
            index += 1
            continue
        if commas and char in "}]" and pending_comma is not None:
            out[pending_comma] = " "
        pending_comma = index if char == "," else None
        in_string = char == '"'
        index += 1
    return "".join(out)


def _comment_end(text: str, start: int) -> int:
    """The index just after the comment starting at ``start``."""
    if text[start + 1] == "/":
        newline = text.find("\n", start)
        return len(text) if newline < 0 else newline
    close = text.find("*/", start + 2)
    if close < 0:
        line, column = _position(text, start)
        raise ValueError(f"{line}:{column}: unterminated /* comment")
    return close + 2


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def substitute(text: str, base: Path, env: Mapping[str, str], where: str) -> str:
    """``text`` with its ``{env:…}`` references replaced, then its ``{file:…}`` ones (outside comments)."""
    text = ENV_REFERENCE.sub(lambda match: env.get(match.group(1)) or "", text)
    try:
        visible = blank_jsonc(text, commas=False)
    except ValueError as error:
        raise ConfigError(f"{where}:{error}") from None
    pieces: list[str] = []
    last = 0
    for match in FILE_REFERENCE.finditer(visible):
        pieces.append(text[last : match.start()])
        pieces.append(json.dumps(_read_reference(match.group(1), match.group(0), base, env, where))[1:-1])
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _read_reference(name: str, reference: str, base: Path, env: Mapping[str, str], where: str) -> str:
    target = paths.home_dir(env) / name[2:] if name.startswith("~/") else base / name
    try:
        return target.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ConfigError(f'{where}: bad file reference: "{reference}": {target} does not exist') from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f'{where}: bad file reference: "{reference}": {error}') from None


def parse_jsonc(text: str, where: str) -> dict[str, Any]:
    """Parse JSONC ``text``; an error is a :class:`ConfigError` naming ``where``, the line and the column."""
    try:
        cleaned = blank_jsonc(text.removeprefix("\ufeff"))
    except ValueError as error:
        raise ConfigError(f"{where}:{error}") from None
    if not cleaned.strip():
        return {}
    try:
        value = json.loads(cleaned, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{where}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    except ValueError as error:
        raise ConfigError(f"{where}: invalid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: the config must be a JSON object, not {type(value).__name__}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_json(path: Path, env: Mapping[str, str], *, filled: bool = True) -> dict[str, Any]:
    """Read one ``opencode.json(c)``: substitutions (unless ``filled`` is false), then JSONC parsing."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text: {error}") from None
    return parse_jsonc(substitute(text, path.parent, env, str(path)) if filled else text, str(path))


def read_json_text(text: str, base: Path, env: Mapping[str, str], where: str) -> dict[str, Any]:
    """JSONC given inline (``OPENCODE_CONFIG_CONTENT``); ``{file:…}`` is relative to ``base``."""
    return parse_jsonc(substitute(text, base, env, where), where)
