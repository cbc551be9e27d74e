"""The ``apply_patch`` patch format: parsing, and computing a file's new text from update chunks.

Pure functions only (no file system, no tool imports); builtin-tools spec §8.1–§8.2.

The format::

    *** Begin Patch
    *** Add File: path            (then "+" lines: the new file's text)
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path          (optional, only right after the Update header)
    @@ optional context line
     unchanged line
    -removed line
    +added line
    *** End of File                (optional: the chunk is anchored at the end of the file)
    *** End Patch

Parsing follows OpenCode's rules, with these deliberate differences:

* ``*** End of File`` is honoured (``honour_end_of_file=True``, the default): it flags the chunk before it
  and ends that chunk, and further ``@@`` chunks of the same file are still read. OpenCode's parser stops the
  whole Update section at that line (every line starting with ``***`` does), so its flag is never set and
  chunks after the marker are silently dropped. Pass ``honour_end_of_file=False`` for that behaviour.
* Sections never read past the ``*** End Patch`` line (OpenCode's could, when that line was indented).

Applying chunks (:func:`derive_new_contents`) differs from OpenCode in these documented ways:

* an end-of-file chunk first tries the window that ends at the file's last line (each of the four passes
  does), then searches forward as usual;
* a pure insertion (a chunk with ``+`` lines only) that follows an ``@@ context`` line goes right after
  that line; without a context line it is appended at the end of the file, as OpenCode always does;
* a file whose line breaks are all CRLF keeps CRLF: the chunks are matched and applied on its LF form and
  the result is written back with CRLF (OpenCode leaves the changed lines with LF, mixing the endings).
  Other files (LF, mixed, no line break at all) are handled exactly as OpenCode does;
* blank lines at the end of a file are kept (the v1.18.3 applier drops one of them when nothing else
  follows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File:"
DELETE_FILE = "*** Delete File:"
UPDATE_FILE = "*** Update File:"
MOVE_TO = "*** Move to:"
END_OF_FILE = "*** End of File"
CHUNK = "@@"
SECTION = "***"

BOM = "\ufeff"

# What JavaScript's String.prototype.trim() removes (Python's str.strip() set differs: it keeps U+FEFF and
# removes U+001C..U+001F and U+0085).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS = "[" + re.escape(JS_WHITESPACE) + "]"

# ``cat <<'EOF'`` / ``<<EOF`` … ``EOF`` around the whole patch (the delimiter is ASCII word characters).
_HEREDOC = re.compile(
    rf"^(?:cat{_WS}+)?<<['\"]?([A-Za-z0-9_]+)['\"]?{_WS}*\n(.*?)\n\1{_WS}*\Z",
    re.DOTALL,
)
# ``apply_patch <<'EOF'`` … ``EOF`` inside a ``bash -lc`` script.
_SHELL_HEREDOC = re.compile(
    rf"(?:apply_patch|applypatch){_WS}*<<['\"]([A-Za-z0-9_]+)['\"]{_WS}*\n(.*?)\n\1",
    re.DOTALL,
)
APPLY_PATCH_COMMANDS = ("apply_patch", "applypatch")

# Typographic punctuation that the last seek pass treats as its ASCII look-alike.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015", "-"),
        "\u2026": "...",
        "\u00a0": " ",
    }
)


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; ``str()`` is the bare message (OpenCode adds ``Error: ``)."""


# -- the parsed form ------------------------------------------------------------------------------------


@dataclass
class UpdateChunk:
    """One ``@@`` chunk: the lines to find (``old_lines``) and what replaces them (``new_lines``)."""

    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    change_context: str | None = None
    """The text after ``@@`` (trimmed): a line to find first, the chunk is then sought after it."""
    is_end_of_file: bool = False
    """The chunk was followed by ``*** End of File``: its lines are expected at the end of the file."""


@dataclass
class AddFile:
    """``*** Add File``: create (or overwrite) ``path`` with ``contents`` (no final newline yet)."""

    path: str
    contents: str
    type: Literal["add"] = "add"


@dataclass
class DeleteFile:
    """``*** Delete File``: remove ``path``."""

    path: str
    type: Literal["delete"] = "delete"


@dataclass
class UpdateFile:
    """``*** Update File``: change ``path`` chunk by chunk, and rename it to ``move_path`` if given."""

    path: str
    chunks: list[UpdateChunk] = field(default_factory=list)
    move_path: str | None = None
    type: Literal["update"] = "update"


Hunk = AddFile | DeleteFile | UpdateFile


# -- parsing --------------------------------------------------------------------------------------------


def js_trim(text: str) -> str:
    """``text`` without leading and trailing whitespace, as JavaScript's ``trim()`` sees whitespace."""
    return text.strip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    """``text`` without trailing whitespace, as JavaScript's ``trimEnd()`` sees whitespace."""
    return text.rstrip(JS_WHITESPACE)


