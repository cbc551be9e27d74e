"""The ask/reply flow of the permission service (core spec §8.5, every ask/reply case of §11.9), and the
same flow driven through a :class:`~opencode_cli.session.Session` with its prompt and the sqlite store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from opencode_cli.errors import CorrectedError, DeniedError, NotFoundError, RejectedError
from opencode_cli.permission import PermissionService, Request, Rule
from opencode_cli.project import Project
from opencode_cli.session import Decision, ToolCall

REJECTED = "The user rejected permission to use this specific tool call."
CORRECTED = "The user rejected permission to use this specific tool call with the following feedback: {}"
DENIED = (
    "The user has specified a rule which prevents you from using this specific tool call. "
    "Here are some of the relevant rules {}"
)


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a test coroutine; one that waits for an answer that never comes fails instead of hanging."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout=60))


def request(
    session: str = "ses_1",
    permission: str = "bash",
    patterns: list[str] | None = None,
    *,
    always: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    id: str = "",
) -> Request:
    return Request(
        id=id,
        session_id=session,
        permission=permission,
        patterns=["ls"] if patterns is None else patterns,
        always=[] if always is None else always,
        metadata={} if metadata is None else metadata,
        tool={"messageID": "msg_1", "callID": "call_1"},
    )


class Events(list[tuple[str, dict[str, Any]]]):
    """Everything a service publishes, in order."""

    def named(self, name: str) -> list[dict[str, Any]]:
        return [data for event, data in self if event == name]


def listen(service: PermissionService) -> Events:
    events = Events()
    service.subscribe(lambda event, data: events.append((event, json.loads(json.dumps(data)))))
    return events


async def settle() -> None:
    """Let the tasks started so far run up to their first real wait."""
    for _ in range(3):
        await asyncio.sleep(0)


def start(service: PermissionService, req: Request, ruleset: list[Rule] | None = None) -> asyncio.Task[None]:
    return asyncio.create_task(service.ask(req, ruleset or []))


# -- immediate answers ---------------------------------------------------------------------------------


def test_allow_rule_returns_immediately() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> None:
        assert await service.ask(request(), [Rule("bash", "*", "allow")]) is None
        assert service.pending() == []

    run(main())
    assert events == []


def test_deny_raises_with_exact_text_and_the_rules_of_that_permission() -> None:
    service = PermissionService()
    events = listen(service)
    ruleset = [
        Rule("*", "*", "allow"),
        Rule("edit", "*", "deny"),
        Rule("bash", "git *", "allow"),
        Rule("bash", "rm *", "deny", source="config"),
    ]

    async def main() -> None:
        with pytest.raises(DeniedError) as caught:
            await service.ask(request(patterns=["rm -rf /"]), ruleset)
        return caught.value

    error = run(main())
    expected_rules = [
        {"permission": "*", "pattern": "*", "action": "allow"},
        {"permission": "bash", "pattern": "git *", "action": "allow"},
        {"permission": "bash", "pattern": "rm *", "action": "deny"},
    ]
    assert error.rules == expected_rules
    assert str(error) == DENIED.format(json.dumps(expected_rules, separators=(",", ":")))
    assert str(error) == (
        "The user has specified a rule which prevents you from using this specific tool call. Here are some"
        ' of the relevant rules [{"permission":"*","pattern":"*","action":"allow"},{"permission":"bash",'
        '"pattern":"git *","action":"allow"},{"permission":"bash","pattern":"rm *","action":"deny"}]'
    )
    assert service.pending() == [] and events == []


def test_approvals_are_judged_after_the_ruleset() -> None:
    """``approved`` is searched after the ask's ruleset, so a matching approval wins (last match wins)."""
    service = PermissionService()
    service.approved.append(Rule("bash", "ls", "allow"))

    async def main() -> None:
        await asyncio.wait_for(service.ask(request(patterns=["ls"]), [Rule("bash", "*", "ask")]), timeout=30)
        await asyncio.wait_for(service.ask(request(patterns=["ls"]), [Rule("*", "*", "deny")]), timeout=30)
        with pytest.raises(DeniedError):
            await service.ask(request(patterns=["ls -la"]), [Rule("*", "*", "deny")])

    run(main())
    assert service.pending() == []


