"""The string replacement behind the ``edit`` tool (builtin spec §6.2), pure and testable on its own.

:func:`replace` tries nine *replacers* in a fixed order. Each replacer is a generator that proposes
candidate spans: strings it believes occur in the content and stand for what ``old`` meant (the exact
text first, then ever looser readings: trimmed lines, anchored blocks, collapsed whitespace, another
indentation, escape sequences, trimmed edges, anchors with half the middle matching, and finally every
exact occurrence). The first candidate that really occurs, and occurs once (or any that occurs when
``replace_all``), is replaced. A candidate that spans far more than ``old`` stops everything (the
disproportion guard), so a loose reading never swallows a large part of the file.

Whitespace, trimming and lengths follow JavaScript, where OpenCode's implementation runs: ``trim`` and
``\\s`` use ECMAScript's whitespace set and lengths count UTF-16 code units.

Deliberate differences from upstream (documented in the tests):

* ``replace_all`` replaces literally; JavaScript's ``$&``/``$$``/`` $` ``/``$'`` patterns in the new
  text are not interpreted.
* An empty candidate (a replacer can produce one, e.g. a whitespace-only ``old`` against a blank line) is
  skipped rather than "found": upstream would report the misleading "multiple matches" error or, with
  ``replaceAll``, insert the new text between every character.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from ..errors import ToolError

IDENTICAL = "No changes to apply: oldString and newString are identical."
EMPTY_OLD = (
    "oldString cannot be empty when editing an existing file. Provide the exact text to replace, "
    "or use write for an intentional full-file replacement."
)
NOT_FOUND = (
    "Could not find oldString in the file. It must match exactly, including whitespace, indentation, "
    "and line endings."
)
MULTIPLE = "Found multiple matches for oldString. Provide more surrounding context to make the match unique."
DISPROPORTIONATE = (
    "Refusing replacement because the matched span is much larger than oldString. Re-read the file and "
    "provide the full exact oldString for the intended replacement."
)

SINGLE_CANDIDATE_SIMILARITY_THRESHOLD = 0.65
MULTIPLE_CANDIDATES_SIMILARITY_THRESHOLD = 0.65
CONTEXT_MATCH_RATIO = 0.5

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes and what \s matches.
JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SPACE_CLASS = "[" + re.escape(JS_SPACE) + "]"
_SPACE_RUN = re.compile(_SPACE_CLASS + "+")
_TO_SPACE = {ord(char): " " for char in JS_SPACE if char != "\n"}
_SPACES = re.compile(" +")
# whitespace to Python's str.split but not to JavaScript
_PYTHON_ONLY_SPACE = "\x1c\x1d\x1e\x1f\x85"
_LEADING_SPACE = re.compile(_SPACE_CLASS + "*")
_ESCAPE = re.compile(r"\\(n|t|r|'|\"|`|\\|\n|\$)")
_UNESCAPED = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "`": "`", "\\": "\\", "\n": "\n", "$": "$"}

Replacer = Callable[[str, str], Iterator[str]]


# -- JavaScript string helpers -------------------------------------------------------------------------


def trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_SPACE)


def js_length(text: str) -> int:
    """``String.prototype.length``: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if char > "\uffff")


def _code_units(text: str) -> str:
    """``text`` with every astral character split into its two surrogates (one "character" per unit)."""
    if text.isascii() or max(text) <= "\uffff":
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(unit) for unit in memoryview(data).cast("H"))


def normalize_whitespace(text: str) -> str:
    """Every whitespace run collapsed to one space, then trimmed."""
    return trim(_SPACE_RUN.sub(" ", text))


def _normalized_lines(content: str) -> list[str]:
    """``normalize_whitespace`` of every line of ``content``, computed in bulk."""
    spaced = content.translate(_TO_SPACE)  # every JavaScript whitespace but newlines becomes a space
    if any(char in spaced for char in _PYTHON_ONLY_SPACE):
        return [line.strip(" ") for line in _SPACES.sub(" ", spaced).split("\n")]
    return [" ".join(line.split()) for line in spaced.split("\n")]


def _indent_width(line: str) -> int:
    match = _LEADING_SPACE.match(line)
    return match.end() if match else 0


