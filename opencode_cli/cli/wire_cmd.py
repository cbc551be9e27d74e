"""``opencode tools schema`` (the exact ``tools`` payload of a request) and ``opencode tools call``
(a raw tool call as a model emits it, through repair and dispatch)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from .common import (
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    err,
    exit_if_signalled,
    fail,
    friendly_errors,
    make_project,
    model_of,
    print_json,
    run_in_project,
    with_mcp,
    write_out,
)


def _session(
    project: Any, model_text: str | None, agent: str | None, profile: str | None, **options: Any
) -> Any:
    return project.session(agent, model=model_of(project, model_text), profile=profile, **options)


def schema(model_text: str | None, agent: str | None, format: str | None, profile: str | None) -> None:
    """Print the ``tools`` payload a request for ``model_text`` carries, in the provider's wire shape."""
    from ..machine_output import claim
    from ..wire import WireError, default_format, render
    from .tools_cmd import question_asker

    claim()  # the payload has stdout to itself: what tools print goes to stderr
    with friendly_errors():
        project = make_project()
        asker = question_asker()  # ``question`` is offered as by ``tools call``: if someone can answer
        extra = {"question": asker} if asker is not None else {}
        session = _session(project, model_text, agent, profile, extra=extra)
        tools = with_mcp(project, session.resolve)
        chosen = format or default_format(session.model.provider if session.model else None)
        try:
            payload = render(tools, chosen)
        except WireError as error:
            fail(f"error: {error}")
    print_json(payload)


def call(
    text: str | None,
    file: Path | None,
    *,
    model_text: str | None,
    agent: str | None,
    profile: str | None,
    session_id: str | None,
    yes: bool,
    allow: list[str],
    deny: list[str],
    as_json: bool,
) -> None:
    """Run raw tool call(s) through repair and dispatch; print what the model would see next."""

    from ..wire import WireError, loads
    from .tools_cmd import session_options, warn_unasked

    if text is None and file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            fail(f"error: cannot read {file}: {getattr(error, 'strerror', None) or error}")
    if text is None:
        text = sys.stdin.read()
    try:
        calls = loads(text)
    except WireError as error:
        fail(f"error: {error}")
    with friendly_errors():
        project = make_project()
        options = session_options(yes, allow, deny, session_id)
        warn_unasked(project, allow, deny)
        session = _session(project, model_text, agent, profile, **options)
        if not project.generation.mcp_servers:
            session.resolve()

    from ..context import AbortSignal

    abort = AbortSignal()

    async def run_all() -> list[Any]:
        if project.generation.mcp_servers:
            await project.open()
            with friendly_errors():
                session.resolve()
        async with session:
            return [await session.dispatch(one, abort=abort) for one in calls]

    parts = run_in_project(project, run_all, abort)
    if as_json:
        print_json({"parts": [part.as_dict() for part in parts]})
    else:
        for index, part in enumerate(parts):
            if len(parts) > 1:
                repaired = f" (called as {part.requested})" if part.requested != part.tool else ""
                print(
                    f"{'' if index == 0 else chr(10)}── {part.tool}{repaired} [{part.call_id}] {part.status}"
                )
            write_out(part.text)
    failed = [p for p in parts if p.status == "error" or p.tool == "invalid"]
    exit_if_signalled(abort)
    if failed:
        if not as_json:
            err(f"{len(failed)} of {len(parts)} call(s) failed or were rerouted to invalid")
        raise typer.Exit(EXIT_TOOL_ERROR)


__all__ = ["EXIT_USAGE", "call", "schema"]