# -- pending requests ----------------------------------------------------------------------------------


def test_ask_stays_pending_with_every_field_and_publishes_asked() -> None:
    service = PermissionService()
    events = listen(service)
    req = request(
        "ses_a",
        "external_directory",
        ["/elsewhere/*"],
        always=["/elsewhere/*"],
        metadata={"filepath": "/elsewhere/x", "parentDir": "/elsewhere"},
    )

    async def main() -> None:
        task = start(service, req)
        await settle()
        assert not task.done()
        pending = service.pending()
        assert len(pending) == 1
        (waiting,) = pending
        assert waiting.id.startswith("per_") and len(waiting.id) > len("per_")
        assert waiting.session_id == "ses_a"
        assert waiting.permission == "external_directory"
        assert waiting.patterns == ["/elsewhere/*"]
        assert waiting.always == ["/elsewhere/*"]
        assert waiting.metadata == {"filepath": "/elsewhere/x", "parentDir": "/elsewhere"}
        assert waiting.tool == {"messageID": "msg_1", "callID": "call_1"}
        assert events.named("permission.asked") == [
            {
                "id": waiting.id,
                "sessionID": "ses_a",
                "permission": "external_directory",
                "patterns": ["/elsewhere/*"],
                "metadata": {"filepath": "/elsewhere/x", "parentDir": "/elsewhere"},
                "always": ["/elsewhere/*"],
                "tool": {"messageID": "msg_1", "callID": "call_1"},
            }
        ]
        service.reply(waiting.id, "once")
        await task

    run(main())


def test_a_given_id_is_kept() -> None:
    service = PermissionService()

    async def main() -> None:
        task = start(service, request(id="per_given"))
        await settle()
        assert [r.id for r in service.pending()] == ["per_given"]
        service.reply("per_given", "once")
        await task

    run(main())


def test_no_matching_rule_means_ask() -> None:
    service = PermissionService()

    async def main() -> None:
        task = start(
            service, request(permission="websearch", patterns=["cats"]), [Rule("bash", "*", "allow")]
        )
        await settle()
        assert len(service.pending()) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert service.pending() == []

    run(main())


def test_reply_once_resolves_and_publishes_replied() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> None:
        task = start(service, request("ses_r"))
        await settle()
        (waiting,) = service.pending()
        service.reply(waiting.id, "once")
        assert await task is None
        assert service.pending() == []
        assert events.named("permission.replied") == [
            {"sessionID": "ses_r", "requestID": waiting.id, "reply": "once"}
        ]
        # "once" is not remembered: the same request asks again
        again = start(service, request("ses_r"))
        await settle()
        assert len(service.pending()) == 1
        service.reply(service.pending()[0].id, "once")
        await again

    run(main())
    assert service.approved == []


def test_reject_raises_rejected_with_exact_text() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> RejectedError:
        task = start(service, request())
        await settle()
        (waiting,) = service.pending()
        service.reply(waiting.id, "reject")
        with pytest.raises(RejectedError) as caught:
            await task
        assert events.named("permission.replied")[-1]["reply"] == "reject"
        return caught.value

    error = run(main())
    assert type(error) is RejectedError
    assert str(error) == REJECTED == "The user rejected permission to use this specific tool call."
    assert service.pending() == []


def test_reject_with_message_raises_corrected_with_the_feedback_template() -> None:
    service = PermissionService()

    async def main() -> CorrectedError:
        task = start(service, request())
        await settle()
        service.reply(service.pending()[0].id, "reject", "use git log instead")
        with pytest.raises(CorrectedError) as caught:
            await task
        return caught.value

    error = run(main())
    assert str(error) == CORRECTED.format("use git log instead")
    assert str(error) == (
        "The user rejected permission to use this specific tool call with the following feedback: "
        "use git log instead"
    )
    assert error.feedback == "use git log instead"


def test_reject_with_empty_message_is_a_plain_rejection() -> None:
    service = PermissionService()

    async def main() -> None:
        task = start(service, request())
        await settle()
        service.reply(service.pending()[0].id, "reject", "")
        with pytest.raises(RejectedError) as caught:
            await task
        assert str(caught.value) == REJECTED

    run(main())