def unescape(text: str) -> str:
    """Turn the escape sequences a model tends to leave in strings into the characters they stand for."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda match: _UNESCAPED[match.group(1)], text)


# -- Levenshtein ---------------------------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    """The edit distance of ``a`` and ``b`` (insertions, deletions, substitutions of one character).

    Bit-parallel (Myers 1999, as formulated by Hyyrö): one pass over the longer string with the shorter
    one's positions held in the bits of an integer, so a line pair costs O(len) big-integer operations.
    """
    if a == b:
        return 0
    if not a or not b:
        return max(len(a), len(b))
    if len(a) > len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    bit = 1
    for char in a:
        masks[char] = masks.get(char, 0) | bit
        bit <<= 1
    full = bit - 1
    last = 1 << (len(a) - 1)
    positive, negative, distance = full, 0, len(a)
    for char in b:
        match = masks.get(char, 0)
        vertical = match | negative
        horizontal = (((match & positive) + positive) ^ positive) | match
        up = negative | ~(horizontal | positive)
        down = positive & horizontal
        if up & last:
            distance += 1
        elif down & last:
            distance -= 1
        up = (up << 1) | 1
        down <<= 1
        positive = (down | ~(vertical | up)) & full
        negative = up & vertical
    return distance


def similarity(a: str, b: str) -> float:
    """``1 - levenshtein / longer length``, on UTF-16 code units like upstream."""
    a, b = _code_units(a), _code_units(b)
    return 1 - levenshtein(a, b) / max(len(a), len(b))


# -- line helpers ----------------------------------------------------------------------------------------


def _drop_trailing_empty(lines: list[str]) -> list[str]:
    return lines[:-1] if lines and lines[-1] == "" else lines


def _first_at_or_after(positions: list[int], start: int) -> int | None:
    at = bisect.bisect_left(positions, start)
    return positions[at] if at < len(positions) else None


def _positions(lines: list[str], wanted: str) -> list[int]:
    """Indexes of ``lines`` equal to ``wanted``, found with ``list.index`` (C speed)."""
    found: list[int] = []
    start = 0
    while True:
        try:
            index = lines.index(wanted, start)
        except ValueError:
            return found
        found.append(index)
        start = index + 1


# -- the replacers -----------------------------------------------------------------------------------


def simple(content: str, find: str) -> Iterator[str]:
    """1. The text exactly as given."""
    yield find


def line_trimmed(content: str, find: str) -> Iterator[str]:
    """2. Runs of lines that equal the find lines once both are trimmed; yields the original lines."""
    lines = content.split("\n")
    wanted = [trim(line) for line in _drop_trailing_empty(find.split("\n"))]
    if not wanted:
        return  # an empty find (replace() never passes one)
    size = len(wanted)
    trimmed = [trim(line) for line in lines]
    for start in _positions(trimmed, wanted[0]):
        if start + size > len(lines):
            break
        if trimmed[start : start + size] == wanted:
            yield "\n".join(lines[start : start + size])


def _block_similarity(
    trimmed: list[str],
    start: int,
    end: int,
    wanted: list[str],
    single: bool,
    cache: dict[tuple[str, str], float],
) -> float:
    """Average similarity of the middle lines of ``trimmed[start..end]`` and of ``wanted`` (both trimmed).

    ``cache`` keeps the similarity of line pairs already compared (blocks often repeat lines).
    """
    block_size = end - start + 1
    checked = min(len(wanted) - 2, block_size - 2)
    if checked <= 0:
        return 1.0
    total = 0.0
    for offset in range(1, checked + 1):
        pair = (trimmed[start + offset], wanted[offset])
        if not pair[0] and not pair[1]:
            continue
        score = cache.get(pair)
        if score is None:
            score = cache[pair] = similarity(*pair)
        if single:
            total += score / checked
            if total >= SINGLE_CANDIDATE_SIMILARITY_THRESHOLD:
                break  # enough: the single candidate is accepted
        else:
            total += score
    return total if single else total / checked


def block_anchor(content: str, find: str) -> Iterator[str]:
    """3. A block whose first and last lines equal the find's (trimmed) and whose middle is similar.

    Needs at least three find lines. For each line equal to the first anchor, only the first later line
    (two or more lines down) equal to the last anchor closes a block, and the block's length may differ
    from the find's by at most a quarter of it (at least one line). One candidate, or the best of
    several, is yielded when the Levenshtein similarity of the middle lines reaches 0.65.
    """
    wanted = find.split("\n")
    if len(wanted) < 3:
        return
    wanted = _drop_trailing_empty(wanted)
    lines = content.split("\n")
    trimmed = [trim(line) for line in lines]
    first, last = trim(wanted[0]), trim(wanted[-1])
    size = len(wanted)
    slack = max(1, size // 4)
    closings = _positions(trimmed, last)
    candidates = []
    for start in _positions(trimmed, first):
        end = _first_at_or_after(closings, start + 2)
        if end is None:
            break  # no later line closes a block, for this start or any after it
        if abs(end - start + 1 - size) <= slack:
            candidates.append((start, end))
    if not candidates:
        return
    wanted_trimmed = [trim(line) for line in wanted]
    cache: dict[tuple[str, str], float] = {}
    if len(candidates) == 1:
        start, end = candidates[0]
        score = _block_similarity(trimmed, start, end, wanted_trimmed, True, cache)
        if score >= SINGLE_CANDIDATE_SIMILARITY_THRESHOLD:
            yield "\n".join(lines[start : end + 1])
        return
    best, best_score = None, -1.0
    for start, end in candidates:
        score = _block_similarity(trimmed, start, end, wanted_trimmed, False, cache)
        if score > best_score:
            best, best_score = (start, end), score
    if best is not None and best_score >= MULTIPLE_CANDIDATES_SIMILARITY_THRESHOLD:
        start, end = best
        yield "\n".join(lines[start : end + 1])


def whitespace_normalized(content: str, find: str) -> Iterator[str]:
    """4. Lines (or runs of lines) equal to the find once whitespace runs are collapsed.

    A line that merely contains the collapsed find yields the part of the line that matches the find's
    words separated by any whitespace.
    """
    wanted = normalize_whitespace(find)
    lines = content.split("\n")
    normalized = _normalized_lines(content)
    pattern: re.Pattern[str] | None = None
    for line, norm in zip(lines, normalized, strict=True):
        if norm == wanted:
            yield line
        elif wanted in norm:
            if pattern is None:
                words = _SPACE_RUN.split(trim(find))
                pattern = re.compile((_SPACE_CLASS + "+").join(re.escape(word) for word in words))
            match = pattern.search(line)
            if match:
                yield match.group(0)
    size = len(find.split("\n"))
    if size > 1:
        for start in range(len(lines) - size + 1):
            first = normalized[start]
            if first and not wanted.startswith(first):
                continue  # cheap rejection before building the window's text
            # collapsing a run of lines joined by newlines = joining the lines' collapsed forms with single
            # spaces, where whitespace-only lines vanish into the separator
            if " ".join(part for part in normalized[start : start + size] if part) == wanted:
                yield "\n".join(lines[start : start + size])


def _remove_indentation(lines: list[str]) -> list[str]:
    widths = [_indent_width(line) for line in lines if trim(line)]
    if not widths:
        return lines
    cut = min(widths)
    return [line[cut:] if trim(line) else line for line in lines]


def indentation_flexible(content: str, find: str) -> Iterator[str]:
    """5. Runs of lines equal to the find once each side loses its common indentation."""
    find_lines = find.split("\n")
    wanted = _remove_indentation(find_lines)
    size = len(find_lines)
    lines = content.split("\n")
    # Equal de-indented lines have equal text after their leading whitespace: a cheap filter first.
    bare = [line.lstrip(JS_SPACE) for line in lines]
    wanted_bare = [line.lstrip(JS_SPACE) for line in wanted]
    for start in _positions(bare, wanted_bare[0]):
        if start + size > len(lines):
            break
        if bare[start : start + size] != wanted_bare:
            continue
        block = lines[start : start + size]
        if _remove_indentation(block) == wanted:
            yield "\n".join(block)


def escape_normalized(content: str, find: str) -> Iterator[str]:
    """6. The find with escape sequences (``\\n``, ``\\t``, ``\\"``…) turned into characters, or runs of
    lines that read the same once their own escapes are turned into characters."""
    wanted = unescape(find)
    if wanted in content:
        yield wanted
    lines = content.split("\n")
    wanted_lines = wanted.split("\n")
    size = len(wanted_lines)
    escaped = [0]  # escaped[i]: how many of lines[:i] hold a backslash
    for line in lines:
        escaped.append(escaped[-1] + ("\\" in line))
    for start in range(len(lines) - size + 1):
        if escaped[start + size] == escaped[start]:
            # no backslash in the window: unescaping changes nothing
            if lines[start : start + size] == wanted_lines:
                yield "\n".join(lines[start : start + size])
            continue
        block = "\n".join(lines[start : start + size])
        if unescape(block) == wanted:
            yield block


def trimmed_boundary(content: str, find: str) -> Iterator[str]:
    """7. The find without its leading/trailing whitespace, or runs of lines that trim to it."""
    wanted = trim(find)
    if wanted == find:
        return
    if wanted in content:
        yield wanted
    lines = content.split("\n")
    size = len(find.split("\n"))
    for start in range(len(lines) - size + 1):
        block = "\n".join(lines[start : start + size])
        if trim(block) == wanted:
            yield block


def context_aware(content: str, find: str) -> Iterator[str]:
    """8. A block between the find's first and last lines (trimmed), as long as the find, in which at
    least half of the middle lines that are not both blank are equal once trimmed."""
    wanted = find.split("\n")
    if len(wanted) < 3:
        return
    wanted = _drop_trailing_empty(wanted)
    lines = content.split("\n")
    trimmed = [trim(line) for line in lines]
    closings = _positions(trimmed, trim(wanted[-1]))
    wanted_trimmed = [trim(line) for line in wanted]
    for start in _positions(trimmed, wanted_trimmed[0]):
        end = _first_at_or_after(closings, start + 2)
        if end is None:
            break
        if end - start + 1 != len(wanted):
            continue
        considered = equal = 0
        for offset in range(1, len(wanted) - 1):
            ours, theirs = trimmed[start + offset], wanted_trimmed[offset]
            if ours or theirs:
                considered += 1
                equal += ours == theirs
        if considered == 0 or equal / considered >= CONTEXT_MATCH_RATIO:
            yield "\n".join(lines[start : end + 1])


def multi_occurrence(content: str, find: str) -> Iterator[str]:
    """9. The find once per non-overlapping exact occurrence."""
    start = 0
    while True:
        index = content.find(find, start)
        if index < 0:
            return
        yield find
        start = index + len(find)


REPLACERS: tuple[Replacer, ...] = (
    simple,
    line_trimmed,
    block_anchor,
    whitespace_normalized,
    indentation_flexible,
    escape_normalized,
    trimmed_boundary,
    context_aware,
    multi_occurrence,
)


# -- replace -----------------------------------------------------------------------------------------


def is_disproportionate(search: str, old: str) -> bool:
    """Whether the matched span ``search`` is far larger than what was asked for (``old``)."""
    old_lines = old.count("\n") + 1
    search_lines = search.count("\n") + 1
    if search_lines >= max(old_lines + 3, old_lines * 2):
        return True
    if old_lines == 1:
        return False
    old_length = js_length(trim(old))
    return js_length(trim(search)) > max(old_length + 500, old_length * 4)


def replace(content: str, old: str, new: str, replace_all: bool = False) -> str:
    """``content`` with ``old`` (or the span a replacer takes it to mean) replaced by ``new``.

    Raises :class:`ToolError` with the model-facing text when nothing matches, when the only matches are
    ambiguous, when a match is disproportionate, or when ``old`` is empty or equal to ``new``.
    """
    if old == new:
        raise ToolError(IDENTICAL)
    if old == "":
        raise ToolError(EMPTY_OLD)
    found = False
    ambiguous: set[str] = set()
    for replacer in REPLACERS:
        for search in replacer(content, old):
            if not search or search in ambiguous:
                continue
            index = content.find(search)
            if index < 0:
                continue
            found = True
            if is_disproportionate(search, old):
                raise ToolError(DISPROPORTIONATE)
            if replace_all:
                return content.replace(search, new)
            if content.rfind(search) != index:
                ambiguous.add(search)
                continue
            return content[:index] + new + content[index + len(search) :]
    raise ToolError(MULTIPLE if found else NOT_FOUND)
