"""Diagnostics after edit, write and apply_patch (builtin spec §1.9, §6.1 step 10, §7, §8.3).

:func:`after_edit` is the one call those tools make once their files are written: for each file a
language server handles, the server is told the new text and its diagnostics are awaited, all within one
bound (:data:`DEFAULT_WAIT`, or ``OPENCODE_LSP_DIAGNOSTICS_TIMEOUT_MS``). Only errors are shown, at most
:data:`MAX_PER_FILE` per file, in the spec's block. No server for a file: nothing is awaited and pygls
is not imported. A server that fails, crashes or hangs never fails the edit: it is reported once (the
project's warning) and set aside for later edits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import message_of

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..project import Project

#: Errors shown per file.
MAX_PER_FILE = 20
#: Other files with errors that ``write`` shows.
MAX_OTHER_FILES = 5
#: Seconds an edit may wait for its diagnostics (starting the server included).
DEFAULT_WAIT = 5.0
ERROR = 1


def _get(diagnostic: Any, *keys: str) -> Any:
    node = diagnostic
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else getattr(node, key, None)
    return node


def block(path: str, diagnostics: Iterable[Any]) -> str:
    """The spec's diagnostics block of ``path``'s errors (severity 1), or ``""`` when it has none.

    ``diagnostics`` are lsprotocol ``Diagnostic`` values or their JSON dicts.
    """
    errors = [d for d in diagnostics if int(_get(d, "severity") or 0) == ERROR]
    if not errors:
        return ""
    lines = []
    for diagnostic in errors[:MAX_PER_FILE]:
        line = int(_get(diagnostic, "range", "start", "line") or 0) + 1
        column = int(_get(diagnostic, "range", "start", "character") or 0) + 1
        lines.append(f"ERROR [{line}:{column}] {_get(diagnostic, 'message')}")
    if len(errors) > MAX_PER_FILE:
        lines.append(f"... and {len(errors) - MAX_PER_FILE} more")
    return f'<diagnostics file="{path}">\n' + "\n".join(lines) + "\n</diagnostics>"


@dataclass
class Report:
    """What the servers said after an edit: every file's diagnostics (JSON dicts), by absolute path."""

    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def block(self, path: str) -> str:
        """The errors block of ``path`` (``""``: none)."""
        return block(path, self.files.get(path, []))

    def for_edit(self, path: str) -> str:
        """What edit appends: the edited file's errors only."""
        text = self.block(path)
        return f"\n\nLSP errors detected in this file, please fix:\n{text}" if text else ""

    def for_write(self, path: str) -> str:
        """What write appends: the written file's errors, then up to five other files with errors."""
        parts = [self.for_edit(path)]
        others = 0
        for other in self.files:
            if other == path or others >= MAX_OTHER_FILES:
                continue
            text = self.block(other)
            if text:
                others += 1
                parts.append(f"\n\nLSP errors detected in other files:\n{text}")
        return "".join(parts)

    def for_patch(self, targets: Iterable[tuple[str, str]]) -> str:
        """What apply_patch appends: the block of each ``(absolute path, shown path)`` with errors."""
        parts = []
        for path, shown in targets:
            text = self.block(path)
            if text:
                parts.append(f"\n\nLSP errors detected in {shown}, please fix:\n{text}")
        return "".join(parts)


def _wait_bound(project: Project) -> float:
    value = project.env.get("OPENCODE_LSP_DIAGNOSTICS_TIMEOUT_MS", "")
    try:
        milliseconds = int(value)
    except ValueError:
        return DEFAULT_WAIT
    return milliseconds / 1000 if milliseconds > 0 else DEFAULT_WAIT


