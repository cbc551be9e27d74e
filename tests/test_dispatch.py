"""What a model is offered and what happens to the calls it sends back, through a real :class:`Project`
and :class:`~opencode_cli.session.Session` (core spec §4, §6.1–§6.3, §8.4, §11.8; anchors D.5).

Offer: ``Session.resolve`` drops tools a permission denies wholly (unless the session re-allows them),
tools switched off per request, and ``invalid``; sorts by name with the collation; marks OpenAI tools
``strict: false``. Calls: ``Session.dispatch`` repairs the name (case) or reroutes to ``invalid`` with the
SDK's error text, runs the hooks and the tool, gives attachments part ids, turns every failure into the
text the model sees, and asks ``doom_loop`` after three identical calls in a row.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from opencode_cli import hookimpl
from opencode_cli.contract import Tool, tool
from opencode_cli.permission import Rule
from opencode_cli.registry import ModelRef
from opencode_cli.results import Attachment, ToolResult
from opencode_cli.session import Decision, Session, ToolCall, ToolPart

CLAUDE = ModelRef.parse("anthropic/claude-sonnet-4-5")
GPT5 = ModelRef.parse("openai/gpt-5")
GEMINI = ModelRef.parse("google/gemini-2.5-pro")
INVALID_PREFIX = "The arguments provided to the tool are invalid: "
REJECTED = "The user rejected permission to use this specific tool call."
DENIED = "The user has specified a rule which prevents you from using this specific tool call."
# a 1x1 transparent PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine; an ask nobody answers fails the test instead of hanging it."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout=20))


def dispatch(session: Session, *calls: ToolCall) -> list[ToolPart]:
    async def all_calls() -> list[ToolPart]:
        return [await session.dispatch(call) for call in calls]

    return run(all_calls())


def call(name: str, arguments: Any = None, **kwargs: Any) -> ToolCall:
    """A call as OpenAI sends it: the arguments as JSON text (a dict is encoded; a str is sent as is)."""
    text = arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)
    return ToolCall(name, text, **kwargs)


def names(session: Session, **options: Any) -> list[str]:
    return [wire.name for wire in session.resolve(**options)]


class Recorder:
    """A session prompt that records each permission request and answers with ``reply``."""

    def __init__(self, reply: str = "once") -> None:
        self.reply = reply
        self.requests: list[Any] = []

    async def __call__(self, request: Any) -> Decision:
        self.requests.append(request)
        return Decision(self.reply)  # type: ignore[arg-type]


class Extra:
    """A plugin contributing tools (and optionally hooks) for a test."""

    def __init__(self, *tools: Tool) -> None:
        self.tools = tools

    @hookimpl
    def register_tools(self, register) -> None:
        for one in self.tools:
            register(one)


@pytest.fixture
def readme(project_dir: Path) -> Path:
    path = project_dir / "README.md"
    path.write_text("# Demo\n\nA small project.\n", encoding="utf-8")
    return path


# -- what is offered (§6.1, §6.2, §8.4, §11.8) ---------------------------------------------------------


def test_prompt_permissions_keep_a_tool_the_agent_denies(make_project, project_dir, readme) -> None:
    (project_dir / "opencode.toml").write_text('[agent.build.permission]\ngrep = "deny"\n')
    project = make_project()

    plain = project.session(model=CLAUDE)
    assert "grep" not in names(plain)
    assert "read" in names(plain)

    session = project.session(model=CLAUDE, rules=[Rule("grep", "*", "allow")])
    assert "grep" in names(session, tools={"grep": True})
    [part] = dispatch(session, call("grep", {"pattern": "small"}))
    assert part.status == "completed" and "README.md" in part.output


def test_config_switch_denied_for_the_agent_is_reported_as_unavailable(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_text('[agent.build.permission]\ngrep = "deny"\n')
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("grep", {"pattern": "x"}))

    assert part.tool == "invalid"
    assert part.text.startswith(
        INVALID_PREFIX + "Model tried to call unavailable tool 'grep'. Available tools: "
    )
    assert ", grep," not in part.text


def test_edit_deny_hides_edit_write_and_apply_patch(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_text('[permission]\nedit = "deny"\n')
    offered = names(make_project().session())  # no model: all three would be offered

    assert not {"edit", "write", "apply_patch"} & set(offered)
    assert {"read", "glob", "grep"} <= set(offered)


def test_a_deny_with_a_narrower_allow_after_it_keeps_the_tool(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_text('[permission.read]\n"*" = "deny"\n"*.md" = "allow"\n')
    assert "read" in names(make_project().session(model=CLAUDE))

    (project_dir / "opencode.toml").write_text('[permission.read]\n"*.md" = "allow"\n"*" = "deny"\n')
    assert "read" not in names(make_project().session(model=CLAUDE))


def test_per_request_switch_leaves_a_tool_out(make_project, readme) -> None:
    session = make_project().session(model=CLAUDE)

    assert "read" in names(session)
    offered = names(session, tools={"read": False, "glob": True})
    assert "read" not in offered and "glob" in offered

    # a call to the switched-off tool is a call to an unavailable tool
    [part] = dispatch(session, call("read", {"filePath": str(readme)}))
    assert part.tool == "invalid" and "unavailable tool 'read'" in part.text
    assert "read," not in part.text.split("Available tools: ")[1]


def test_a_call_in_a_new_generation_is_repaired_against_its_whole_offer(make_project, readme) -> None:
    """The tools handed out last belong to their generation: a call in another one (after a reload) is
    repaired against that generation's offer as it is now, not the last per-request switches; a call
    with nothing handed out yet makes the offer once and keeps it."""
    project = make_project()
    session = project.session(model=CLAUDE)
    names(session, tools={"read": False})
    [refused] = dispatch(session, call("read", {"filePath": str(readme)}))
    assert refused.tool == "invalid", refused.text

    session.offering.made_in = None  # as if the generation the switches were handed out in was replaced
    [part] = dispatch(session, call("read", {"filePath": str(readme)}))

    assert part.tool == "read" and part.status == "completed", part.text
    assert session.offering.last is not None and "read" in session.offering.last
    assert session.offering.made_in is project.generation


@pytest.mark.parametrize("model", [None, CLAUDE, GPT5, GEMINI, ModelRef.parse("openai/gpt-4o")])
@pytest.mark.parametrize("profile", [None, "openai-strict", "kimi"])
def test_invalid_is_never_offered(make_project, model, profile) -> None:
    project = make_project()
    offered = names(project.session(model=model, profile=profile))

    assert "invalid" not in offered
    assert "read" in offered
    assert "invalid" in project.registry.entries


def test_sorted_by_name_with_the_collation(make_project) -> None:
    # localeCompare: case-insensitive first, "_" before "-" before letters; code points would give
    # ["Cherry", "Zulu", "a-z", "a_z", "apple", "banana"]
    extra = [
        tool(id=name, description=name)(lambda: "ok")
        for name in ("Zulu", "banana", "a-z", "a_z", "Cherry", "apple")
    ]
    project = make_project(plugins=[("extra", Extra(*extra))])

    offered = names(project.session(model=CLAUDE))
    mine = [name for name in offered if name in {"Zulu", "banana", "a-z", "a_z", "Cherry", "apple"}]

    assert mine == ["a_z", "a-z", "apple", "banana", "Cherry", "Zulu"]
    assert [n for n in offered if n in ("bash", "edit", "glob", "grep", "read", "write")] == sorted(
        n for n in offered if n in ("bash", "edit", "glob", "grep", "read", "write")
    )


@pytest.mark.parametrize(
    ("model", "profile", "strict"),
    [
        (GPT5, None, False),
        (ModelRef.parse("azure/gpt-4o"), None, False),
        (CLAUDE, None, None),
        (GEMINI, None, None),
        (ModelRef.parse("moonshotai/kimi-k2"), None, None),
        (None, None, None),
        (GPT5, "openai-strict", True),
    ],
)
def test_strict_false_is_sent_for_the_openai_family_only(make_project, model, profile, strict) -> None:
    from opencode_cli.wire import render

    tools = make_project().session(model=model, profile=profile).resolve()

    assert tools and all(wire.strict is strict for wire in tools)
    functions = [entry["function"] for entry in render(tools, "openai")]
    assert all(("strict" in f) is (strict is not None) for f in functions)
    if strict is False:
        assert all(f["strict"] is False for f in functions)


def test_model_decides_between_edit_write_and_apply_patch(make_project) -> None:
    project = make_project()

    gpt5 = set(names(project.session(model=GPT5)))
    claude = set(names(project.session(model=CLAUDE)))

    assert "apply_patch" in gpt5 and not {"edit", "write"} & gpt5
    assert {"edit", "write"} <= claude and "apply_patch" not in claude


# -- repair (§4.2) -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Read", "READ", "rEaD"])
def test_wrong_case_name_is_repaired_to_the_lower_case_tool(make_project, readme, name) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call(name, {"filePath": str(readme)}))

    assert (part.tool, part.requested, part.status) == ("read", name, "completed")
    assert "1: # Demo" in part.output
    assert session.repair(call(name, "{}")) == ("read", {})


def test_unknown_tool_goes_to_invalid_with_the_sdk_text(make_project) -> None:
    session = make_project().session(model=CLAUDE)
    offered = names(session)

    [part] = dispatch(session, call("nope", "{}"))

    listing = ", ".join(sorted([*offered, "invalid"]))
    assert part.text == (
        f"{INVALID_PREFIX}Model tried to call unavailable tool 'nope'. Available tools: {listing}."
    )
    assert (part.tool, part.requested, part.status, part.title) == (
        "invalid",
        "nope",
        "completed",
        "Invalid Tool",
    )
    assert part.input == {"tool": "nope", "error": part.text.removeprefix(INVALID_PREFIX)}
    assert "invalid" in listing and "read" in listing


def test_a_direct_call_to_invalid_is_run(make_project) -> None:
    session = make_project().session(model=CLAUDE)
    assert "invalid" not in names(session)

    [part] = dispatch(session, call("invalid", {"tool": "frobnicate", "error": "no such thing"}))

    assert (part.tool, part.requested, part.status, part.title) == (
        "invalid",
        "invalid",
        "completed",
        "Invalid Tool",
    )
    assert part.text == f"{INVALID_PREFIX}no such thing"
    assert part.input == {"tool": "frobnicate", "error": "no such thing"}
    assert "rerouted" not in part.metadata
    assert session.repair(call("invalid", '{"tool": "x", "error": "y"}')) == (
        "invalid",
        {"tool": "x", "error": "y"},
    )


def test_a_direct_call_to_invalid_with_bad_arguments_is_a_validation_error(make_project) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("invalid", {"tool": "x"}))

    assert (part.tool, part.status) == ("invalid", "error")
    assert part.text.startswith("The invalid tool was called with invalid arguments: ")


def test_a_direct_call_to_invalid_with_no_tools_offered_is_unavailable(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_text('[permission]\n"*" = "deny"\n')
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("invalid", {"tool": "x", "error": "y"}))

    # "*" denies invalid too: it is not in the call map, so the repaired call fails as the SDK's does
    assert part.status == "error"
    assert part.text == "Model tried to call unavailable tool 'invalid'. No tools are available."


def test_name_whose_lower_case_is_not_a_tool_is_not_repaired(make_project) -> None:
    session = make_project().session(model=CLAUDE)

    tool_id, args = session.repair(call("Find", "{}"))

    assert tool_id == "invalid"
    assert args["tool"] == "Find"
    assert args["error"].startswith("Model tried to call unavailable tool 'Find'. Available tools: ")


def test_with_no_tools_offered_the_text_says_so(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_text('[permission]\n"*" = "deny"\n')
    session = make_project().session(model=CLAUDE)

    assert names(session) == []
    [part] = dispatch(session, call("read", "{}"))
    assert part.text == "Model tried to call unavailable tool 'invalid'. No tools are available."


@pytest.mark.parametrize("arguments", ["", "   ", None])
def test_empty_arguments_are_an_empty_object(make_project, arguments) -> None:
    seen: list[dict[str, Any]] = []

    @tool(id="ping", description="Answer pong.")
    def ping() -> str:
        seen.append({})
        return "pong"

    session = make_project(plugins=[("extra", Extra(ping))]).session(model=CLAUDE)

    [part] = dispatch(session, ToolCall("ping", arguments))

    assert (part.tool, part.status, part.output, part.input) == ("ping", "completed", "pong", {})
    assert seen == [{}]


def test_malformed_json_arguments_go_to_invalid(make_project) -> None:
    session = make_project().session(model=CLAUDE)
    raw = '{"filePath": '

    [part] = dispatch(session, call("read", raw))

    assert part.tool == "invalid" and part.status == "completed"
    head, _, message = part.text.partition("\nError message: ")
    assert head == f"{INVALID_PREFIX}Invalid input for tool read: JSON parsing failed: Text: {raw}."
    assert message.strip(), "the parser's message is given"
    assert part.input["tool"] == "read"


def test_control_tokens_are_stripped_from_the_echoed_error(make_project) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("<|tool_call_begin|>functions.read:0<|tool_call_end|>", "{}"))

    assert part.tool == "invalid"
    assert part.text.startswith(INVALID_PREFIX)
    assert "<|" not in part.text and "|>" not in part.text
    assert "unavailable tool 'functions.read:0'" in part.text


def test_arguments_already_parsed_are_used_as_they_are(make_project, readme) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, ToolCall("read", {"filePath": str(readme), "limit": 1}))

    assert part.status == "completed" and "1: # Demo" in part.output and "A small" not in part.output


# -- hooks (§6.1 steps 1 and 4) ------------------------------------------------------------------------


class BeforeHook:
    def __init__(self, mode: str, target: str = "") -> None:
        self.mode, self.target = mode, target
        self.seen: list[dict[str, Any]] = []

    @hookimpl
    def tool_execute_before(self, tool, session_id, call_id, args) -> None:
        self.seen.append({"tool": tool, "session_id": session_id, "call_id": call_id, "args": dict(args)})
        if self.mode == "mutate":
            args["filePath"] = self.target
        elif self.mode == "rebind":
            args = {"filePath": self.target}  # rebinding the name must have no effect
        elif self.mode == "raise":
            raise PermissionError("blocked by the audit policy: no reading today")


def test_before_hook_in_place_change_takes_effect(make_project, readme, project_dir) -> None:
    other = project_dir / "other.txt"
    other.write_text("the other file\n")
    hook = BeforeHook("mutate", str(other))
    session = make_project(plugins=[("audit", hook)]).session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"filePath": str(readme)}, id="call_1"))

    assert part.status == "completed" and "the other file" in part.output and "Demo" not in part.output
    assert hook.seen == [
        {"tool": "read", "session_id": session.id, "call_id": "call_1", "args": {"filePath": str(readme)}}
    ]


def test_before_hook_rebinding_the_arguments_does_nothing(make_project, readme, project_dir) -> None:
    other = project_dir / "other.txt"
    other.write_text("the other file\n")
    session = make_project(plugins=[("audit", BeforeHook("rebind", str(other)))]).session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"filePath": str(readme)}))

    assert part.status == "completed" and "Demo" in part.output and "other file" not in part.output


def test_before_hook_raising_blocks_the_call_with_its_message(make_project, project_dir) -> None:
    target = project_dir / "never.txt"
    session = make_project(plugins=[("audit", BeforeHook("raise"))]).session(model=CLAUDE)

    [part] = dispatch(session, call("write", {"filePath": str(target), "content": "x"}))

    assert part.status == "error"
    assert part.text == "blocked by the audit policy: no reading today"
    assert not target.exists()


class AfterHook:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, dict[str, Any]]] = []

    @hookimpl
    def tool_execute_after(self, tool, session_id, call_id, args, result) -> None:
        self.seen.append((tool, call_id, dict(args)))
        result.title = "audited " + result.title
        result.output = result.output + "\n[checked by audit]"
        result.metadata = {**result.metadata, "audited": True}


def test_after_hook_edits_title_output_and_metadata(make_project, readme) -> None:
    hook = AfterHook()
    session = make_project(plugins=[("audit", hook)]).session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"filePath": str(readme)}, id="call_9"))

    assert part.status == "completed"
    assert part.title.startswith("audited ")
    assert part.output.endswith("\n[checked by audit]") and "1: # Demo" in part.output
    assert part.metadata["audited"] is True and part.metadata["truncated"] is False
    assert hook.seen == [("read", "call_9", {"filePath": str(readme)})]


def test_after_hook_is_not_called_for_a_failed_call(make_project, project_dir) -> None:
    hook = AfterHook()
    session = make_project(plugins=[("audit", hook)]).session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"filePath": str(project_dir / "missing.txt")}))

    assert part.status == "error" and hook.seen == []
    assert "[checked by audit]" not in part.text


# -- attachments (§6.1 step 3) -------------------------------------------------------------------------


def test_attachments_get_part_ids(make_project, project_dir) -> None:
    (project_dir / "dot.png").write_bytes(PNG)

    @tool(id="snap", description="Two pictures.")
    def snap() -> ToolResult:
        url = "data:image/png;base64," + base64.b64encode(PNG).decode()
        return ToolResult(
            "two pictures", attachments=[Attachment("image/png", url), Attachment("image/png", url)]
        )

    session = make_project(plugins=[("extra", Extra(snap))]).session(model=CLAUDE)

    read_part, snap_part = dispatch(
        session, call("read", {"filePath": str(project_dir / "dot.png")}), call("snap", "{}")
    )

    assert read_part.status == "completed" and len(read_part.attachments) == 1
    ids = [a.id for a in read_part.attachments + snap_part.attachments]
    assert all(isinstance(i, str) and i.startswith("prt_") for i in ids)
    assert len(set(ids)) == 3
    assert ids == sorted(ids), "part ids ascend"
    assert read_part.as_dict()["attachments"][0]["id"] == ids[0]


# -- every failure is text (§6.3) ----------------------------------------------------------------------


def test_invalid_arguments_become_the_template(make_project) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"offset": 2}))

    assert part.status == "error" and part.tool == "read"
    assert part.text.startswith("The read tool was called with invalid arguments: ")
    assert "filePath" in part.text
    assert part.text.endswith("Please rewrite the input so it satisfies the expected schema.")


def test_a_tool_raising_becomes_an_error_part(make_project) -> None:
    @tool(id="boom", description="Always fails.")
    def boom() -> str:
        raise RuntimeError("tool exploded")

    session = make_project(plugins=[("extra", Extra(boom))]).session(model=CLAUDE)

    [part] = dispatch(session, call("boom", "{}"))

    assert part.status == "error" and "tool exploded" in part.text
    assert part.output == "" and part.as_dict()["output"] is None and part.as_dict()["error"] == part.text


@pytest.mark.parametrize("blocking", [True, False])
def test_a_sync_tool_letting_out_stop_iteration_fails_instead_of_hanging(
    make_project, blocking: bool
) -> None:
    """A future cannot carry a ``StopIteration``: from a worker thread the call would never end. Both ways
    of running a sync tool turn it into an error part, as a coroutine does (PEP 479)."""

    @tool(id="exhausted", description="Takes the next of nothing.", blocking=blocking)
    def exhausted() -> str:
        return next(iter([]))

    session = make_project(plugins=[("extra", Extra(exhausted))]).session(model=CLAUDE)

    async def bounded() -> list[ToolPart]:  # a hang fails the test instead of stalling the run
        return [await asyncio.wait_for(session.dispatch(call("exhausted", "{}")), 60)]

    [part] = run(bounded())

    assert part.status == "error" and "StopIteration" in part.text
    assert part.text.startswith("RuntimeError: ")


def test_a_missing_file_is_the_read_error_text(make_project, project_dir) -> None:
    session = make_project().session(model=CLAUDE)

    [part] = dispatch(session, call("read", {"filePath": str(project_dir / "nowhere.txt")}))

    assert part.status == "error" and "nowhere.txt" in part.text


def test_a_denied_permission_becomes_the_denied_text(make_project, project_dir) -> None:
    secret = project_dir / "secret.txt"
    secret.write_text("s3cret\n")
    session = make_project().session(model=CLAUDE, rules=[Rule("read", "*secret*", "deny")])

    [part] = dispatch(session, call("read", {"filePath": str(secret)}))

    assert part.status == "error" and part.text.startswith(DENIED)
    assert "s3cret" not in part.text


def test_a_rejected_ask_becomes_the_rejected_text(make_project, project_dir) -> None:
    secret = project_dir / ".env"
    secret.write_text("TOKEN=1\n")
    prompt = Recorder("reject")
    session = make_project().session(model=CLAUDE, prompt=prompt)

    [part] = dispatch(session, call("read", {"filePath": str(secret)}))

    assert part.status == "error" and part.text == REJECTED
    assert [r.permission for r in prompt.requests] == ["read"]


# -- the doom loop -------------------------------------------------------------------------------------


def test_three_identical_calls_in_a_row_ask_doom_loop(make_project, readme) -> None:
    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)
    args = {"filePath": str(readme)}

    parts = dispatch(session, *(call("read", args) for _ in range(3)))

    assert [p.status for p in parts] == ["completed"] * 3
    [request] = prompt.requests
    assert (request.permission, request.patterns, request.always) == ("doom_loop", ["read"], ["read"])
    assert request.metadata == {"tool": "read", "input": args}
    assert request.session_id == session.id


def test_a_rejected_doom_loop_ask_stops_the_third_call(make_project, readme) -> None:
    prompt = Recorder("reject")
    session = make_project().session(model=CLAUDE, prompt=prompt)

    parts = dispatch(session, *(call("read", {"filePath": str(readme)}) for _ in range(4)))

    assert [p.status for p in parts] == ["completed", "completed", "error", "error"]
    assert parts[2].text == REJECTED
    assert [r.permission for r in prompt.requests] == ["doom_loop", "doom_loop"]


def test_a_doom_loop_refused_for_want_of_a_prompt_says_so(make_project, readme) -> None:
    """A session opened without a prompt has nobody to ask: the third identical call is refused, and the
    model is told that repeating the call is why (issue 36, finding 10)."""
    from opencode_cli.session import DOOM_LOOP_REFUSED

    session = make_project().session(model=CLAUDE)

    parts = dispatch(session, *(call("read", {"filePath": str(readme)}) for _ in range(3)))

    assert [p.status for p in parts] == ["completed", "completed", "error"]
    assert parts[2].text == DOOM_LOOP_REFUSED.format(tool="read")
    assert "third identical read call in a row" in parts[2].text and "nobody to ask" in parts[2].text


def test_different_arguments_or_tools_reset_the_count(make_project, readme, project_dir) -> None:
    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)
    same = {"filePath": str(readme)}
    other = {"filePath": str(readme), "limit": 1}

    dispatch(
        session,
        call("read", same),
        call("read", same),
        call("read", other),
        call("read", same),
        call("read", same),
        call("glob", {"pattern": "*.md"}),
        call("read", same),
        call("read", same),
    )
    assert prompt.requests == []

    # key order does not make calls different
    dispatch(session, call("read", other), call("read", {"limit": 1, "filePath": str(readme)}))
    assert prompt.requests == []
    dispatch(session, call("read", other))
    assert [r.permission for r in prompt.requests] == ["doom_loop"]


def test_the_doom_loop_window_is_the_step(make_project, readme) -> None:
    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)
    args = {"filePath": str(readme)}

    session.step()
    dispatch(session, call("read", args), call("read", args))
    session.step()  # a new model response: the count starts over
    dispatch(session, call("read", args), call("read", args))
    assert prompt.requests == []

    dispatch(session, call("read", args))  # the third in this step
    assert [r.permission for r in prompt.requests] == ["doom_loop"]


def test_a_text_part_between_calls_resets_the_window(make_project, readme) -> None:
    from opencode_cli.transcript import TextPart

    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)
    args = {"filePath": str(readme)}

    dispatch(session, call("read", args), call("read", args))
    session.transcript.add_part(session.assistant(), TextPart("Reading it once more."))
    dispatch(session, call("read", args), call("read", args))

    assert prompt.requests == []


def test_three_concurrent_identical_calls_in_one_step_ask(make_project, readme) -> None:
    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)
    args = {"filePath": str(readme)}

    async def together() -> list[ToolPart]:
        session.step()
        return list(await asyncio.gather(*(session.dispatch(call("read", args)) for _ in range(3))))

    parts = run(together())

    assert [p.status for p in parts] == ["completed"] * 3
    assert [r.permission for r in prompt.requests] == ["doom_loop"]


def test_three_different_unknown_tools_are_not_identical(make_project) -> None:
    prompt = Recorder("once")
    session = make_project().session(model=CLAUDE, prompt=prompt)

    parts = dispatch(session, call("nope1", {}), call("nope2", {}), call("nope3", {}))

    assert [p.tool for p in parts] == ["invalid"] * 3 and prompt.requests == []
    parts = dispatch(session, call("nope3", {}), call("nope3", {}))  # the same unknown name: identical
    assert [r.permission for r in prompt.requests] == ["doom_loop"]


def test_doom_loop_allowed_by_config_does_not_ask(make_project, project_dir, readme) -> None:
    (project_dir / "opencode.toml").write_text('[permission]\ndoom_loop = "allow"\n')
    prompt = Recorder("reject")
    session = make_project().session(model=CLAUDE, prompt=prompt)

    parts = dispatch(session, *(call("read", {"filePath": str(readme)}) for _ in range(3)))

    assert [p.status for p in parts] == ["completed"] * 3 and prompt.requests == []


# -- openai-strict ---------------------------------------------------------------------------------------


def strict_shaped(node: Any) -> bool:
    if isinstance(node, list):
        return all(strict_shaped(n) for n in node)
    if not isinstance(node, dict):
        return True
    if node.get("type") == "object" or isinstance(node.get("properties"), dict):
        if node.get("additionalProperties") is not False:
            return False
        if sorted(node.get("required") or []) != sorted(node.get("properties") or {}):
            return False
    return all(strict_shaped(v) for k, v in node.items() if k != "properties") and all(
        strict_shaped(v) for v in (node.get("properties") or {}).values()
    )


def test_openai_strict_schema_is_strict_and_valid(make_project) -> None:
    import jsonschema

    tools = make_project().session(model=GPT5, profile="openai-strict").resolve()
    read = next(t for t in tools if t.name == "read")

    assert all(t.strict is True and strict_shaped(t.parameters) for t in tools)
    for wire in tools:
        jsonschema.Draft202012Validator.check_schema(wire.parameters)
    assert read.parameters["required"] == ["filePath", "offset", "limit"]
    assert {"type": "null"} in read.parameters["properties"]["offset"]["anyOf"]


def test_openai_strict_null_for_an_optional_field_means_absent(make_project, project_dir) -> None:
    notes = project_dir / "notes.txt"
    notes.write_text("".join(f"line {n}\n" for n in range(1, 6)))
    args = {"filePath": str(notes), "offset": None, "limit": None}

    strict = make_project().session(model=GPT5, profile="openai-strict")
    strict.resolve()
    [part] = dispatch(strict, call("read", args))
    assert part.status == "completed", part.text
    assert "1: line 1" in part.output and "5: line 5" in part.output
    assert part.input == {"filePath": str(notes)}


class Depth(BaseModel):
    depth: int = 2
    label: str | None = None


class Walk(BaseModel):
    start: str | None
    count: int = 3
    options: Depth | None = None


def test_openai_strict_keeps_required_nulls_and_maps_nested_optionals(make_project) -> None:
    seen: list[Walk] = []

    def walk(params: Walk) -> str:
        seen.append(params)
        return "walked"

    walker = Tool("walk", "Walk.", parameters=Walk, execute=walk)
    session = make_project(plugins=[("extra", Extra(walker))]).session(model=GPT5, profile="openai-strict")
    [wire] = [t for t in session.resolve() if t.name == "walk"]
    assert strict_shaped(wire.parameters)

    [part] = dispatch(
        session, call("walk", {"start": None, "count": None, "options": {"depth": None, "label": None}})
    )

    assert part.status == "completed", part.text
    assert seen == [Walk(start=None, count=3, options=Depth(depth=2, label=None))]
    assert part.input == {"start": None, "options": {}}

    # without the profile a null for ``count`` is invalid: the mapping is the profile's doing
    plain = make_project(plugins=[("extra", Extra(walker))]).session(model=GPT5)
    [part] = dispatch(plain, call("walk", {"start": None, "count": None}))
    assert part.status == "error" and part.text.startswith("The walk tool was called with invalid arguments")


def test_openai_strict_maps_nulls_inside_lists_of_objects(make_project) -> None:
    class Many(BaseModel):
        steps: list[Depth]

    seen: list[Many] = []
    many = Tool("many", "Many.", parameters=Many, execute=lambda params: seen.append(params) or "ok")
    session = make_project(plugins=[("extra", Extra(many))]).session(model=GPT5, profile="openai-strict")
    session.resolve()

    [part] = dispatch(
        session, call("many", {"steps": [{"depth": None, "label": "a"}, {"depth": 5, "label": None}]})
    )

    assert part.status == "completed", part.text
    assert seen == [Many(steps=[Depth(depth=2, label="a"), Depth(depth=5)])]


def test_openai_strict_falls_back_to_strict_false_for_a_free_form_object(make_project) -> None:
    @tool(id="tag", description="Tag things.")
    def tag(name: str, labels: dict[str, int]) -> str:
        return ", ".join(f"{name}.{k}={v}" for k, v in sorted(labels.items()))

    session = make_project(plugins=[("extra", Extra(tag))]).session(model=GPT5, profile="openai-strict")
    tools = {t.name: t for t in session.resolve()}

    # closing ``labels`` would leave the model only ``{}``: the tool goes out non-strict instead
    assert tools["tag"].strict is False
    labels = tools["tag"].parameters["properties"]["labels"]
    assert labels["additionalProperties"] == {"type": "integer"}
    assert tools["read"].strict is True and strict_shaped(tools["read"].parameters)

    [part] = dispatch(session, call("tag", {"name": "x", "labels": {"b": 2, "a": 1}}))
    assert part.status == "completed" and part.output == "x.a=1, x.b=2"


# -- the typed outcome -----------------------------------------------------------------------------------


def test_every_part_says_how_the_call_ended(make_project, project_dir, readme) -> None:
    from opencode_cli.context import AbortSignal
    from opencode_cli.session import Outcome

    @tool
    def boom() -> str:
        """Fail like a bug."""
        raise RuntimeError("kaput")

    secret = project_dir / ".env"
    secret.write_text("TOKEN=1\n")
    aborted = AbortSignal()
    aborted.abort()
    session = make_project(plugins=[("extra", Extra(boom))]).session(
        model=CLAUDE, prompt=Recorder("reject"), rules=[Rule("bash", "rm *", "deny")]
    )

    async def calls() -> list[ToolPart]:
        return [
            await session.dispatch(call("read", {"filePath": str(readme)})),
            await session.dispatch(call("read", {"offset": 1})),
            await session.dispatch(call("nope", {})),
            await session.dispatch(call("read", "{not json")),
            await session.dispatch(call("read", {"filePath": str(secret)})),
            await session.dispatch(call("bash", {"command": "rm -rf x", "description": "Remove"})),
            await session.dispatch(call("boom", {})),
            await session.dispatch(
                call("bash", {"command": "sleep 30", "description": "Wait"}), abort=aborted
            ),
        ]

    outcomes = [part.outcome for part in run(calls())]

    assert outcomes == [
        Outcome.COMPLETED,
        Outcome.INVALID_ARGUMENTS,
        Outcome.INVALID_ARGUMENTS,  # rerouted to invalid: the call did not run as written
        Outcome.INVALID_ARGUMENTS,
        Outcome.REJECTED,
        Outcome.DENIED,
        Outcome.FAILED,
        Outcome.ABORTED,
    ]
    assert all(isinstance(outcome, str) for outcome in outcomes)  # a StrEnum: "denied" == Outcome.DENIED


# -- a call map without invalid -----------------------------------------------------------------------------


def test_an_agent_denying_invalid_wholly_gets_the_sdk_error_naming_invalid(make_project, readme) -> None:
    from opencode_cli.session import Outcome

    session = make_project().session("explore", model=CLAUDE)
    offered = names(session)
    assert "edit" not in offered
    listing = f"Available tools: {', '.join(offered)}."

    parts = dispatch(
        session,
        call("edit", {"filePath": str(readme), "oldString": "a", "newString": "b"}),
        call("read", "{not json"),
        call("invalid", {"tool": "x", "error": "y"}),
    )

    for part in parts:
        assert part.status == "error" and part.outcome is Outcome.INVALID_ARGUMENTS
        assert part.text == f"Model tried to call unavailable tool 'invalid'. {listing}"
    assert "invalid" not in listing
    assert parts[0].tool == "edit" and parts[0].input["oldString"] == "a"
    recorded = [p for p in session.assistant().parts if getattr(p, "status", "") == "error"]
    assert [p.tool for p in recorded] == ["edit", "read", "invalid"]


def test_an_agent_with_invalid_still_reroutes(make_project) -> None:
    session = make_project().session("build", model=CLAUDE)

    [part] = dispatch(session, call("nope", {}))

    assert part.tool == "invalid" and part.status == "completed"
    assert "Available tools: " in part.text and ", invalid," in part.text


def test_the_offer_is_made_again_when_what_it_depends_on_changes(make_project, project_dir) -> None:
    project = make_project()
    session = project.session(model=CLAUDE)
    first = names(session)
    assert names(session) == first and "edit" in first  # the same generation, agent and rules
    other = project.session(model=CLAUDE)  # a new session like it (a served request) reuses the offer
    mine, theirs = session.resolve(), other.resolve()
    assert mine == theirs and mine[0] is not theirs[0]  # made once, and each host gets its own copy
    mine[0].parameters["properties"].clear()  # what one host changes, the next one never sees
    assert other.resolve()[0].parameters["properties"]

    session.rules.append(Rule("edit", "*", "deny"))
    assert "edit" not in names(session)
    session.use_agent("plan")
    assert names(session) != first
    session.use_agent("build")
    tool_file = project_dir / ".opencode" / "tool" / "hello.py"
    tool_file.parent.mkdir(parents=True)
    tool_file.write_text(
        "from opencode_cli import tool\n\n\n@tool\ndef default() -> str:\n"
        '    """Say hello."""\n    return "hi"\n'
    )
    project.generations.install(project.generations.prepare(project.sources.keys([tool_file])))
    assert "hello" in names(session)  # a new generation: its tools
