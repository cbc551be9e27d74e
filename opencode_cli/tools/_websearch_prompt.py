"""The ``websearch`` description: ``websearch.txt`` with ``{{year}}`` replaced by the current year.

Kept apart from :mod:`opencode_cli.tools.websearch` so that listing tools imports neither the tool nor
its HTTP client.
"""

from __future__ import annotations

import datetime
from pathlib import Path

TEMPLATE = Path(__file__).parent / "websearch.txt"


def describe(today: datetime.date | None = None) -> str:
    """The description for ``today`` (default: the local date)."""
    year = (today or datetime.date.today()).year
    return TEMPLATE.read_text(encoding="utf-8").replace("{{year}}", str(year))