def test_reply_always_persists_approval_for_other_sessions() -> None:
    service = PermissionService()
    kept: list[tuple[str, list[Rule]]] = []
    service = PermissionService(on_always=lambda session, rules: kept.append((session, rules)))

    async def main() -> None:
        task = start(service, request("ses_1", "bash", ["ls -la"], always=["ls *"]))
        await settle()
        service.reply(service.pending()[0].id, "always")
        await task
        # another session, empty ruleset: resolves at once, nothing pending, nothing published
        events = listen(service)
        await asyncio.wait_for(service.ask(request("ses_2", "bash", ["ls"]), []), timeout=30)
        await asyncio.wait_for(service.ask(request("ses_3", "bash", ["ls /tmp"]), []), timeout=30)
        assert service.pending() == [] and events == []
        # only what "always" listed was approved
        other = start(service, request("ses_2", "bash", ["cat x"]))
        await settle()
        assert len(service.pending()) == 1
        other.cancel()

    run(main())
    assert service.approved == [Rule("bash", "ls *", "allow")]
    assert kept == [("ses_1", [Rule("bash", "ls *", "allow")])]


def test_always_with_a_wide_pattern_approves_later_asks_the_ruleset_would_ask() -> None:
    service = PermissionService()

    async def main() -> None:
        task = start(service, request(patterns=["ls"], always=["*"]))
        await settle()
        service.reply(service.pending()[0].id, "always")
        await task
        await asyncio.wait_for(
            service.ask(request("ses_x", patterns=["rm -rf build"]), [Rule("bash", "rm *", "ask")]),
            timeout=30,
        )

    run(main())
    assert service.pending() == []


def test_reject_cancels_pending_requests_of_the_same_session_only() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> None:
        first = start(service, request("ses_1", patterns=["a"]))
        second = start(service, request("ses_1", patterns=["b"]))
        third = start(service, request("ses_1", "edit", patterns=["c"]))
        other = start(service, request("ses_2", patterns=["a"]))
        await settle()
        ids = {r.patterns[0] + r.session_id: r.id for r in service.pending()}
        assert len(ids) == 4
        service.reply(ids["ases_1"], "reject", "stop")
        with pytest.raises(CorrectedError):
            await first
        for task in (second, third):
            with pytest.raises(RejectedError):
                await task
        assert str(first.exception()) == CORRECTED.format("stop")
        assert type(second.exception()) is RejectedError and str(second.exception()) == REJECTED
        assert type(third.exception()) is RejectedError
        assert not other.done()
        assert [(r.session_id, r.patterns) for r in service.pending()] == [("ses_2", ["a"])]
        replied = events.named("permission.replied")
        assert sorted((e["requestID"], e["reply"]) for e in replied) == sorted(
            (ids[key], "reject") for key in ("ases_1", "bses_1", "cses_1")
        )
        assert all(e["sessionID"] == "ses_1" for e in replied)
        service.reply(ids["ases_2"], "once")
        await other

    run(main())


def test_a_rejection_leaves_an_approval_given_at_the_same_time_alone(make_project, project_dir: Path) -> None:
    """A host that answers its asks in one go (approve one, reject another) keeps the approval: the
    rejection ends only the asks still waiting for an answer (issue 36, finding 10)."""
    for name in ("a.env", "b.env", "c.env"):
        (project_dir / name).write_text("KEY=1\n")
    project = make_project()

    async def main() -> list[Any]:
        answers: dict[str, asyncio.Future[Decision]] = {}
        asked = asyncio.Event()

        async def prompt(request: Any) -> Decision:
            answers[request.patterns[0]] = asyncio.get_running_loop().create_future()
            if len(answers) == 3:
                asked.set()
            return await answers[request.patterns[0]]

        async with project, project.session(prompt=prompt) as session:
            calls = [
                session.dispatch(ToolCall("read", json.dumps({"filePath": name}), id=f"call_{name[0]}"))
                for name in ("a.env", "b.env", "c.env")
            ]
            gathered = asyncio.gather(*calls)
            await asyncio.wait_for(asked.wait(), 30)
            answers["b.env"].set_result(Decision("reject"))  # the rejection first, in the same tick
            answers["a.env"].set_result(Decision("once"))
            return await gathered  # c.env, unanswered, ends with the rejection

    a, b, c = run(main())
    assert a.status == "completed" and "KEY=1" in a.text
    assert (b.status, c.status) == ("error", "error")
    assert b.text == c.text == REJECTED


