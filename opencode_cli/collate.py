"""A small stand-in for JavaScript's ``String.prototype.localeCompare`` (ICU root collation).

OpenCode sorts directory entries with ``localeCompare``. We do not ship ICU, so this module builds a sort
key that follows the rules that matter for file names:

* **primary level**: case and accents are ignored; whitespace and punctuation come first, then other
  symbols, then digits, then letters. Digits compare one by one (``file-10`` sorts before ``file-2``), and
  a string that is a prefix of another sorts first.
* **secondary level**: on a primary tie, an unaccented letter sorts before its accented forms.
* **tertiary level**: on a secondary tie, lower case sorts before upper case (``a`` < ``A``).
* finally the code points decide, so the order is total and sorting is deterministic.

It is an approximation of the full Unicode Collation Algorithm, not a re-implementation.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# CLDR root order of the ASCII whitespace, punctuation and symbols (all sort before digits and letters).
_ASCII_SYMBOLS = "\t\n\v\f\r " + "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_SYMBOL_RANK = {char: rank for rank, char in enumerate(_ASCII_SYMBOLS)}

_GROUP_SPACE_PUNCT = 0
_GROUP_SYMBOL = 1
_GROUP_DIGIT = 2
_GROUP_LETTER = 3

Key = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]


def _primary(char: str) -> tuple[int, int] | None:
    """The primary weight ``(group, rank)`` of one decomposed character, or ``None`` if ignorable."""
    rank = _SYMBOL_RANK.get(char)
    if rank is not None:
        return (_GROUP_SPACE_PUNCT, rank)
    category = unicodedata.category(char)
    if category[0] == "N":
        value = unicodedata.digit(char, None)
        if value is not None:
            return (_GROUP_DIGIT, value)
        return (_GROUP_SYMBOL, 0x110000 + ord(char))
    if category[0] == "L":
        return (_GROUP_LETTER, ord(char))
    if category in ("Cc", "Cf", "Cn", "Co", "Cs"):
        return None
    if category[0] in ("P", "Z"):
        return (_GROUP_SPACE_PUNCT, len(_ASCII_SYMBOLS) + ord(char))
    return (_GROUP_SYMBOL, ord(char))


@lru_cache(maxsize=4096)
def sort_key(text: str) -> Key:
    """A key for :func:`sorted` that approximates sorting with ``(a, b) => a.localeCompare(b)``."""
    primaries: list[tuple[int, int]] = []
    secondaries: list[tuple[int, ...]] = []
    tertiaries: list[int] = []
    for original in text:
        upper = original != original.lower() or unicodedata.category(original) == "Lt"
        marks: list[int] = []
        bases: list[str] = []
        for char in unicodedata.normalize("NFKD", original):
            if unicodedata.combining(char):
                marks.append(unicodedata.combining(char) * 0x110000 + ord(char))
            else:
                bases.extend(char.casefold())
        if not bases and marks and secondaries:
            # A lone combining mark attaches to the previous character, as in canonical decomposition.
            secondaries[-1] = secondaries[-1] + tuple(marks)
            continue
        for index, base in enumerate(bases):
            weight = _primary(base)
            if weight is None:
                continue
            primaries.append(weight)
            secondaries.append(tuple(marks) if index == 0 else ())
            tertiaries.append(1 if upper else 0)
    return (tuple(primaries), tuple(secondaries), tuple(tertiaries), tuple(ord(c) for c in text))


def compare(left: str, right: str) -> int:
    """``-1``, ``0`` or ``1`` like ``left.localeCompare(right)`` (``0`` only for identical strings)."""
    a, b = sort_key(left), sort_key(right)
    return (a > b) - (a < b)


def sort(names: Iterable[str]) -> list[str]:
    """The names in collation order."""
    return sorted(names, key=sort_key)
