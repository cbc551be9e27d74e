"""``opencode tools watch``: hot reload of tool files and ``opencode.toml``, one report per change."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from typing import Any

from .common import collect_from_now_on, err, first_line, friendly_errors, make_project, model_of, print_rows


def watch(model_text: str | None, agent: str | None, as_json: bool) -> None:
    """Print the tools, then what each change does to them, until Ctrl-C (or SIGTERM): exit 0."""
    import asyncio

    with friendly_errors():
        project = make_project(quiet=False)
        model_of(project, model_text)  # a model no rule recognises is warned about once, here
        watcher = project.watch(model=model_text, agent=agent)
        watcher.current  # noqa: B018 - the first generation: a broken config is an error here (exit 2)
    collect_from_now_on()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_follow(watcher, project, as_json))


async def _follow(watcher: Any, project: Any, as_json: bool) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, watcher.close)
    try:
        with friendly_errors():
            if project.generation.mcp_servers:
                await project.open()  # the first report has the servers' tools, as tools list does
            await watcher.start()
        _print_start(watcher, as_json)  # only now: every later save is seen
        async for report in watcher:
            if as_json:
                _line(report.as_dict())
            else:
                _print_report(report, project)
    finally:
        await watcher.stop()
        await project.aclose()  # whatever the tools started is stopped with the watching


def _print_start(watcher: Any, as_json: bool) -> None:
    first = watcher.current
    roots = list(watcher.plan.roots) if watcher.plan else []
    if watcher.notice:
        err(f"note: {watcher.notice}")
    if as_json:
        model = watcher.model
        _line(
            {
                "event": "start",
                "generation": first.number,
                "model": str(model) if model else None,
                "tools": [tool.as_dict() for tool in first.tools.values()],
                "errors": list(first.failures.values()),
                "not_reloaded": first.entry_point_plugins(),
                "watching": roots,
                "polling": watcher.polling,
            }
        )
        return
    _print_tools(first.tools.values())
    for error in first.failures.values():
        print(f"  ! {error}")
    polling = " (polling)" if watcher.polling else ""
    print(f"watching {len(roots)} folders for tool files and opencode.toml{polling}; Ctrl-C to stop")
    sys.stdout.flush()


def _line(value: dict[str, Any]) -> None:
    from ..machine_output import stream

    out = stream()
    out.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    out.flush()


def _print_tools(tools: Any) -> None:
    print_rows([(tool.id, tool.source.describe(), first_line(tool.description)) for tool in tools])


def _short(path: str, project: Any) -> str:
    with contextlib.suppress(ValueError):
        return os.path.relpath(path, project.directory) if path.startswith(str(project.root)) else path
    return path


def _print_report(report: Any, project: Any) -> None:
    files = ", ".join(_short(path, project) for path in report.files)
    stamp = time.strftime("%H:%M:%S")
    print(f"[{stamp}] {report.summary()}" + (f"  ({files})" if files else ""))
    for tool in report.added:
        print(f"  + {tool.id}  ({tool.source.describe()})  {first_line(tool.description)}".rstrip())
    for tool in report.removed:
        print(f"  - {tool.id}  ({tool.source.describe()})")
    for change in report.changed:
        if change.source_changed:
            before, after = change.before.source.describe(), change.after.source.describe()
            print(f"  ~ {change.id}  source: {before} -> {after}")
        if change.parameters:
            print(f"  ~ {change.id}  parameters:")
            for line in change.parameters:
                print(f"      {line}")
        if change.description_changed:
            print(f"  ~ {change.id}  description:")
            for line in change.description_diff():
                print(f"      {line}")
    for line in report.config:
        print(f"  config {line}")
    for key in report.resolved:
        print(f"  ok {_short(key, project)} loads again")
    for key in report.gone:
        print(f"  - {_short(key, project)} deleted, with its error")
    for error in report.errors:
        print(f"  ! {error}")
        path = error.split(":", 1)[0]
        if path in report.kept:
            print(f"    kept the last good version: {', '.join(report.kept[path])}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    sys.stdout.flush()