def test_always_resolves_matching_pending_requests_of_the_same_session() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> None:
        first = start(service, request("ses_1", "bash", ["ls -la"], always=["ls *"]))
        same = start(service, request("ses_1", "bash", ["ls src"]))
        partial = start(service, request("ses_1", "bash", ["ls", "cat x"]))
        unrelated = start(service, request("ses_1", "edit", ["ls x"]))
        other_session = start(service, request("ses_2", "bash", ["ls src"]))
        await settle()
        by_key = {(r.session_id, r.permission, tuple(r.patterns)): r.id for r in service.pending()}
        service.reply(by_key[("ses_1", "bash", ("ls -la",))], "always")
        await first
        await same
        await settle()
        assert not partial.done() and not unrelated.done() and not other_session.done()
        assert sorted((r.session_id, r.permission, tuple(r.patterns)) for r in service.pending()) == [
            ("ses_1", "bash", ("ls", "cat x")),
            ("ses_1", "edit", ("ls x",)),
            ("ses_2", "bash", ("ls src",)),
        ]
        replied = events.named("permission.replied")
        assert replied == [
            {"sessionID": "ses_1", "requestID": by_key[("ses_1", "bash", ("ls -la",))], "reply": "always"},
            {"sessionID": "ses_1", "requestID": by_key[("ses_1", "bash", ("ls src",))], "reply": "always"},
        ]
        service.dispose()
        for task in (partial, unrelated, other_session):
            with pytest.raises(RejectedError):
                await task

    run(main())


def test_always_leaves_other_sessions_pending_even_when_they_now_match() -> None:
    service = PermissionService()

    async def main() -> None:
        mine = start(service, request("ses_1", "bash", ["ls"], always=["*"]))
        theirs = start(service, request("ses_2", "bash", ["ls"]))
        await settle()
        mine_id = next(r.id for r in service.pending() if r.session_id == "ses_1")
        service.reply(mine_id, "always")
        await mine
        await settle()
        assert not theirs.done()
        assert [r.session_id for r in service.pending()] == ["ses_2"]
        # a fresh ask from ses_2 with the same pattern is approved at once now
        await asyncio.wait_for(service.ask(request("ses_2", "bash", ["ls"]), []), timeout=30)
        theirs.cancel()

    run(main())


def test_replied_event_shape_for_once() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> str:
        task = start(service, request("ses_9", id="per_fixed"))
        await settle()
        service.reply("per_fixed", "once")
        await task
        return "per_fixed"

    run(main())
    assert events.named("permission.replied") == [
        {"sessionID": "ses_9", "requestID": "per_fixed", "reply": "once"}
    ]
    assert [name for name, _ in events] == ["permission.asked", "permission.replied"]


def test_unsubscribe_stops_events() -> None:
    service = PermissionService()
    seen: list[str] = []
    unsubscribe = service.subscribe(lambda event, data: seen.append(event))
    unsubscribe()
    unsubscribe()  # twice is harmless

    async def main() -> None:
        task = start(service, request())
        await settle()
        service.reply(service.pending()[0].id, "once")
        await task

    run(main())
    assert seen == []


def test_requests_are_isolated_per_project_directory(make_project, tmp_path: Path) -> None:
    one = make_project(tmp_path / "one")
    two = make_project(tmp_path / "two")
    assert one.permissions is not two.permissions
    assert one.permissions is one.permissions

    async def main() -> None:
        waiting = start(one.permissions, request("ses_1", "bash", ["ls"], always=["*"]))
        await settle()
        assert len(one.permissions.pending()) == 1
        assert two.permissions.pending() == []
        with pytest.raises(NotFoundError):
            two.permissions.reply(one.permissions.pending()[0].id, "once")
        one.permissions.reply(one.permissions.pending()[0].id, "always")
        await waiting
        # the approval belongs to project one only
        other = start(two.permissions, request("ses_1", "bash", ["ls"]))
        await settle()
        assert len(two.permissions.pending()) == 1
        two.close()
        with pytest.raises(RejectedError):
            await other

    run(main())


