"""What a reload reports: the tools added, removed and changed, and what went wrong."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..toolspec import ToolSource


@dataclass(frozen=True)
class ToolInfo:
    """One tool as the model is offered it in a generation."""

    id: str
    source: ToolSource
    description: str
    parameters: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: ``id``, ``source``, ``description``."""
        return {"id": self.id, "source": self.source.as_dict(), "description": self.description}


@dataclass(frozen=True)
class ToolChange:
    """A tool offered before and after a reload, with a different schema, description or source."""

    before: ToolInfo
    after: ToolInfo

    @property
    def id(self) -> str:
        """The tool id."""
        return self.after.id

    @cached_property
    def parameters(self) -> list[str]:
        """The JSON-Schema difference, one line each (see :func:`opencode_cli.schema.describe_changes`)."""
        from ..schema import describe_changes

        return describe_changes(self.before.parameters, self.after.parameters)

    @property
    def description_changed(self) -> bool:
        """Whether the description the model reads changed."""
        return self.before.description != self.after.description

    @property
    def source_changed(self) -> bool:
        """Whether the tool now comes from somewhere else (a tool file shadowing a built-in, say)."""
        return self.before.source != self.after.source

    def description_diff(self, limit: int = 12) -> list[str]:
        """The description's changed lines (``-``/``+``), at most ``limit``."""
        lines = [
            line
            for line in difflib.unified_diff(
                self.before.description.splitlines(), self.after.description.splitlines(), n=0, lineterm=""
            )
            if not line.startswith(("---", "+++", "@@"))
        ]
        return lines[:limit] + ([f"… ({len(lines) - limit} more lines)"] if len(lines) > limit else [])

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: ``id``, ``source``, ``parameters`` (difference lines), ``description`` and
        ``source_before`` (``null`` when unchanged)."""
        return {
            "id": self.id,
            "source": self.after.source.as_dict(),
            "parameters": self.parameters,
            "description": (
                {"before": self.before.description, "after": self.after.description}
                if self.description_changed
                else None
            ),
            "source_before": self.before.source.as_dict() if self.source_changed else None,
        }


@dataclass
class ChangeReport:
    """What one reload did: the tools added, removed and changed, and what went wrong."""

    generation: int
    """The generation in use after this reload (unchanged when ``ok`` is false)."""
    files: list[str] = field(default_factory=list)
    """The watched paths that changed (empty for a :meth:`Watcher.reload` without paths)."""
    added: list[ToolInfo] = field(default_factory=list)
    removed: list[ToolInfo] = field(default_factory=list)
    changed: list[ToolChange] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """New failures, ``file:line: Type: message`` for a tool file (or the config error)."""
    kept: dict[str, list[str]] = field(default_factory=dict)
    """Tool file -> the ids it keeps from the last good generation (it failed to import)."""
    resolved: list[str] = field(default_factory=list)
    """Files (or plugins) that failed in the previous generation and load again."""
    gone: list[str] = field(default_factory=list)
    """Files that failed in the previous generation and were deleted since (their error with them)."""
    config: list[str] = field(default_factory=list)
    """What changed in the merged configuration, one line each (``~ tool_output.max_lines: 5 -> 3``)."""
    warnings: list[str] = field(default_factory=list)
    ok: bool = True
    """False when no generation could be built (e.g. invalid TOML): the previous one stays in use."""

    @property
    def unchanged(self) -> bool:
        """No tool was added, removed or changed."""
        return not (self.added or self.removed or self.changed)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one ``opencode tools watch --json`` line (``"event": "reload"``)."""
        return {
            "event": "reload",
            "ok": self.ok,
            "generation": self.generation,
            "files": self.files,
            "added": [tool.as_dict() for tool in self.added],
            "removed": [tool.as_dict() for tool in self.removed],
            "changed": [change.as_dict() for change in self.changed],
            "errors": self.errors,
            "kept": self.kept,
            "resolved": self.resolved,
            "gone": self.gone,
            "config": self.config,
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        """One line: the generation and what changed."""
        if not self.ok:
            return f"reload failed, generation {self.generation} kept"
        parts = [
            f"{len(items)} {word}"
            for items, word in ((self.added, "added"), (self.removed, "removed"), (self.changed, "changed"))
            if items
        ]
        if not parts:
            parts.append("no change to the tools")
        if self.config:
            parts.insert(0, "config changed")
        if self.errors:
            parts.append(f"{len(self.errors)} error{'s' if len(self.errors) != 1 else ''}")
        return f"generation {self.generation}: {', '.join(parts)}"
