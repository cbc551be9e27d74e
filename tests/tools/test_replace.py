"""The edit tool's pure replacement logic (builtin-tools spec §6.2): replacers, guard, thresholds, errors."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from opencode_cli.errors import ToolError
from opencode_cli.tools import _replace
from opencode_cli.tools._replace import (
    DISPROPORTIONATE,
    EMPTY_OLD,
    IDENTICAL,
    MULTIPLE,
    NOT_FOUND,
    block_anchor,
    context_aware,
    escape_normalized,
    indentation_flexible,
    is_disproportionate,
    levenshtein,
    line_trimmed,
    multi_occurrence,
    normalize_whitespace,
    replace,
    similarity,
    simple,
    trim,
    trimmed_boundary,
    unescape,
    whitespace_normalized,
)
from opencode_cli.tools._replace import _normalized_lines as normalized_lines


def fails(content: str, old: str, new: str, replace_all: bool = False) -> str:
    with pytest.raises(ToolError) as caught:
        replace(content, old, new, replace_all)
    return str(caught.value)


# -- the exact error texts ---------------------------------------------------------------------------------


def test_error_texts_are_exact() -> None:
    assert IDENTICAL == "No changes to apply: oldString and newString are identical."
    assert EMPTY_OLD == (
        "oldString cannot be empty when editing an existing file. Provide the exact text to replace, or use "
        "write for an intentional full-file replacement."
    )
    assert NOT_FOUND == (
        "Could not find oldString in the file. It must match exactly, including whitespace, indentation, and "
        "line endings."
    )
    assert MULTIPLE == (
        "Found multiple matches for oldString. Provide more surrounding context to make the match unique."
    )
    assert DISPROPORTIONATE == (
        "Refusing replacement because the matched span is much larger than oldString. Re-read the file and "
        "provide the full exact oldString for the intended replacement."
    )


def test_identical_strings() -> None:
    assert fails("abc", "b", "b") == IDENTICAL


def test_identical_check_comes_before_empty_check() -> None:
    assert fails("abc", "", "") == IDENTICAL


def test_empty_old_string() -> None:
    assert fails("abc", "", "x") == EMPTY_OLD


def test_not_found() -> None:
    assert fails("alpha\nbeta\n", "gamma", "delta") == NOT_FOUND


def test_multiple_matches() -> None:
    assert fails("x = 1\nx = 1\n", "x = 1", "x = 2") == MULTIPLE


def test_replace_all() -> None:
    assert replace("foo bar foo baz foo", "foo", "qux", True) == "qux bar qux baz qux"


def test_replace_all_is_literal() -> None:
    # Quirk decision: JavaScript's replaceAll would expand $& (the match) and $$ here; we do not.
    assert replace("a b a", "a", "$&-$$-$'-$`", True) == "$&-$$-$'-$` b $&-$$-$'-$`"


def test_single_replacement_is_literal_too() -> None:
    assert replace("a b", "a", "$&$&") == "$&$& b"


def test_multi_line_new_string() -> None:
    assert replace("line1\nline2\nline3", "line2", "new line 2\nextra line") == (
        "line1\nnew line 2\nextra line\nline3"
    )


# -- JavaScript string semantics ---------------------------------------------------------------------------


def test_trim_uses_ecmascript_whitespace() -> None:
    assert trim("\u00a0\ufeff x \u3000\r") == "x"
    # Python's str.strip would remove these, JavaScript's trim does not
    assert trim("\x1cx\x85") == "\x1cx\x85"


def test_similarity_counts_utf16_code_units() -> None:
    # two emoji differ in their low surrogate only: JavaScript sees 1 edit in 2 units
    assert similarity("😀", "😁") == 0.5
    assert similarity("ab", "ab") == 1.0


def _naive_levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


@given(st.text(alphabet="abcde \t", max_size=40), st.text(alphabet="abcde \t", max_size=40))
def test_levenshtein_matches_dynamic_programming(a: str, b: str) -> None:
    assert levenshtein(a, b) == _naive_levenshtein(a, b)


@given(st.text(max_size=90), st.text(max_size=90))
def test_levenshtein_on_any_text(a: str, b: str) -> None:
    assert levenshtein(a, b) == _naive_levenshtein(a, b)


def test_levenshtein_long_strings() -> None:
    a = "x" * 300 + "abc" * 50
    b = "y" + "x" * 299 + "abd" * 50
    assert levenshtein(a, b) == _naive_levenshtein(a, b)


# -- 1. SimpleReplacer ------------------------------------------------------------------------------------


def test_simple_yields_find_unchanged() -> None:
    assert list(simple("whatever", "needle")) == ["needle"]


def test_simple_exact_match() -> None:
    assert replace("a needle b", "needle", "pin") == "a pin b"


def test_simple_candidate_absent_is_skipped() -> None:
    # the candidate is yielded regardless; replace() skips it because it does not occur
    assert fails("haystack", "needle", "pin") == NOT_FOUND


# -- 2. LineTrimmedReplacer --------------------------------------------------------------------------------


def test_line_trimmed_positive() -> None:
    content = "def f():\n    x = 1\n    y = 2\n"
    assert list(line_trimmed(content, "x = 1\ny = 2\n")) == ["    x = 1\n    y = 2"]
    # the matched span starts at the line's indentation, which the new text replaces too
    assert replace(content, "x = 1\ny = 2", "    z = 3") == "def f():\n    z = 3\n"


def test_line_trimmed_yields_every_window() -> None:
    content = " a\n b\n  a \n b"
    assert list(line_trimmed(content, "a\nb")) == [" a\n b", "  a \n b"]


def test_line_trimmed_negative() -> None:
    assert list(line_trimmed("    x = 1\n    y = 2\n", "x = 1\ny = 3")) == []
    assert list(line_trimmed("a\nb", "a\nb\nc")) == []


# -- 3. BlockAnchorReplacer --------------------------------------------------------------------------------

FUNCTION = "def alpha():\n    a = compute(1)\n    b = compute(2)\n    return a + b\n"


def test_block_anchor_positive() -> None:
    find = "def alpha():\n    a = compute(10)\n    b = compute(20)\n    return a + b"
    assert list(block_anchor(FUNCTION, find)) == [FUNCTION.rstrip("\n")]
    assert replace(FUNCTION, find, "def alpha():\n    return 3") == "def alpha():\n    return 3\n"


def test_block_anchor_negative_unrelated_middle() -> None:
    find = "def alpha():\n    totally_unrelated_statement()\n    return a + b"
    assert list(block_anchor(FUNCTION, find)) == []


def test_block_anchor_needs_three_lines() -> None:
    assert list(block_anchor("a\nx\nb", "a\nb")) == []


def _single(middle_content: str, middle_find: str) -> list[str]:
    return list(block_anchor(f"start\n{middle_content}\nend", f"start\n{middle_find}\nend"))


def test_block_anchor_single_candidate_threshold() -> None:
    base = "abcdefghijklmnopqrst"  # 20 characters
    assert _single(base, "abcdefghijklmnXXXXXX") == [f"start\n{base}\nend"]  # 6 edits: 0.7
    assert _single(base, "abcdefghijklXXXXXXXX") == []  # 8 edits: 0.6 rejected


def test_block_anchor_exact_threshold_is_accepted() -> None:
    base = "abcdefghijklmnopqrst"
    # levenshtein = 7 of 20 -> similarity 0.65 exactly; >= threshold accepts
    assert similarity(base, "abcdefghijklmXXXXXXX") == 0.65
    assert _single(base, "abcdefghijklmXXXXXXX") == [f"start\n{base}\nend"]


def test_block_anchor_blank_middle_pairs_score_nothing() -> None:
    # both middle lines blank: skipped, but still counted in the average -> similarity 0
    assert list(block_anchor("start\n\nend", "start\n\nend")) == []


def test_block_anchor_size_window() -> None:
    # 3 find lines: the block may be 2..4 lines long (slack max(1, 3 // 4) = 1); 6 is too long
    content = "def f():\n    a\n    b\n    c\n    d\n    return 0"
    find = "def f():\n    zzz\n    return 0"
    assert list(block_anchor(content, find)) == []
    assert list(block_anchor("def f():\n    zzy\n    q\n    return 0", find)) == [
        "def f():\n    zzy\n    q\n    return 0"
    ]


def test_block_anchor_slack_is_a_quarter_of_the_find() -> None:
    find = "\n".join(["begin", *[f"line {i}" for i in range(10)], "finish"])  # 12 lines: slack 3
    block = "\n".join(["begin", *[f"line {i}" for i in range(13)], "finish"])  # 15 lines
    assert list(block_anchor(block, find)) == [block]
    too_long = "\n".join(["begin", *[f"line {i}" for i in range(14)], "finish"])  # 16 lines
    assert list(block_anchor(too_long, find)) == []


def test_block_anchor_only_first_closing_line_counts() -> None:
    # the first "end" two or more lines after "start" closes the block; the later, better one is not seen
    content = "start\nq\nend\nmiddle\nend"
    assert list(block_anchor(content, "start\nq\nmiddle\nend")) == ["start\nq\nend"]


def test_block_anchor_multiple_candidates_picks_best() -> None:
    content = (
        "if ready:\n    launch(rocket_one)\n    log('one')\nfinally\n"
        "if ready:\n    launch(rocket_two)\n    log('two')\nfinally\n"
    )
    find = "if ready:\n    launch(rocket_twx)\n    log('twx')\nfinally"
    assert list(block_anchor(content, find)) == ["if ready:\n    launch(rocket_two)\n    log('two')\nfinally"]


def test_block_anchor_multiple_candidates_below_threshold() -> None:
    content = "if ready:\n    aaaa\nfinally\nif ready:\n    bbbb\nfinally\n"
    assert list(block_anchor(content, "if ready:\n    zzzzzz\nfinally")) == []


def test_block_anchor_multiple_candidates_threshold_is_065() -> None:
    base = "abcdefghijklmnopqrst"
    content = f"s\n{base}\ne\ns\nzzzzzzzzzzzzzzzzzzzz\ne\n"
    assert list(block_anchor(content, "s\nabcdefghijklmXXXXXXX\ne")) == [f"s\n{base}\ne"]  # 0.65
    assert list(block_anchor(content, "s\nabcdefghijklXXXXXXXX\ne")) == []  # 0.6


def test_block_anchor_first_of_equal_candidates_wins() -> None:
    content = "s\nabc\ne\ns\nabd\ne"
    # both middles are one edit away from "abx": tie, the first block wins; it occurs once, so it is used
    assert list(block_anchor(content, "s\nabx\ne")) == ["s\nabc\ne"]


# -- 4. WhitespaceNormalizedReplacer -----------------------------------------------------------------------


def test_whitespace_normalized_whole_line() -> None:
    assert list(whitespace_normalized("x  =   1\ny = 2", "x = 1")) == ["x  =   1"]
    assert replace("x  =   1\ny = 2", "x = 1", "x = 9") == "x = 9\ny = 2"


def test_whitespace_normalized_inside_a_line() -> None:
    assert list(whitespace_normalized("call(a,   b) + 1", "a, b")) == ["a,   b"]


def test_whitespace_normalized_multi_line_window() -> None:
    content = "if  x:\n    go()\nrest"
    assert "if  x:\n    go()" in list(whitespace_normalized(content, "if x:\n  go()"))


def test_whitespace_normalized_negative() -> None:
    assert list(whitespace_normalized("x  =   1", "y = 2")) == []


# -- 5. IndentationFlexibleReplacer ------------------------------------------------------------------------


def test_indentation_flexible_positive() -> None:
    content = "class A:\n    def f(self):\n        return 1\n"
    assert list(indentation_flexible(content, "def f(self):\n    return 1")) == [
        "    def f(self):\n        return 1"
    ]


def test_indentation_flexible_tabs_count_like_spaces() -> None:
    content = "\t\tif x:\n\t\t\ty()"
    assert list(indentation_flexible(content, "  if x:\n   y()")) == []
    assert list(indentation_flexible(content, "if x:\n\ty()")) == ["\t\tif x:\n\t\t\ty()"]


def test_indentation_flexible_negative_relative_indent_differs() -> None:
    content = "class A:\n    def f(self):\n        return 1\n"
    assert list(indentation_flexible(content, "def f(self):\n  return 1")) == []


# -- 6. EscapeNormalizedReplacer ---------------------------------------------------------------------------


def test_escape_normalized_unescapes_find() -> None:
    content = 'print("a\tb")'
    assert next(escape_normalized(content, 'print("a\\tb")')) == content
    assert replace(content, 'print("a\\tb")', "pass") == "pass"


def test_escape_normalized_matches_escaped_content() -> None:
    content = 's = "it\\\'s"\nnext'
    find = 's = "it\'s"'
    assert list(escape_normalized(content, find)) == ['s = "it\\\'s"']
    assert replace(content, find, "s = 1") == "s = 1\nnext"


def test_escape_normalized_negative() -> None:
    assert list(escape_normalized("plain text", "nothing\\there")) == []


# -- 7. TrimmedBoundaryReplacer ----------------------------------------------------------------------------


def test_trimmed_boundary_positive() -> None:
    assert list(trimmed_boundary("a foo = 1 b", "\n foo = 1 \n")) == ["foo = 1"]


def test_trimmed_boundary_window() -> None:
    content = "x\n  block line  \ny"
    assert "  block line  " in list(trimmed_boundary(content, " block line\t"))


def test_trimmed_boundary_needs_untrimmed_find() -> None:
    assert list(trimmed_boundary("a foo = 1 b", "foo = 1")) == []


# -- 8. ContextAwareReplacer -------------------------------------------------------------------------------


def test_context_aware_positive() -> None:
    content = "function f() {\n  a();\n  b();\n  c();\n}"
    find = "function f() {\n  a();\n  XXX();\n  c();\n}"
    assert list(context_aware(content, find)) == [content]


def test_context_aware_negative_half_not_reached() -> None:
    content = "function f() {\n  a();\n  b();\n  c();\n}"
    find = "function f() {\n  x();\n  y();\n  c();\n}"
    assert list(context_aware(content, find)) == []


def test_context_aware_needs_same_length() -> None:
    content = "function f() {\n  a();\n  b();\n}"
    assert list(context_aware(content, "function f() {\n  a();\n  b();\n  c();\n}")) == []


def test_context_aware_blank_middles_accept() -> None:
    assert list(context_aware("start\n\nend", "start\n  \nend\n")) == ["start\n\nend"]


# -- 9. MultiOccurrenceReplacer ----------------------------------------------------------------------------


def test_multi_occurrence_yields_each_occurrence() -> None:
    assert list(multi_occurrence("a x a x a", "a")) == ["a", "a", "a"]
    assert list(multi_occurrence("aaaa", "aa")) == ["aa", "aa"]  # non-overlapping


def test_multi_occurrence_negative() -> None:
    assert list(multi_occurrence("abc", "z")) == []


# -- the order of the cascade ------------------------------------------------------------------------------


def test_replacer_order() -> None:
    assert [r.__name__ for r in _replace.REPLACERS] == [
        "simple",
        "line_trimmed",
        "block_anchor",
        "whitespace_normalized",
        "indentation_flexible",
        "escape_normalized",
        "trimmed_boundary",
        "context_aware",
        "multi_occurrence",
    ]


def test_ambiguous_exact_match_falls_through_to_a_unique_fuzzy_one() -> None:
    # "value" occurs twice (ambiguous), LineTrimmed also yields "value" twice; nothing else is unique
    assert fails("value\nvalue\n", "value", "v") == MULTIPLE


# -- the disproportion guard -------------------------------------------------------------------------------


def test_guard_line_count() -> None:
    assert is_disproportionate("a\nb\nc\nd", "x")  # 4 >= max(1 + 3, 2)
    assert not is_disproportionate("a\nb\nc", "x")
    assert is_disproportionate("1\n2\n3\n4\n5", "a\nb")  # 5 >= max(5, 4)
    assert not is_disproportionate("1\n2\n3\n4", "a\nb")
    assert is_disproportionate("\n".join("x" * 20), "\n".join("y" * 10))  # 20 >= max(13, 20)


def test_guard_characters() -> None:
    old = "a = 1\nb = 2"  # 11 characters trimmed
    # limit: max(11 + 500, 4 * 11) = 511 trimmed characters
    assert not is_disproportionate("x" * 509 + "\ny", old)  # 511
    assert is_disproportionate("x" * 510 + "\ny", old)  # 512
    assert not is_disproportionate("x" * 600, "a = 1")  # single-line old: characters do not count


def test_guard_characters_four_times() -> None:
    old = "\n".join(["w" * 200, "z" * 200])  # 401 chars: limit max(901, 1604) = 1604
    assert not is_disproportionate("q" * 1604 + "\n", old)
    assert is_disproportionate("q" * 1605 + "\n", old)


def test_guard_trips_through_line_trimmed() -> None:
    content = "x\na" + " " * 600 + "\nb\ny"
    assert fails(content, "a\nb", "c") == DISPROPORTIONATE


def test_guard_trips_through_block_anchor() -> None:
    content = "head\n    one\n    two\n" + "    huge " + "h" * 700 + "\ntail\n"
    assert fails(content, "head\n    one\n    two\ntail", "x") == DISPROPORTIONATE


# -- empty candidates (deviation from upstream) ------------------------------------------------------------


def test_empty_candidates_are_not_matches() -> None:
    # a whitespace-only old string trims to "" and "matches" blank lines; upstream would then report
    # "multiple matches" (or, with replaceAll, insert the new text between every character)
    assert fails("a\n\nb", " ", "x") == NOT_FOUND
    assert fails("a\n\nb", " ", "x", replace_all=True) == NOT_FOUND


# -- property --------------------------------------------------------------------------------------------


@given(st.text(max_size=200), st.data())
def test_unique_substring_replaced_like_str_replace(text: str, data: st.DataObject) -> None:
    assume(text)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    assume(text.find(old) == text.rfind(old))  # once, overlapping occurrences included
    new = data.draw(st.text(max_size=50))
    assume(new != old)
    assert replace(text, old, new) == text.replace(old, new, 1)


# -- the optimised replacers agree with plain transcriptions of the algorithm ----------------------------


def _plain_line_trimmed(content: str, find: str) -> list[str]:
    lines, wanted = content.split("\n"), find.split("\n")
    if wanted[-1] == "":
        wanted.pop()
    out = []
    for i in range(len(lines) - len(wanted) + 1):
        if all(trim(lines[i + j]) == trim(wanted[j]) for j in range(len(wanted))):
            out.append("\n".join(lines[i : i + len(wanted)]))
    return out


def _plain_closing(trimmed: list[str], start: int, last: str) -> int | None:
    for j in range(start + 2, len(trimmed)):
        if trimmed[j] == last:
            return j
    return None


def _plain_block_anchor(content: str, find: str) -> list[str]:
    lines, wanted = content.split("\n"), find.split("\n")
    if len(wanted) < 3:
        return []
    if wanted[-1] == "":
        wanted.pop()
    trimmed = [trim(line) for line in lines]
    size = len(wanted)
    candidates = []
    for i in range(len(lines)):
        if trimmed[i] != trim(wanted[0]):
            continue
        j = _plain_closing(trimmed, i, trim(wanted[-1]))
        if j is not None and abs(j - i + 1 - size) <= max(1, size // 4):
            candidates.append((i, j))

    def score(i: int, j: int) -> float:
        # one candidate: a running average (per-term division, as upstream); several: sum, then divide
        checked = min(size - 2, j - i + 1 - 2)
        if checked <= 0:
            return 1.0
        total = 0.0
        for k in range(1, checked + 1):
            a, b = trim(lines[i + k]), trim(wanted[k])
            if a or b:
                total += similarity(a, b) / checked if len(candidates) == 1 else similarity(a, b)
        return total if len(candidates) == 1 else total / checked

    if not candidates:
        return []
    best = max(candidates, key=lambda c: (score(*c), -c[0]))
    return ["\n".join(lines[best[0] : best[1] + 1])] if score(*best) >= 0.65 else []


def _plain_whitespace(content: str, find: str) -> list[str]:
    out = []
    lines, wanted = content.split("\n"), normalize_whitespace(find)
    for line in lines:
        if normalize_whitespace(line) == wanted:
            out.append(line)
        elif wanted in normalize_whitespace(line):
            space = "[" + re.escape(_replace.JS_SPACE) + "]+"
            words = re.split(space, trim(find))
            match = re.search(space.join(re.escape(w) for w in words), line)
            if match:
                out.append(match.group(0))
    size = len(find.split("\n"))
    if size > 1:
        for i in range(len(lines) - size + 1):
            block = "\n".join(lines[i : i + size])
            if normalize_whitespace(block) == wanted:
                out.append(block)
    return out


def _plain_indentation(content: str, find: str) -> list[str]:
    import re

    def dedent(text: str) -> str:
        rows = text.split("\n")
        widths = [
            len(re.match("[" + re.escape(_replace.JS_SPACE) + "]*", r).group(0)) for r in rows if trim(r)
        ]
        if not widths:
            return text
        return "\n".join(r[min(widths) :] if trim(r) else r for r in rows)

    lines, size = content.split("\n"), len(find.split("\n"))
    blocks = ["\n".join(lines[i : i + size]) for i in range(len(lines) - size + 1)]
    return [block for block in blocks if dedent(block) == dedent(find)]


def _plain_escape(content: str, find: str) -> list[str]:
    wanted = unescape(find)
    out = [wanted] if wanted in content else []
    lines, size = content.split("\n"), len(wanted.split("\n"))
    for i in range(len(lines) - size + 1):
        block = "\n".join(lines[i : i + size])
        if unescape(block) == wanted:
            out.append(block)
    return out


def _plain_context(content: str, find: str) -> list[str]:
    lines, wanted = content.split("\n"), find.split("\n")
    if len(wanted) < 3:
        return []
    if wanted[-1] == "":
        wanted.pop()
    trimmed = [trim(line) for line in lines]
    out = []
    for i in range(len(lines)):
        if trimmed[i] != trim(wanted[0]):
            continue
        j = _plain_closing(trimmed, i, trim(wanted[-1]))
        if j is None or j - i + 1 != len(wanted):
            continue
        pairs = [(trimmed[i + k], trim(wanted[k])) for k in range(1, len(wanted) - 1)]
        considered = [a == b for a, b in pairs if a or b]
        if not considered or sum(considered) / len(considered) >= 0.5:
            out.append("\n".join(lines[i : j + 1]))
    return out


LINE = st.sampled_from(
    ["a", " a", "a ", "b", "  b\t", "", " ", "x y", "x  y", "\tc", "\\n", "\\t", "\u00a0b", "d\x1c"]
)
CONTENT = st.lists(LINE, max_size=14).map("\n".join)
FIND = st.lists(LINE, min_size=1, max_size=5).map("\n".join).filter(bool)  # replace() rejects ""


@pytest.mark.parametrize(
    ("fast", "plain"),
    [
        (line_trimmed, _plain_line_trimmed),
        (block_anchor, _plain_block_anchor),
        (whitespace_normalized, _plain_whitespace),
        (indentation_flexible, _plain_indentation),
        (escape_normalized, _plain_escape),
        (context_aware, _plain_context),
    ],
    ids=lambda f: getattr(f, "__name__", ""),
)
@given(content=CONTENT, find=FIND)
def test_replacer_matches_plain_transcription(fast: Any, plain: Any, content: str, find: str) -> None:
    assert list(fast(content, find)) == plain(content, find)


@given(st.text(alphabet=st.sampled_from(list(_replace.JS_SPACE + "ab\x1c\x85\u180e")), max_size=60))
def test_bulk_line_normalisation(content: str) -> None:
    assert normalized_lines(content) == [normalize_whitespace(line) for line in content.split("\n")]
