"""docs/behaviour.md explains every section of the behaviour notes that a docstring cites, and each row
points at documentation that exists (issue 18, item 4: docstrings point to files that ship)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "behaviour.md"
CITATION = re.compile(r"\b(core|builtin(?:-tools)?)(?: spec)? §(\d+(?:\.\d+)?)")
ROW = re.compile(r"^\| ((?:core|builtin-tools) §[\d.]+) \| [^|]+ \| ([^|]+) \|$", re.MULTILINE)


def cited() -> set[str]:
    found = set()
    for path in (ROOT / "opencode_cli").rglob("*.py"):
        for family, section in CITATION.findall(path.read_text(encoding="utf-8")):
            found.add(f"{'core' if family == 'core' else 'builtin-tools'} §{section}")
    return found


def rows() -> dict[str, str]:
    return dict(ROW.findall(PAGE.read_text(encoding="utf-8")))


def test_every_cited_section_is_explained() -> None:
    missing = sorted(cited() - set(rows()))
    assert missing == [], f"docs/behaviour.md needs a row for: {', '.join(missing)}"


def test_every_row_points_at_documentation_that_exists() -> None:
    readme_headings = set(re.findall(r"^#+ (.+)$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M))
    for section, where in rows().items():
        for page in re.findall(r"\]\(([\w.-]+\.md)(?:#[\w-]*)?\)", where):
            assert (ROOT / "docs" / page).exists(), f"{section}: docs/{page} does not exist"
        for heading in re.findall(r'README "([^"]+)"', where):
            assert heading in readme_headings, f"{section}: README has no heading {heading!r}"