def test_pending_requests_are_rejected_on_dispose() -> None:
    service = PermissionService()
    events = listen(service)

    async def main() -> None:
        tasks = [start(service, request(f"ses_{n}", patterns=[str(n)])) for n in range(3)]
        await settle()
        assert len(service.pending()) == 3
        service.dispose()
        for task in tasks:
            with pytest.raises(RejectedError) as caught:
                await task
            assert str(caught.value) == REJECTED
        assert service.pending() == []

    run(main())
    assert [e["reply"] for e in events.named("permission.replied")] == ["reject"] * 3


def test_pending_requests_are_rejected_when_the_project_closes(make_project) -> None:
    project = make_project()
    project.close()  # closing before any use is fine

    async def main() -> None:
        task = start(project.permissions, request())
        await settle()
        assert len(project.permissions.pending()) == 1
        project.close()
        with pytest.raises(RejectedError):
            await task
        assert project.permissions.pending() == []

    run(main())


def test_reply_with_unknown_id_is_not_found_and_nothing_is_pending() -> None:
    service = PermissionService()
    events = listen(service)
    with pytest.raises(NotFoundError):
        service.reply("per_nope", "once")
    assert service.pending() == [] and events == []

    async def main() -> None:
        task = start(service, request())
        await settle()
        (waiting,) = service.pending()
        service.reply(waiting.id, "once")
        await task
        with pytest.raises(NotFoundError):  # already answered
            service.reply(waiting.id, "reject")

    run(main())
    assert service.pending() == []


# -- several patterns ----------------------------------------------------------------------------------


def test_multiple_patterns_stop_on_the_first_deny() -> None:
    service = PermissionService()
    events = listen(service)
    ruleset = [Rule("bash", "*", "allow"), Rule("bash", "rm *", "deny")]

    async def main() -> None:
        with pytest.raises(DeniedError) as caught:
            await service.ask(request(patterns=["echo hello", "rm -rf /"]), ruleset)
        assert caught.value.rules == [r.as_dict() for r in ruleset]

    run(main())
    assert service.pending() == [] and events == []


def test_multiple_patterns_all_allowed_resolve() -> None:
    service = PermissionService()

    async def main() -> None:
        await asyncio.wait_for(
            service.ask(request(patterns=["echo hello", "ls -la"]), [Rule("bash", "*", "allow")]), timeout=30
        )

    run(main())
    assert service.pending() == []


def test_deny_wins_even_after_an_earlier_pattern_needed_asking() -> None:
    service = PermissionService()
    events = listen(service)
    ruleset = [Rule("bash", "*", "ask"), Rule("bash", "rm *", "deny")]

    async def main() -> None:
        with pytest.raises(DeniedError):
            await service.ask(request(patterns=["echo hello", "rm -rf /"]), ruleset)

    run(main())
    assert service.pending() == [] and events == []


def test_one_asked_pattern_among_allowed_ones_asks_once_for_the_whole_request() -> None:
    service = PermissionService()
    events = listen(service)
    ruleset = [Rule("bash", "*", "allow"), Rule("bash", "git push *", "ask")]

    async def main() -> None:
        task = start(service, request(patterns=["git status", "git push origin", "ls"]), ruleset)
        await settle()
        (waiting,) = service.pending()
        assert waiting.patterns == ["git status", "git push origin", "ls"]
        service.reply(waiting.id, "once")
        await task

    run(main())
    assert len(events.named("permission.asked")) == 1


# -- through a session ---------------------------------------------------------------------------------