def unwrap_heredoc(text: str) -> str:
    """The body of a ``cat <<'EOF' … EOF`` (or ``<<EOF … EOF``) wrapper, or ``text`` unchanged."""
    match = _HEREDOC.match(text)
    return match.group(2) if match else text


def _header_path(line: str, prefix: str) -> str | None:
    """The path of a ``prefix`` header line, or ``None`` when the line is not one (or names no path)."""
    if not line.startswith(prefix):
        return None
    return js_trim(line[len(prefix) :]) or None


def parse_patch(text: str, *, honour_end_of_file: bool = True) -> list[Hunk]:
    """The hunks of a patch, in order.

    Raises :class:`PatchError` (``Invalid patch format: missing Begin/End markers``) when the begin and end
    lines are missing or out of order. Lines the grammar does not know are skipped, so a patch may parse
    into no hunks at all.
    """
    lines = unwrap_heredoc(js_trim(text)).split("\n")
    begin = _first(lines, BEGIN_PATCH)
    end = _first(lines, END_PATCH)
    if begin < 0 or end < 0 or begin >= end:
        raise PatchError("Invalid patch format: missing Begin/End markers")

    hunks: list[Hunk] = []
    index = begin + 1
    while index < end:
        line = lines[index]
        if (path := _header_path(line, ADD_FILE)) is not None:
            contents, index = _add_contents(lines, index + 1, end)
            hunks.append(AddFile(path, contents))
        elif (path := _header_path(line, DELETE_FILE)) is not None:
            hunks.append(DeleteFile(path))
            index += 1
        elif (path := _header_path(line, UPDATE_FILE)) is not None:
            index += 1
            move_path = None
            if index < end and lines[index].startswith(MOVE_TO):
                move_path = js_trim(lines[index][len(MOVE_TO) :]) or None
                index += 1
            chunks, index = _update_chunks(lines, index, end, honour_end_of_file)
            hunks.append(UpdateFile(path, chunks, move_path))
        else:
            index += 1
    return hunks


def _first(lines: Sequence[str], marker: str) -> int:
    for index, line in enumerate(lines):
        if js_trim(line) == marker:
            return index
    return -1


def _add_contents(lines: Sequence[str], index: int, end: int) -> tuple[str, int]:
    """The ``+`` lines of an Add section joined with ``\\n`` (other lines are ignored)."""
    kept = []
    while index < end and not lines[index].startswith(SECTION):
        if lines[index].startswith("+"):
            kept.append(lines[index][1:])
        index += 1
    return "\n".join(kept), index


def _update_chunks(
    lines: Sequence[str], index: int, end: int, honour_end_of_file: bool
) -> tuple[list[UpdateChunk], int]:
    """The ``@@`` chunks of an Update section; lines before the first ``@@`` are ignored."""
    chunks: list[UpdateChunk] = []
    while index < end and not lines[index].startswith(SECTION):
        if not lines[index].startswith(CHUNK):
            index += 1
            continue
        chunk = UpdateChunk(change_context=js_trim(lines[index][len(CHUNK) :]) or None)
        index += 1
        while index < end:
            line = lines[index]
            if line.startswith(SECTION):
                if honour_end_of_file and js_trim(line) == END_OF_FILE:
                    chunk.is_end_of_file = True
                    index += 1
                break
            if line.startswith(CHUNK):
                break
            marker, body = line[:1], line[1:]
            if marker == " ":
                chunk.old_lines.append(body)
                chunk.new_lines.append(body)
            elif marker == "-":
                chunk.old_lines.append(body)
            elif marker == "+":
                chunk.new_lines.append(body)
            index += 1
        chunks.append(chunk)
    return chunks, index


@dataclass
class ApplyPatchInvocation:
    """What :func:`maybe_parse_apply_patch` found in a command line."""

    kind: Literal["body", "patch_parse_error", "not_apply_patch"]
    patch: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    error: PatchError | None = None


def maybe_parse_apply_patch(argv: Sequence[str]) -> ApplyPatchInvocation:
    """Recognise an ``apply_patch`` invocation in ``argv`` and parse its patch.

    Two shapes count: ``["apply_patch" | "applypatch", patch]`` and
    ``["bash", "-lc", "apply_patch <<'EOF'\\n…\\nEOF"]`` (a quoted heredoc delimiter). Anything else is
    ``not_apply_patch``; a recognised invocation whose patch does not parse is ``patch_parse_error``.
    """
    patch: str | None = None
    if len(argv) == 2 and argv[0] in APPLY_PATCH_COMMANDS:
        patch = argv[1]
    elif len(argv) == 3 and argv[0] == "bash" and argv[1] == "-lc":
        match = _SHELL_HEREDOC.search(argv[2])
        if match:
            patch = match.group(2)
    if patch is None:
        return ApplyPatchInvocation("not_apply_patch")
    try:
        hunks = parse_patch(patch)
    except PatchError as error:
        return ApplyPatchInvocation("patch_parse_error", patch=patch, error=error)
    return ApplyPatchInvocation("body", patch=patch, hunks=hunks)