async def after_edit(ctx: ToolContext, paths: Iterable[str]) -> Report:
    """Tell the servers of ``paths`` (files just written) their new text and collect the diagnostics.

    Returns an empty :class:`Report` at once when no server handles any of them. Never raises for a
    server's failure.
    """
    project = ctx.project
    from ..errors import ConfigError
    from .servers import matching

    try:
        wanted = [(path, matching(project, path)) for path in dict.fromkeys(paths)]
    except ConfigError as error:  # a broken [lsp] table never fails an edit
        project.warn(f"no diagnostics after edits: {error}")
        return Report()
    wanted = [(path, matches) for path, matches in wanted if matches]
    if not wanted:
        return Report()
    return await _collect(project, wanted)


async def _collect(project: Project, wanted: list[tuple[str, list[Any]]]) -> Report:
    import asyncio

    from .servers import LspServers

    servers = await LspServers.of(project)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _wait_bound(project)
    views: dict[str, dict[str, list[Any]]] = {}  # each server's latest view of every file
    for path, matches in wanted:
        try:
            text = _read(path)
        except OSError:  # gone or unreadable since it was written: nothing to check
            continue
        for match in matches:
            if match.spec.name in servers.set_aside:
                continue
            try:
                client = await asyncio.wait_for(servers.client(match), max(deadline - loop.time(), 0.001))
            except TimeoutError:  # it goes on starting: the next edit finds it ready
                project.warn(f"language server {match.spec.name} was still starting; no diagnostics yet")
                continue
            except Exception as error:
                _set_aside(servers, match, message_of(error))
                continue
            try:
                changed = client.sync(path, text)
                late = not await client.diagnostics(path, max(deadline - loop.time(), 0.001), changed)
                if changed:
                    await client.refresh_others(path, max(deadline - loop.time(), 0.001))
            except Exception as error:  # a pull that timed out, a server that exited
                _set_aside(servers, match, message_of(error))
                continue
            if late:
                project.warn(f"language server {match.spec.name} sent no diagnostics for {path} in time")
            view = views.setdefault(match.key, {})
            view.update(_all_files(client, path))
    report = Report()
    for view in views.values():
        _merge(report, view)
    return report


async def of_file(project: Project, path: str) -> Report:
    """The diagnostics of one file from every server that handles it (``opencode lsp diagnostics``).

    Raises :class:`~opencode_cli.errors.ToolError` when no server handles it or none could answer.
    """
    import asyncio

    from ..errors import ToolError
    from .servers import LspServers, matching

    if not matching(project, path):
        raise ToolError("No LSP server available for this file type.")
    servers = await LspServers.of(project)
    clients, errors = await servers.clients(path)
    if not clients:
        raise ToolError("; ".join(errors))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _wait_bound(project)
    report = Report()
    for client in clients:
        changed = client.sync(path, _read(path))
        await client.diagnostics(path, max(deadline - loop.time(), 0.001), changed)
        _merge(report, _all_files(client, path))
    return report


def _all_files(client: Any, path: str) -> dict[str, list[Any]]:
    """Every file's diagnostics the client knows, as JSON dicts by absolute path."""
    from lsprotocol.converters import get_converter

    from .client import uri_path

    converter = get_converter()
    result: dict[str, list[Any]] = {path: []}
    for uri, items in client.pushed.items():
        if items and uri.startswith("file://") and os.path.exists(uri_path(uri)):
            result[uri_path(uri)] = [converter.unstructure(d) for d in items]
    return result


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as file:
        return file.read()


def _merge(report: Report, found: dict[str, list[Any]]) -> None:
    for path, items in found.items():
        report.files.setdefault(path, []).extend(items)


def _set_aside(servers: Any, match: Any, reason: str) -> None:
    servers.set_aside[match.spec.name] = reason
    servers.project.warn(
        f"language server {match.spec.name} is not used for diagnostics after edits any more: {reason}"
    )


def metadata(report: Report) -> dict[str, list[dict[str, Any]]]:
    """The ``diagnostics`` metadata of edit, write and apply_patch: every file's diagnostics."""
    return {path: items for path, items in report.files.items() if items}