class Recorder:
    """A session prompt that records each request and answers from a script."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.requests: list[Request] = []

    async def __call__(self, req: Request) -> Decision:
        self.requests.append(req)
        return self.answers.pop(0) if self.answers else Decision("reject")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "notes.txt"
    path.parent.mkdir()
    path.write_text("outside words\n")
    return path


def read_in(project: Project, target: Path, prompt: Callable[..., Any], **options: Any) -> Any:
    return project.run_tool("read", {"filePath": str(target)}, prompt=prompt, **options)


def test_session_prompt_is_called_for_an_ask_and_once_lets_the_tool_run(make_project, outside: Path) -> None:
    project = make_project()
    prompt = Recorder(Decision("once"))
    result = read_in(project, outside, prompt)
    assert "1: outside words" in result.output
    (asked,) = prompt.requests
    assert asked.permission == "external_directory"
    assert asked.patterns == asked.always == [f"{outside.parent}/*"]
    assert asked.metadata == {"filepath": str(outside), "parentDir": str(outside.parent)}
    assert asked.tool is not None and asked.tool["messageID"].startswith("msg")
    # once is not remembered, even in the same project
    again = Recorder(Decision("once"))
    read_in(project, outside, again)
    assert len(again.requests) == 1


def test_session_prompt_reject_and_feedback_reach_the_tool_caller(make_project, outside: Path) -> None:
    project = make_project()
    with pytest.raises(RejectedError) as plain:
        read_in(project, outside, Recorder(Decision("reject")))
    assert str(plain.value) == REJECTED
    with pytest.raises(CorrectedError) as corrected:
        read_in(project, outside, Recorder(Decision("reject", "read docs/notes.txt")))
    assert str(corrected.value) == CORRECTED.format("read docs/notes.txt")


def test_session_prompt_that_raises_counts_as_reject(make_project, outside: Path) -> None:
    async def broken(req: Request) -> Decision:
        raise OSError("terminal went away")

    with pytest.raises(RejectedError):
        read_in(make_project(), outside, broken)


def test_session_default_prompt_refuses(make_project, outside: Path) -> None:
    project = make_project()
    session = project.session()
    with pytest.raises(RejectedError):
        run(session.execute("read", {"filePath": str(outside)}))
    assert project.permissions.pending() == []


def test_session_rules_come_after_the_agent_rules(make_project, outside: Path) -> None:
    project = make_project()
    prompt = Recorder()
    allow = [Rule("external_directory", f"{outside.parent}/*", "allow")]
    assert "outside words" in read_in(project, outside, prompt, rules=allow).output
    assert prompt.requests == []
    deny = [*allow, Rule("read", "*", "deny")]
    with pytest.raises(DeniedError) as caught:
        read_in(project, outside, prompt, rules=deny)
    assert caught.value.rules[-1] == {"permission": "read", "pattern": "*", "action": "deny"}
    assert prompt.requests == []


def test_named_session_always_is_stored_and_a_new_project_does_not_ask(
    make_project, outside: Path, env: dict[str, str]
) -> None:
    project = make_project()
    first = Recorder(Decision("always"))
    assert "outside words" in read_in(project, outside, first, id="ses_named", remember=True).output
    assert len(first.requests) == 1
    pattern = f"{outside.parent}/*"
    assert project.store.approvals("ses_named") == [("external_directory", pattern)]
    assert project.store.path == Path(env["XDG_DATA_HOME"], "opencode", "opencode.db")
    assert project.store.path.is_file()

    fresh = make_project()  # a new process, in effect: nothing in memory
    assert fresh.permissions.approved == []
    second = Recorder()  # would reject
    result = read_in(fresh, outside, second, id="ses_named", remember=True)
    assert "outside words" in result.output
    assert second.requests == []

    # the approval belongs to that session id only
    third = Recorder()
    with pytest.raises(RejectedError):
        read_in(make_project(), outside, third, id="ses_other", remember=True)
    assert len(third.requests) == 1


def test_stored_approval_is_only_loaded_for_remembering_sessions(make_project, outside: Path) -> None:
    project = make_project()
    read_in(project, outside, Recorder(Decision("always")), id="ses_named", remember=True)
    prompt = Recorder()
    with pytest.raises(RejectedError):  # same id, but the host did not ask to remember
        read_in(make_project(), outside, prompt, id="ses_named")
    assert len(prompt.requests) == 1


def test_unnamed_sessions_do_not_persist(make_project, outside: Path) -> None:
    project = make_project()
    session = project.session(prompt=Recorder(Decision("always")))
    run(session.execute("read", {"filePath": str(outside)}))
    assert project.store.approvals(session.id) == []
    # in memory the approval is shared by the project's other sessions (as upstream)...
    same_project = Recorder()
    read_in(project, outside, same_project)
    assert same_project.requests == []
    # ...but a new project asks again, even under the same session id
    prompt = Recorder()
    with pytest.raises(RejectedError):
        read_in(make_project(), outside, prompt, id=session.id, remember=True)
    assert len(prompt.requests) == 1


def test_closed_session_no_longer_answers(make_project, outside: Path) -> None:
    project = make_project()
    prompt = Recorder(Decision("once"))
    session = project.session(prompt=prompt)
    session.close()

    async def main() -> None:
        task = asyncio.create_task(session.execute("read", {"filePath": str(outside)}))
        for _ in range(50):
            await asyncio.sleep(0.01)
            if project.permissions.pending():
                break
        assert len(project.permissions.pending()) == 1 and not task.done()
        project.close()
        with pytest.raises(RejectedError):
            await task

    run(main())
    assert prompt.requests == []


# -- the relevant rules of a deny, printed as OpenCode's config loader builds them ------------------------


def test_deny_prints_each_rule_in_the_form_it_was_written() -> None:
    from opencode_cli.permission import from_config

    service = PermissionService()
    ruleset = from_config({"*": "allow", "bash": {"git *": "allow", "rm *": "deny"}, "edit": "deny"}, "/h")

    async def main() -> DeniedError:
        with pytest.raises(DeniedError) as caught:
            await service.ask(request(patterns=["rm -rf /"]), ruleset)
        return caught.value

    error = run(main())
    assert str(error) == DENIED.format(
        '[{"permission":"*","action":"allow","pattern":"*"},'
        '{"permission":"bash","pattern":"git *","action":"allow"},'
        '{"permission":"bash","pattern":"rm *","action":"deny"}]'
    )


def test_deny_through_a_project_prints_defaults_and_config_as_written(
    make_project, project_dir: Path, write_file
) -> None:
    write_file(project_dir / "opencode.toml", '[permission]\nread = { "*.secret" = "deny" }\nbash = "ask"\n')
    write_file(project_dir / "key.secret", "hush\n")
    project = make_project()
    with pytest.raises(DeniedError) as caught:
        read_in(project, project_dir / "key.secret", Recorder())
    assert str(caught.value) == DENIED.format(
        '[{"permission":"*","action":"allow","pattern":"*"},'
        '{"permission":"read","pattern":"*","action":"allow"},'
        '{"permission":"read","pattern":"*.env","action":"ask"},'
        '{"permission":"read","pattern":"*.env.*","action":"ask"},'
        '{"permission":"read","pattern":"*.env.example","action":"allow"},'
        '{"permission":"read","pattern":"*.secret","action":"deny"}]'
    )


def test_session_rules_print_permission_pattern_action(make_project, outside: Path) -> None:
    """Rules a host gives a session (``--allow``, ``--deny``) print as ``{permission, pattern, action}``."""
    project = make_project()
    rules = [
        Rule("external_directory", f"{outside.parent}/*", "allow", "--allow"),
        Rule("read", "*", "deny", "--deny"),
    ]
    with pytest.raises(DeniedError) as caught:
        read_in(project, outside, Recorder(), rules=rules)
    assert str(caught.value).endswith(
        '{"permission":"read","pattern":"*.env.example","action":"allow"},'
        '{"permission":"read","pattern":"*","action":"deny"}]'
    )
    assert '[{"permission":"*","action":"allow","pattern":"*"},' in str(caught.value)


def test_a_subagent_inherits_the_parents_rules_in_their_form() -> None:
    from opencode_cli.permission import from_config, inherited

    parent = from_config({"bash": "deny", "edit": {"src/*": "deny"}}, "/h", "config")
    rules = inherited(parent, [])
    printed = [rule.as_dict() for rule in rules]
    assert printed[:2] == [
        {"permission": "bash", "action": "deny", "pattern": "*"},
        {"permission": "edit", "pattern": "src/*", "action": "deny"},
    ]
    assert [list(rule) for rule in printed[:2]] == [
        ["permission", "action", "pattern"],
        ["permission", "pattern", "action"],
    ]
    assert [rule.source for rule in rules[:2]] == ["parent: config", "parent: config"]
    assert printed[2:] == [
        {"permission": "todowrite", "pattern": "*", "action": "deny"},
        {"permission": "task", "pattern": "*", "action": "deny"},
    ]
