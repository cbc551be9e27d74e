"""``invalid``: where calls to unknown tools or with unparsable arguments are rerouted (core spec §4.1).

It is registered like any tool but never offered to a model.
"""

from __future__ import annotations

import re
from typing import Any

from ..results import ToolResult
from ._arguments import Arguments

_CONTROL_TOKENS = re.compile(r"<\|[^|<>]*\|>")


class InvalidParameters(Arguments):
    """The original tool name and the error that made the call invalid."""

    tool: str
    error: str


def execute(params: InvalidParameters) -> ToolResult:
    """Tell the model why its call could not run."""
    error = _CONTROL_TOKENS.sub("", params.error)
    return ToolResult(title="Invalid Tool", output=f"The arguments provided to the tool are invalid: {error}")


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": InvalidParameters, "execute": execute}
