"""``opencode run PROMPT``: drive the configured model with the project's tools until it answers."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import typer

from ..errors import message_of
from .common import (
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    SIGNAL_EXITS,
    err,
    exit_if_signalled,
    fail,
    friendly_errors,
    make_project,
    run_in_project,
)


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
    continue_last: bool = False,
    files: Sequence[Path] = (),
    title: str | None = None,
    fork: bool = False,
    variant: str | None = None,
) -> None:
    """Run ``prompt`` in a (kept) session: the reply streams to stdout, tool calls are shown on stderr
    (``--format json``: one event per line on stdout, each with the session id). Exit 0 on an answer,
    1 when a model or tool failure ended the run, 2 on a usage error (an unknown model or provider: no
    session is started), 3 when the run stopped at a refused permission ask, 130 on Ctrl-C (143 on
    SIGTERM; what was done is kept: ``--session`` continues it). The JSON stream's last event is
    ``{"type": "exit", "code": N, "reason": …}`` with the same code."""
    from ..context import AbortSignal
    from ..errors import OpencodeError
    from ..models.chat import resolve_model
    from ..models.errors import ModelChoiceError
    from ..models.loop import run as run_loop
    from .tools_cmd import session_options, warn_unasked

    if as_json:  # the events have stdout to themselves: what tools print goes to stderr
        from ..machine_output import claim

        claim()
    printer: _Printer = _JsonEvents() if as_json else _Terminal()
    with _ends_stream(printer), friendly_errors():
        project = make_project()
        if continue_last and session_id:
            fail("error: --continue and --session both name a session: give one")
        if continue_last:
            session_id = _last_session(project)
        if fork:
            if not session_id:
                fail("error: --fork copies the session --continue or --session names: give one")
            from ..transcript.exchange import fork as fork_session

            session_id = fork_session(project.store, session_id)
        missing = [str(path) for path in files if not path.exists()]
        if missing:
            fail(f"error: no such file: {missing[0]}")
        files = [path.resolve() for path in files]  # as typed: relative to the current directory
        options = session_options(yes, allow, deny, session_id)
        warn_unasked(project, allow, deny)
        options["remember"] = True  # a run is kept: --session continues it, also after Ctrl-C
        if title:
            options["title"] = title
        from ..session import recorded

        agent, ref = recorded(project, session_id, agent, model_text)  # a continued session's own
        ref = ref or project.generation.model(None)
        project.generation.agent(agent)  # an unknown agent is a usage error before anything starts
    abort = AbortSignal()
    started: list[Any] = []

    async def work() -> Any:
        await project.open()
        # no warning for a model no rule knows: the provider catalog refuses it, with the close matches
        model = await resolve_model(project, ref, variant)
        session = project.session(agent, model=ref, **options)
        if title and session.transcript.info.title != title:
            session.transcript.info.title = title
            session.transcript.update_session()
        started.append(session)
        printer.session_id = session.id
        async with session:
            return await run_loop(session, prompt, abort=abort, on_event=printer, model=model, files=files)

    def kept() -> None:
        if started:
            err(f"session {started[0].id} (continue it with --session {started[0].id})")

    try:
        result = run_in_project(project, work, abort)
    except SystemExit as stop:
        printer.exit(stop.code if isinstance(stop.code, int) else EXIT_TOOL_ERROR)
        kept()  # interrupted (130) or terminated (143): what was done is in the store
        raise
    except typer.Exit as stop:
        printer.exit(stop.exit_code)
        raise
    except ModelChoiceError as error:
        printer.exit(EXIT_USAGE)
        fail(f"error: {error}")
    except OpencodeError as error:
        printer.failed(message_of(error))
        printer.exit(SIGNAL_EXITS.get(abort.reason or "", EXIT_TOOL_ERROR))
        kept()
        exit_if_signalled(abort)
        raise typer.Exit(EXIT_TOOL_ERROR) from None
    printer.done(result)
    code = SIGNAL_EXITS.get(abort.reason or "", EXIT_REJECTED if result.reason == "rejected" else EXIT_OK)
    printer.exit(code)
    if not as_json or abort.aborted:  # an interrupted run is kept too: say how to continue it
        kept()
    exit_if_signalled(abort)
    if code == EXIT_REJECTED:
        raise typer.Exit(EXIT_REJECTED)


@contextlib.contextmanager
def _ends_stream(printer: _Printer) -> Iterator[None]:
    """A usage error found before the session starts (``fail``) ends the JSON stream too: its exit line."""
    try:
        yield
    except typer.Exit as stop:
        printer.exit(stop.exit_code)
        raise


def _last_session(project: Any) -> str:
    """The id of the project's most recently updated top-level session (``--continue``)."""
    found = project.store.latest_session(str(project.directory))
    if found is None:
        fail("error: no session to continue in this project (run without --continue to start one)")
    return found


