"""``opencode run PROMPT``: drive the configured model with the project's tools until it answers."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from .common import EXIT_TOOL_ERROR, err, exit_if_signalled, friendly_errors, make_project, run_in_project


def run(
    prompt: str,
    *,
    model_text: str | None,
    agent: str | None,
    session_id: str | None,
    yes: bool,
    allow: list[str],
    deny: list[str],
    as_json: bool,
) -> None:
    """Run ``prompt`` in a (kept) session: the reply streams to stdout, tool calls are shown on stderr
    (``--json``: one event per line on stdout). Exit 0 on an answer, 1 when a model or tool failure ended
    the run, 130 on Ctrl-C (the session is kept: ``--session`` continues it)."""
    from ..context import AbortSignal
    from ..errors import OpencodeError
    from .tools_cmd import session_options, warn_unasked

    with friendly_errors():
        project = make_project()
        options = session_options(yes, allow, deny, session_id)
        warn_unasked(project, allow, deny)
        options["remember"] = True  # a run is kept: --session continues it, also after Ctrl-C
        # no warning for a model no rule knows: the provider catalog refuses it, with the close matches
        session = project.session(agent, model=project.model(model_text), **options)
    printer = _JsonEvents() if as_json else _Terminal()
    abort = AbortSignal()

    async def work() -> Any:
        await project.open()
        async with session:
            return await session.run(prompt, abort=abort, on_event=printer)

    try:
        result = run_in_project(project, work, abort)
    except typer.Exit:
        raise
    except OpencodeError as error:
        printer.failed(str(error) or type(error).__name__)
        err(f"session {session.id} (continue it with --session {session.id})")
        exit_if_signalled(abort)
        raise typer.Exit(EXIT_TOOL_ERROR) from None
    printer.done(result)
    if not as_json:
        err(f"session {session.id} (continue it with --session {session.id})")
    exit_if_signalled(abort)


class _Terminal:
    """The reply as it streams, on stdout; each tool call as a line on stderr."""

    def __init__(self) -> None:
        self.at_line_start = True

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "text":
            sys.stdout.write(data["text"])
            sys.stdout.flush()
            self.at_line_start = data["text"].endswith("\n")
        elif kind == "tool-start":
            self._newline()
            err(f"→ {data['tool']}")
        elif kind == "tool-end":
            mark = "✓" if data["status"] == "completed" else "✗"
            detail = data.get("title") or next(iter((data.get("error") or "").splitlines()), "")
            err(f"{mark} {data['tool']}" + (f"  {detail}" if detail else ""))

    def _newline(self) -> None:
        if not self.at_line_start:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.at_line_start = True

    def done(self, result: Any) -> None:
        self._newline()
        if result.reason == "step-limit":
            err(f"note: the agent's step limit ended the run after {result.steps - 1} steps")

    def failed(self, message: str) -> None:
        self._newline()
        err(f"error: {message}")


class _JsonEvents:
    """One JSON object a line: ``text``, ``tool-start``, ``tool-end``, ``step``, ``finish``, ``error``."""

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self._line({"type": kind, **data})

    def _line(self, value: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()

    def done(self, result: Any) -> None:
        return None  # the finish event was the last line

    def failed(self, message: str) -> None:
        self._line({"type": "error", "message": message})