# -- applying an update ---------------------------------------------------------------------------------


def normalise_punctuation(text: str) -> str:
    """Typographic quotes, dashes, the ellipsis and the no-break space replaced by ASCII."""
    return text.translate(_PUNCTUATION)


Compare = Callable[[str, str], bool]

_PASSES: tuple[Compare, ...] = (
    lambda a, b: a == b,
    lambda a, b: js_trim_end(a) == js_trim_end(b),
    lambda a, b: js_trim(a) == js_trim(b),
    lambda a, b: normalise_punctuation(js_trim(a)) == normalise_punctuation(js_trim(b)),
)


def _window_matches(lines: Sequence[str], pattern: Sequence[str], at: int, same: Compare) -> bool:
    return all(same(lines[at + offset], wanted) for offset, wanted in enumerate(pattern))


def seek_sequence(lines: Sequence[str], pattern: Sequence[str], start: int, at_end: bool = False) -> int:
    """Where ``pattern`` occurs in ``lines`` at or after ``start``, or ``-1``.

    Four passes, each stricter match failing over to a looser one: exact, equal after trimming the
    right, equal after trimming both sides, equal after trimming and ASCII-fying punctuation. With
    ``at_end`` each pass first tries the window that ends at the last line.
    """
    size = len(pattern)
    if size == 0:
        return -1
    last = len(lines) - size
    for same in _PASSES:
        if at_end and last >= start and _window_matches(lines, pattern, last, same):
            return last
        for at in range(start, last + 1):
            if _window_matches(lines, pattern, at, same):
                return at
    return -1


def _is_crlf(text: str) -> bool:
    """Whether every line break of ``text`` is CRLF (and it has at least one)."""
    breaks = text.count("\n")
    return breaks > 0 and text.count("\r\n") == breaks


def _strip_cr(lines: Sequence[str]) -> list[str]:
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def derive_new_contents(original: str, chunks: Sequence[UpdateChunk], path: str) -> str:
    """The text of ``original`` after applying ``chunks`` (``path`` only appears in error messages).

    The result always ends with a line break. A leading BOM of ``original`` is kept. Raises
    :class:`PatchError` when a context line or a chunk's lines cannot be found.
    """
    bom = original.startswith(BOM)
    text = original[1:] if bom else original
    crlf = _is_crlf(text)
    if crlf:
        text = text.replace("\r\n", "\n")
        chunks = [
            UpdateChunk(
                _strip_cr(chunk.old_lines),
                _strip_cr(chunk.new_lines),
                chunk.change_context,
                chunk.is_end_of_file,
            )
            for chunk in chunks
        ]

    lines = text.split("\n")
    ended = lines[-1] == ""
    if ended:
        lines.pop()

    result = list(lines)
    for start, length, replacement in reversed(_replacements(lines, chunks, path)):
        result[start : start + length] = replacement
    if ended or not result or result[-1] != "":
        result.append("")

    joined = ("\r\n" if crlf else "\n").join(result)
    return BOM + joined if bom and not joined.startswith(BOM) else joined


def _replacements(
    lines: Sequence[str], chunks: Sequence[UpdateChunk], path: str
) -> list[tuple[int, int, list[str]]]:
    """``(start, old length, new lines)`` for every chunk, sorted by start (stable)."""
    found_all: list[tuple[int, int, list[str]]] = []
    cursor = 0
    for chunk in chunks:
        anchored = False
        if chunk.change_context is not None:
            at = seek_sequence(lines, [chunk.change_context], cursor)
            if at < 0:
                raise PatchError(f"Failed to find context '{chunk.change_context}' in {path}")
            cursor = at + 1
            anchored = True

        if not chunk.old_lines:
            where = cursor if anchored else len(lines)
            found_all.append((where, 0, list(chunk.new_lines)))
            continue

        old, new = list(chunk.old_lines), list(chunk.new_lines)
        at = seek_sequence(lines, old, cursor, chunk.is_end_of_file)
        if at < 0 and old[-1] == "":
            old.pop()
            if new and new[-1] == "":
                new.pop()
            at = seek_sequence(lines, old, cursor, chunk.is_end_of_file)
        if at < 0:
            wanted = "\n".join(chunk.old_lines)
            raise PatchError(f"Failed to find expected lines in {path}:\n{wanted}")
        found_all.append((at, len(old), new))
        cursor = at + len(old)
    return sorted(found_all, key=lambda item: item[0])