class _Printer(Protocol):
    session_id: str | None

    def __call__(self, kind: str, data: dict[str, Any]) -> None: ...
    def done(self, result: Any) -> None: ...
    def failed(self, message: str) -> None: ...
    def exit(self, code: int) -> None: ...


#: The ``reason`` of the JSON stream's last event, by exit code.
EXIT_REASONS = {
    EXIT_OK: "answered",
    EXIT_TOOL_ERROR: "error",
    EXIT_USAGE: "usage",
    EXIT_REJECTED: "rejected",
    **{code: reason for reason, code in SIGNAL_EXITS.items()},
}


class _Terminal:
    """The reply as it streams, on stdout; each tool call as a line on stderr."""

    def __init__(self) -> None:
        self.at_line_start = True
        self.session_id: str | None = None

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "text":
            sys.stdout.write(data["text"])
            sys.stdout.flush()
            self.at_line_start = data["text"].endswith("\n")
        elif kind == "compaction":
            self._newline()
            err(f"… the context is nearly full ({data['tokens']} tokens): compacting the session")
        elif kind == "tool-start":
            self._newline()
            err(f"→ {data['tool']}")
        elif kind == "tool-end":
            mark = "✓" if data["status"] == "completed" else "✗"
            if data.get("rejected"):
                err(f"✗ {data['tool']}  rejected: the run ends here")
                return
            detail = data.get("title") or next(iter((data.get("error") or "").splitlines()), "")
            err(f"{mark} {data['tool']}" + (f"  {detail}" if detail else ""))

    def _newline(self) -> None:
        if not self.at_line_start:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.at_line_start = True

    def done(self, result: Any) -> None:
        self._newline()
        if result.reason == "rejected":
            err("note: a permission was rejected, so the run stopped there (exit 3)")
        if result.reason == "step-limit":
            err(f"note: the agent's step limit ended the run after {result.steps - 1} steps")

    def failed(self, message: str) -> None:
        self._newline()
        err(f"error: {message}")

    def exit(self, code: int) -> None:
        return None  # the exit status says it


class _JsonEvents:
    """One JSON object a line: ``text``, ``tool-start``, ``tool-end``, ``step``, ``finish``, ``error``,
    and last ``exit`` (the exit code and its reason); each carries the ``sessionID`` (the first, ``step``,
    too)."""

    def __init__(self) -> None:
        self.session_id: str | None = None

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self._line({"type": kind, "sessionID": self.session_id, **data})

    def _line(self, value: dict[str, Any]) -> None:
        from ..machine_output import stream

        out = stream()
        out.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
        out.flush()

    def done(self, result: Any) -> None:
        return None  # the finish event was the last line

    def failed(self, message: str) -> None:
        self._line({"type": "error", "sessionID": self.session_id, "message": message})

    def exit(self, code: int) -> None:
        reason = EXIT_REASONS.get(code, "error")
        self._line({"type": "exit", "sessionID": self.session_id, "code": code, "reason": reason})
