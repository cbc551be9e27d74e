"""``opencode stats``: tokens and cost per model, and per tool the calls, failures, refusals and times,
from the sessions kept in the store (:mod:`opencode_cli.stats`)."""

from __future__ import annotations

import os
from typing import Any

from .common import fail, friendly_errors, make_project, print_json, write_out

#: The widest bar of the tool table's chart.
BAR = 24


def stats(*, tools: bool, models: bool, days: int | None, project: str | None, as_json: bool) -> None:
    """Print the figures (both tables unless ``--tools`` or ``--models`` picks one; ``--json``: the
    figures as one object, ``{"scope", "models", "tools"}``)."""
    from ..stats import gather, since

    if days is not None and days < 1:
        fail(f"error: --days must be a whole number of days from 1, not {days}")
    with friendly_errors():
        current = make_project()
        directory = (
            None if project is None else str(current.directory if project == "." else _absolute(project))
        )
        messages, parts = current.store.usage(since(days))
    figures = gather(messages, parts, directory)
    scope = {"project": directory, "days": days}
    if not tools and not models:
        tools = models = True
    shown: dict[str, Any] = {"scope": scope}
    if models:
        shown["models"] = figures["models"]
    if tools:
        shown["tools"] = figures["tools"]
    if as_json:
        print_json(shown)
        return
    where = f"project {directory}" if directory else "all projects"
    write_out(f"{where}, {f'the last {days} days' if days else 'all time'}")
    if models:
        write_out("\n")
        write_out(_table(_model_rows(figures["models"])) if figures["models"] else "no model steps recorded")
    if tools:
        write_out("\n")
        write_out(_table(_tool_rows(figures["tools"])) if figures["tools"] else "no tool calls recorded")


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def _model_rows(models: dict[str, Any]) -> list[list[str]]:
    rows = [["MODEL", "STEPS", "INPUT", "OUTPUT", "REASONING", "CACHE READ", "CACHE WRITE", "COST"]]
    for name, figures in models.items():
        tokens = figures["tokens"]
        counts = [tokens[key] for key in ("input", "output", "reasoning", "cache_read", "cache_write")]
        rows.append([name, str(figures["steps"]), *map(str, counts), f"${figures['cost']:.4f}"])
    return rows


def _tool_rows(tools: dict[str, Any]) -> list[list[str]]:
    rows = [
        ["TOOL", "CALLS", "ERRORS", "REFUSED", "DOOM LOOP", "INTERRUPTED", "MEDIAN", "P95", "TRUNCATED", ""]
    ]
    most = max(figures["calls"] for figures in tools.values())
    for name, figures in tools.items():
        bar = "█" * max(1, round(BAR * figures["calls"] / most))
        numbers = [figures[key] for key in ("calls", "errors", "refused", "doom_loop", "interrupted")]
        times = [_ms(figures["median_ms"]), _ms(figures["p95_ms"])]
        rows.append([name, *map(str, numbers), *times, str(figures["truncated"]), bar])
    return rows


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value} ms"


def _table(rows: list[list[str]]) -> str:
    """Columns padded to their widest cell (the first left-aligned, numbers right-aligned)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:-1], strict=True)
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)
