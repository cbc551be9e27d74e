"""``opencode tools list | inspect | run``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidArgumentsError
from .common import (
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    err,
    exit_if_signalled,
    fail,
    first_line,
    friendly_errors,
    make_project,
    model_of,
    print_json,
    print_rows,
    run_in_project,
    terminal_attached,
    unasked_in,
    with_mcp,
)

#: Tools that put questions to the user through the question asker (:mod:`opencode_cli.tools._question`).
ASKING_TOOLS = frozenset({"question", "plan_exit"})


def list_tools(model_text: str | None, agent: str | None, show_all: bool, as_json: bool) -> None:
    """Print the tools a model is offered (and, with ``show_all``, the others with the reason)."""
    from ..policy import depends_on_model

    with friendly_errors():
        project = make_project()
        model = model_of(project, model_text)
        # as a session of this command would offer it: `question` only when someone can answer
        switches = None if terminal_attached() else {"question": False}
        offer = with_mcp(project, lambda: project.generation.offer(model, agent, switches=switches))
        offered = offer.tools
        hidden = offer.hidden if show_all else []
        held = [record for record in project.generation.held_back if record.kind == "file"]
    if as_json:
        print_json(
            {
                "model": str(model) if model else None,
                "agent": project.generation.agent(agent).name,
                "tools": [
                    {
                        "id": d.id,
                        "source": d.entry.source.as_dict(),
                        "description": d.description,
                        "shadowed": [s.as_dict() for s in d.entry.shadowed],
                        "renamed": d.entry.renamed,
                    }
                    for d in offered
                ],
                "hidden": [
                    {
                        "id": h.entry.id,
                        "source": h.entry.source.as_dict(),
                        "reason": h.reason,
                        "renamed": h.entry.renamed,
                    }
                    for h in hidden
                ],
                "not_trusted": [{"file": record.location, "reason": record.error} for record in held],
            }
        )
        return
    root = str(project.root)  # tool files are named from the project's root
    rows = [
        (d.id, d.entry.source.describe(root), described(d.entry, first_line(d.description), show_all))
        for d in offered
    ]
    rows += [
        (h.entry.id, h.entry.source.describe(root), described(h.entry, f"(hidden: {h.reason})", True))
        for h in hidden
    ]
    rows += [(record.name, f"file {record.location}", f"(not trusted: {record.error})") for record in held]
    print_rows(rows)
    if show_all and model is None and any(depends_on_model(d.entry) for d in offered):
        err("note: no model named (--model or config 'model'): per-model rules not applied")


def described(entry: Any, text: str, show_all: bool) -> str:
    """``text`` (a description's first line, a hidden tool's reason) after why the tool's id was
    renamed, with ``--all``."""
    return f"(renamed: {entry.renamed}) {text}".rstrip() if show_all and entry.renamed else text


def inspect_tool(
    tool_id: str, model_text: str | None, agent: str | None, as_json: bool, profile: str | None = None
) -> None:
    """Print one tool's description, source and parameters as the model's provider receives them."""
    from ..schema import describe_changes
    from ..schema_profiles import adapt, check_profile, profile_for

    with friendly_errors():
        project = make_project()
        model = model_of(project, model_text)

        def look() -> tuple[Any, Any, Any]:
            entry = project.registry.get(tool_id)
            offer = project.generation.offer(model, agent)
            offered = next((d for d in offer.tools if d.id == entry.id), None)  # as the model is told it
            return entry, offered or project.registry.definition(entry, model), offer

        entry, definition, offer = with_mcp(project, look, project.mcp.servers_for(tool_id))
        reason = next((h.reason for h in offer.hidden if h.entry.id == entry.id), None)
        normalized = definition.parameters
        if profile is not None:
            check_profile(profile)
        profile = profile or (profile_for(model.provider, model.id) if model else "default")
        parameters = adapt(normalized, profile)
        changes = describe_changes(normalized, parameters)
    source = entry.source
    if as_json:
        print_json(
            {
                "id": entry.id,
                "source": source.as_dict(),
                "shadowed": [s.as_dict() for s in entry.shadowed],
                "renamed": entry.renamed,
                "model": str(model) if model else None,
                "offered": reason is None,
                "reason": reason,
                "description": definition.description,
                "profile": profile,
                "parameters": parameters,
                "normalized": normalized,
                "changes": changes,
            }
        )
        return
    print(f"id:       {entry.id}")
    print(f"source:   {source.describe()}")
    for shadowed in entry.shadowed:
        print(f"shadows:  {shadowed.describe()}")
    if entry.renamed:
        print(f"renamed:  {entry.renamed}")
    if model is not None:
        print(f"model:    {model}")
    print(f"offered:  {'yes' if reason is None else 'no - ' + reason}")
    print("\ndescription:\n")
    print(definition.description.rstrip())
    print(f"\nparameters (JSON Schema, {profile} profile):\n")
    print(json.dumps(parameters, indent=2, ensure_ascii=False))
    if changes:
        print(f"\nchanges made by the {profile} profile ({len(changes)}):")
        for change in changes:
            print(f"  {change}")


def _terminal_prompt(yes: bool) -> Any:
    """The permission prompt for ``tools run``: approve all, ask on a terminal, or refuse with a hint."""
    from ..session import Decision

    async def approve(request: Any) -> Decision:
        return Decision("once")

    async def ask(request: Any) -> Decision:
        patterns = ", ".join(request.patterns)
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            flags = " ".join(f"--allow '{request.permission}={p}'" for p in request.patterns)
            err(
                f"permission needed: {request.permission} on {patterns}; there is no terminal to ask, "
                f"so it was refused. To approve, rerun with {flags} (or --yes for every ask), or add an "
                f"allow rule under [permission] in opencode.toml."
            )
            return Decision("reject")
        summary = (request.metadata or {}).get("summary")
        if isinstance(summary, str) and summary:  # what the ask is about (an MCP sampling request)
            sys.stderr.write(summary + "\n")
        while True:
            sys.stderr.write(f"Allow {request.permission} on {patterns}? [o]nce, [a]lways, [r]eject: ")
            sys.stderr.flush()
            answer = sys.stdin.readline().strip().lower()
            if answer in ("o", "once", "y", "yes"):
                return Decision("once")
            if answer in ("a", "always"):
                return Decision("always")
            if answer in ("r", "reject", "n", "no", ""):
                sys.stderr.write("Feedback for the model (empty for none): ")
                sys.stderr.flush()
                feedback = sys.stdin.readline().strip()
                return Decision("reject", feedback or None)

    return approve if yes else ask


def question_asker(answers: Sequence[str] = (), *, always: bool = False) -> Any:
    """The CLI's question asker: a :class:`~.question_prompt.TerminalAsker` when someone can answer (a
    terminal to ask on, or ``--answer`` values), else ``None`` so the session does not offer ``question``
    (as OpenCode's non-interactive runs). ``always``: give one anyway (a tool the user runs by name says
    itself that there is no terminal)."""
    if not (always or answers or terminal_attached()):
        return None  # nobody to answer: the prompt's module is not even loaded
    from .question_prompt import TerminalAsker

    return TerminalAsker(list(answers))


def session_options(
    yes: bool,
    allow: list[str],
    deny: list[str],
    session_id: str | None,
    answers: Sequence[str] = (),
    *,
    asker: Any = None,
) -> dict[str, Any]:
    """The Session options the CLI's flags stand for: the terminal (or --yes) prompt, live progress,
    --allow/--deny rules, the question asker (when someone can answer: see :func:`question_asker`; or
    ``asker``), and a remembered named session."""
    asker = asker if asker is not None else question_asker(answers)
    options: dict[str, Any] = {
        "prompt": _terminal_prompt(yes),
        "on_metadata": _progress_printer(),
        "rules": flag_rules(allow, "allow") + flag_rules(deny, "deny"),
        "extra": {"question": asker} if asker is not None else {},
    }
    if session_id:
        options.update(id=session_id, remember=True)
    return options


def flag_rules(values: list[str], action: str) -> list[Any]:
    """``--allow read=src/*`` / ``--deny bash`` as session rules (no pattern means every pattern)."""
    from ..permission import Rule

    rules = []
    for value in values:
        permission, _, pattern = value.partition("=")
        if not permission:
            fail(f"error: --{action} takes PERMISSION or PERMISSION=PATTERN, not {value!r}")
        rules.append(Rule(permission, pattern or "*", action, f"--{action}"))  # type: ignore[arg-type]
    return rules


def warn_unasked(project: Any, allow: Sequence[str], deny: Sequence[str]) -> None:
    """A warning on stderr for each ``--allow``/``--deny`` whose permission no registered tool asks (a
    typo would otherwise leave the rule silently unused): :func:`~.common.unasked_in`."""
    if not allow and not deny:
        return
    for flag, values in (("allow", allow), ("deny", deny)):
        for value in values:
            problem = unasked_in(project, value.partition("=")[0])
            if problem is not None:
                err(f"warning: --{flag} {value}: {problem}")


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return None
    from ..live import added_output

    shown = [""]  # the live ``output`` printed so far (bash streams its output this way)

    def show(title: str | None, metadata: dict[str, Any] | None) -> None:
        output = (metadata or {}).get("output")
        if isinstance(output, str):
            sys.stderr.write(added_output(shown[0], output))
            shown[0] = output
        elif title:
            sys.stderr.write(f"\r\x1b[2K… {title}")
        sys.stderr.flush()

    return show


def run_tool(
    tool_id: str,
    tokens: list[str],
    *,
    json_: bool,
    session_id: str | None,
    agent: str | None,
    full: bool,
    yes: bool,
    allow: list[str] = (),  # type: ignore[assignment]
    deny: list[str] = (),  # type: ignore[assignment]
    answers: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Parse the arguments, run the tool in a session and print what the model would get."""
    from .args import ArgsError, parse_arguments

    with friendly_errors():
        project = make_project()
        servers = project.mcp.servers_for(tool_id) if project.generation.mcp_servers else None
        # a question the user runs by name is put to them (or says there is no terminal) all the same
        asker = question_asker(answers, always=tool_id in ASKING_TOOLS)
        options = session_options(yes, allow, deny, session_id, answers, asker=asker)
        warn_unasked(project, allow, deny)
        session = project.session(agent, **options)

    def prepare() -> tuple[str, dict[str, Any]]:
        with friendly_errors():
            entry = project.registry.get(tool_id)
            try:
                return entry.id, parse_arguments(tokens, entry.schema(), notice=err)
            except ArgsError as error:
                fail(f"error: {error}", EXIT_USAGE)

    from ..context import AbortSignal

    abort = AbortSignal()
    ready = (
        prepare() if servers is None else None
    )  # a tool of an MCP server is looked up once it is connected

    async def execute() -> Any:
        if servers is not None:
            await project.open(servers)  # only the servers this tool may come from
        found, arguments = ready or prepare()
        async with session:
            return await session.execute(found, arguments, abort=abort)

    try:
        result = run_in_project(project, execute, abort)
    except typer.Exit:
        raise
    except InvalidArgumentsError as error:
        _print_failure(str(error), json_)
        raise typer.Exit(EXIT_USAGE) from None
    except Exception as error:  # every failure is a tool error, as the model would see its text
        from ..errors import error_text

        _print_failure(error_text(error), json_)
        exit_if_signalled(abort)
        raise typer.Exit(EXIT_TOOL_ERROR) from None
    finally:
        if sys.stderr.isatty() and session.on_metadata is not None:
            sys.stderr.write("\r\x1b[2K")
    if asker is not None and asker.unused:
        err(f"warning: {len(asker.unused)} --answer value(s) not used: no question took them")
    output = result.output
    if full and result.metadata.get("outputPath"):
        output = Path(result.metadata["outputPath"]).read_text(encoding="utf-8", errors="replace")
    if json_:
        payload = result.as_dict()
        payload["output"] = output
        print_json(payload)
    else:
        sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
        for attachment in result.attachments:
            err(f"[attachment {attachment.mime}, {len(attachment.url)} characters of data URL]")
    exit_if_signalled(abort)


def _print_failure(message: str, as_json: bool) -> None:
    if as_json:
        print_json({"error": message})
    else:
        err(message)
