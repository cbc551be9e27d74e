"""Turn ``opencode tools run`` arguments into a tool's argument object, guided by its JSON Schema.

Forms (httpie's, with fastmcp's schema-driven coercion):

* ``key=value`` — a string for a string field (``"007"`` stays ``"007"``); for other fields the text is
  parsed strictly as the field's type (integer, number, boolean, null, array/object as JSON, enum);
* ``key:=json`` — raw JSON, never coerced (``n:=5``, ``tags:='["a"]'``, ``opt:=null``);
* ``key=@path`` — the file's text (coerced like ``key=value``); ``key:=@path`` — JSON read from the file;
* a single positional JSON object (``'{"filePath": "x"}'``) — the base that ``key=...`` forms override.

An unknown key that matches exactly one schema key by case-insensitive suffix (``path`` → ``filePath``)
is accepted with a notice; any other unknown key is an error listing close matches.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

_INTEGER = re.compile(r"[+-]?\d+")
_TRUE = {"true", "yes", "on", "1", "y"}
_FALSE = {"false", "no", "off", "0", "n"}


class ArgsError(ValueError):
    """An argument that cannot be understood; the message says which and why."""


def _types(node: Any) -> list[str]:
    """The JSON types a schema node admits, in a stable order (null last)."""
    if not isinstance(node, Mapping):
        return []
    found: list[str] = []
    kind = node.get("type")
    if isinstance(kind, str):
        found.append(kind)
    elif isinstance(kind, list):
        found.extend(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key) or []:
            found.extend(_types(branch))
    if not found and "enum" in node:
        found.extend(sorted({_json_type(v) for v in node["enum"]}))
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda t: t == "null")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def coerce(text: str, node: Any) -> Any:
    """Parse ``text`` as the type ``node`` expects; raises :class:`ArgsError` when it cannot."""
    types = _types(node)
    if not types:
        try:
            return json.loads(text)
        except RecursionError:
            raise ArgsError("nested too deeply") from None
        except ValueError:
            return text
    if "string" in types:
        return text
    for kind in types:
        parsed = _parse_as(text, kind)
        if parsed is not _FAIL:
            return parsed
    raise ArgsError(f"expected {' or '.join(types)}, got {text!r}")


_FAIL = object()


def _parse_as(text: str, kind: str) -> Any:
    stripped = text.strip()
    if kind == "integer":
        return _int(stripped) if _INTEGER.fullmatch(stripped) else _FAIL
    if kind == "number":
        if _INTEGER.fullmatch(stripped):
            return _int(stripped)
        try:
            value = float(stripped)
        except ValueError:
            return _FAIL
        return value if value == value and value not in (float("inf"), float("-inf")) else _FAIL
    if kind == "boolean":
        lowered = stripped.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else _FAIL
    if kind == "null":
        return None if stripped in ("null", "") else _FAIL
    if kind in ("array", "object"):
        value = _json(stripped, _FAIL)
        return value if isinstance(value, list if kind == "array" else dict) else _FAIL
    return _FAIL


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts
        raise ArgsError(f"a number of {len(text)} digits is too long") from None


def _json(text: str, invalid: Any = None, what: str = "") -> Any:
    """``text`` parsed as JSON; ``invalid`` when it is not JSON (or an :class:`ArgsError` when no
    ``invalid`` is given); nesting too deep or a number too long is always an :class:`ArgsError`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ArgsError(f"{what}nested too deeply") from None
    except json.JSONDecodeError as error:
        if invalid is not None:
            return invalid
        raise ArgsError(f"{what}not valid JSON: {error}") from None
    except ValueError as error:  # a number of more digits than Python converts
        raise ArgsError(f"{what}{error}".split("; use sys.")[0]) from None


def resolve_key(key: str, properties: Iterable[str], notice: Callable[[str], None]) -> str:
    """The schema key ``key`` stands for (exact, case-insensitive, or unique suffix match)."""
    names = list(properties)
    if key in names:
        return key
    lowered = key.lower()
    same = [n for n in names if n.lower() == lowered]
    if len(same) == 1:
        notice(f"note: '{key}' taken as '{same[0]}'")
        return same[0]
    suffix = [n for n in names if n.lower().endswith(lowered)]
    if len(suffix) == 1:
        notice(f"note: '{key}' taken as '{suffix[0]}'")
        return suffix[0]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    if not close and suffix:
        close = suffix
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    accepted = ", ".join(names) if names else "(none)"
    raise ArgsError(f"unknown argument '{key}'.{hint} This tool takes: {accepted}")


def _split(token: str) -> tuple[str, str, str]:
    """``(key, operator, value)`` where operator is ``=``, ``:=``, ``=@`` or ``:=@``."""
    index = token.find("=")
    if index <= 0 or (index == 1 and token[0] == ":"):
        raise ArgsError(
            f"cannot read argument {token!r}: use key=value, key:=json, key=@file or one JSON object"
        )
    json_form = token[index - 1] == ":"
    key = token[: index - 1] if json_form else token[:index]
    value = token[index + 1 :]
    operator = ":=" if json_form else "="
    if value.startswith("@"):
        operator += "@"
        value = value[1:]
    return key, operator, value


def _read_file(path: str, key: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as error:
        raise ArgsError(f"{key}: cannot read {path}: {error.strerror or error}") from None
    except ValueError as error:  # not UTF-8 text, a NUL byte in the path
        raise ArgsError(f"{key}: cannot read {path!r}: {str(error).splitlines()[0]}") from None


def parse_arguments(
    tokens: list[str],
    schema: Mapping[str, Any],
    notice: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """Build the argument object for a tool call from command-line tokens and the tool's schema."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    result: dict[str, Any] = {}
    for position, token in enumerate(tokens):
        if position == 0 and token.lstrip().startswith("{"):
            base = _json(token, what="the JSON object argument: ")
            if not isinstance(base, dict):
                raise ArgsError("the JSON argument must be an object")
            result.update(base)
            continue
        key, operator, value = _split(token)
        name = resolve_key(key, properties, notice) if properties else key
        node = properties.get(name)
        if operator in (":=", ":=@"):
            text = _read_file(value, name) if operator == ":=@" else value
            result[name] = _json(text, what=f"{name}: ")
            continue
        text = _read_file(value, name) if operator == "=@" else value
        try:
            result[name] = coerce(text, node)
        except ArgsError as error:
            raise ArgsError(f"{name}: {error}") from None
    return result
