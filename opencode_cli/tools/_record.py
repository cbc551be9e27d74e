"""Write ``schemas.json``: the built-in tools' schemas, recorded from their live definitions.

    python -m opencode_cli.tools._record

(See :mod:`opencode_cli.tools._schemas`; a test fails while the file and the live schemas differ.)
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from ._schemas import FILE, RECORDED, source_digest


def live_schema(tool_id: str) -> dict[str, Any]:
    """The schema of the built tool (imports its module)."""
    from ..contract import Tool

    built = importlib.import_module(f"opencode_cli.tools.{tool_id}").init()
    tool = Tool(tool_id, "", parameters=built.get("parameters"), json_schema=built.get("json_schema"))
    return tool.schema()


def build_table() -> dict[str, Any]:
    """Every recorded built-in's live schema and source digest."""
    return {
        tool_id: {"source": source_digest(tool_id), "schema": live_schema(tool_id)} for tool_id in RECORDED
    }


def main() -> None:
    """Write ``schemas.json`` from the live definitions."""
    FILE.write_text(json.dumps(build_table(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {FILE}")


if __name__ == "__main__":
    main()
