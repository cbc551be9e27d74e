"""Write ``schemas.json``: the built-in tools' schemas, recorded from their live definitions.

    python -m opencode_cli.tools._record

(See :mod:`opencode_cli.tools._schemas`; a test fails while the file and the live schemas differ.)
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from ._schemas import FILE, RECORDED, module_of, source_digest


def _built(tool_id: str) -> dict[str, Any]:
    module = importlib.import_module(f"opencode_cli.tools.{module_of(tool_id)}")
    if module_of(tool_id) == "task":
        from ..flags import Flags

        return module.init(Flags(experimental_background_subagents=tool_id == "task@background"))
    return module.init()


def _model(built: dict[str, Any]) -> Any:
    return built["parameters_from"]() if "parameters_from" in built else built.get("parameters")


def live_model(tool_id: str) -> Any:
    """The built tool's parameters model (``None`` for a JSON-Schema tool); imports its module."""
    return _model(_built(tool_id))


def live_schema(tool_id: str) -> dict[str, Any]:
    """The schema of the built tool (imports its module)."""
    from ..contract import Tool

    built = _built(tool_id)
    tool = Tool(tool_id, "", parameters=_model(built), json_schema=built.get("json_schema"))
    return tool.schema()


def live_facts(tool_id: str) -> dict[str, Any] | None:
    """The facts of the built tool's parameters model (see :mod:`opencode_cli.plain_args`)."""
    from ..plain_args import facts_of

    model = live_model(tool_id)
    return facts_of(model) if model is not None else None


def build_table() -> dict[str, Any]:
    """Every recorded built-in's live schema, facts and source digest."""
    return {
        tool_id: {
            "source": source_digest(tool_id),
            "schema": live_schema(tool_id),
            "plain": live_facts(tool_id),
        }
        for tool_id in RECORDED
    }


def main() -> None:
    """Write ``schemas.json`` from the live definitions."""
    FILE.write_text(json.dumps(build_table(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {FILE}")


if __name__ == "__main__":
    main()
