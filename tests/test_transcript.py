"""Session transcripts: OpenCode's JSON shapes, tool-part states, and persistence in the sqlite store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencode_cli.modelref import ModelRef
from opencode_cli.results import Attachment
from opencode_cli.store import MIGRATIONS, SCHEMA_VERSION, Store
from opencode_cli.transcript import (
    FilePart,
    Message,
    SessionInfo,
    TextPart,
    ToolCallPart,
    Transcript,
    new_id,
    part_from_dict,
)

MODEL = ModelRef("anthropic", "claude-sonnet-4")


def new_transcript(store: Store | None = None, **info: Any) -> Transcript:
    return Transcript(SessionInfo("a session", "build", "/work/project", **info), store)


# -- shapes ------------------------------------------------------------------------------------------


def test_session_info_has_opencode_keys() -> None:
    rules = [{"permission": "bash", "pattern": "git *", "action": "allow"}]
    top = SessionInfo("Fix the bug", "build", "/work/project", permission=rules)
    assert top.id.startswith("ses_") and top.updated == top.created
    assert top.as_dict() == {
        "id": top.id,
        "title": "Fix the bug",
        "agent": "build",
        "directory": "/work/project",
        "permission": rules,
        "time": {"created": top.created, "updated": top.created},
    }
    child = SessionInfo("Explore", "explore", "/work/project", parent_id=top.id)
    assert list(child.as_dict()) == ["id", "parentID", "title", "agent", "directory", "permission", "time"]
    assert child.as_dict()["parentID"] == top.id


def test_message_and_part_shapes_have_opencode_keys() -> None:
    transcript = new_transcript()
    user = transcript.add_user("hello", "build", MODEL)
    assert user.id.startswith("msg_")
    info = user.as_dict()["info"]
    assert set(info) == {"id", "sessionID", "role", "time", "agent", "model"}
    assert info["model"] == {"providerID": "anthropic", "modelID": "claude-sonnet-4"}
    assert info["role"] == "user" and set(info["time"]) == {"created"}
    (text,) = user.as_dict()["parts"]
    assert text == {
        "id": user.parts[0].id,
        "sessionID": transcript.info.id,
        "messageID": user.id,
        "type": "text",
        "text": "hello",
    }
    assert text["id"].startswith("prt_")
    assert "model" not in transcript.add_user("no model", "build").info_dict()

    answer = transcript.add_assistant("build", MODEL)
    transcript.add_part(answer, TextPart("note", synthetic=True))
    transcript.add_part(answer, FilePart("image/png", "data:image/png;base64,AA==", "a.png"))
    transcript.add_part(answer, FilePart("text/plain", "file:///x"))
    transcript.finish(answer, "stop")
    info = answer.info_dict()
    assert info == {
        "id": answer.id,
        "sessionID": transcript.info.id,
        "role": "assistant",
        "time": {"created": answer.created, "completed": answer.completed},
        "agent": "build",
        "parentID": transcript.messages[1].id,  # the last user message
        "providerID": "anthropic",
        "modelID": "claude-sonnet-4",
        "finish": "stop",
    }
    synthetic, image, plain = (part.as_dict() for part in answer.parts)
    assert synthetic["synthetic"] is True
    assert set(image) == {"id", "sessionID", "messageID", "type", "mime", "filename", "url"}
    assert image["type"] == "file" and "filename" not in plain

    failed = transcript.add_assistant("build", parent_id=user.id)
    transcript.finish(failed, None, "ProviderAuthError: no key")
    info = failed.info_dict()
    assert info["parentID"] == user.id and info["error"] == "ProviderAuthError: no key"
    assert not {"finish", "providerID", "modelID"} & set(info)


def test_text_and_last_text() -> None:
    transcript = new_transcript()
    assert transcript.last_text() == ""
    transcript.add_user("question", "build")
    assert transcript.last_text() == ""  # only assistant messages count
    first = transcript.add_assistant("explore")
    transcript.add_part(first, TextPart("first "))
    transcript.add_part(first, ToolCallPart("call_1", "read", {"filePath": "a"}))
    transcript.add_part(first, TextPart("answer"))
    assert first.text == "first answer"
    assert transcript.last_text() == "answer"
    transcript.add_assistant("explore")  # the last assistant message has no text yet
    assert transcript.last_text() == ""
    assert len(transcript) == 3 and [m.role for m in transcript] == ["user", "assistant", "assistant"]


# -- tool parts --------------------------------------------------------------------------------------


def test_tool_part_state_transitions() -> None:
    transcript = new_transcript()
    message = transcript.add_assistant("build", MODEL)
    part = ToolCallPart("call_1", "bash", {"command": "ls"}, raw='{"command": "ls"}')
    transcript.add_part(message, part)
    assert part.as_dict() == {
        "id": part.id,
        "sessionID": transcript.info.id,
        "messageID": message.id,
        "type": "tool",
        "callID": "call_1",
        "tool": "bash",
        "state": {"status": "pending", "input": {"command": "ls"}, "raw": '{"command": "ls"}'},
    }

    part.running()
    state = part.state()
    assert state == {"status": "running", "input": {"command": "ls"}, "time": {"start": part.start}}
    start = part.start
    part.running("ls", {"output": "a\n"})  # ctx.metadata: replaces title and metadata, keeps the start
    assert part.state() == {
        "status": "running",
        "input": {"command": "ls"},
        "title": "ls",
        "metadata": {"output": "a\n"},
        "time": {"start": start},
    }

    part.complete("a\nb\n", "ls", {"exit": 0}, [Attachment("image/png", "data:image/png;base64,AA==")])
    state = part.state()
    assert list(state) == ["status", "input", "output", "title", "metadata", "time", "attachments"]
    assert state["status"] == "completed" and state["output"] == "a\nb\n" and state["metadata"] == {"exit": 0}
    assert state["time"]["start"] == start <= state["time"]["end"]
    (attachment,) = state["attachments"]
    assert attachment["id"].startswith("prt_")
    assert attachment == {
        "id": attachment["id"],
        "sessionID": transcript.info.id,
        "messageID": message.id,
        "type": "file",
        "mime": "image/png",
        "url": "data:image/png;base64,AA==",
    }
    with pytest.raises(ValueError, match="already completed"):
        part.fail("too late")
    with pytest.raises(ValueError, match="already completed"):
        part.running()


def test_a_failed_call_and_a_call_completed_without_running() -> None:
    failed = ToolCallPart("call_1", "read", {"filePath": "/nope"}).running("nope", {"x": 1})
    failed.fail("File not found: /nope")
    state = failed.state()
    assert state == {
        "status": "error",
        "input": {"filePath": "/nope"},
        "error": "File not found: /nope",
        "time": {"start": failed.start, "end": failed.end},
    }
    assert failed.start is not None and failed.end is not None and failed.start <= failed.end
    interrupted = ToolCallPart("call_2", "bash", {}).fail("aborted", {"interrupted": True, "output": "…"})
    assert interrupted.state()["metadata"] == {"interrupted": True, "output": "…"}
    with pytest.raises(ValueError, match="already error"):
        interrupted.complete("x")

    quick = ToolCallPart("call_3", "glob", {"pattern": "*"}, raw="{}").complete("a.py")
    assert quick.state() == {
        "status": "completed",
        "input": {"pattern": "*"},
        "output": "a.py",
        "title": "",
        "metadata": {},
        "time": {"start": quick.start, "end": quick.end},
    }
    assert quick.raw == ""


def test_attachments_get_the_ids_of_the_message_they_are_added_to() -> None:
    part = ToolCallPart("call_1", "read", {}).complete(
        "x",
        attachments=[{"mime": "application/pdf", "url": "data:,x", "filename": "f.pdf", "id": "prt_given"}],
    )
    transcript = new_transcript()
    message = transcript.add_assistant("build")
    transcript.add_part(message, part)
    (attachment,) = part.state()["attachments"]
    assert attachment["id"] == "prt_given" and attachment["filename"] == "f.pdf"
    assert (attachment["sessionID"], attachment["messageID"]) == (transcript.info.id, message.id)


def test_unknown_part_types_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown part type 'reasoning'"):
        part_from_dict({"id": "prt_1", "sessionID": "s", "messageID": "m", "type": "reasoning"})


# -- persistence ---------------------------------------------------------------------------------------


def test_transcript_is_written_through_and_loaded(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    assert Transcript.load(store, "ses_missing") is None
    transcript = new_transcript(store)
    assert store.session(transcript.info.id) == transcript.info.as_dict()
    assert Transcript.load(store, transcript.info.id).as_dicts() == []  # type: ignore[union-attr]
    transcript.add_user("list files", "build", MODEL)
    answer = transcript.add_assistant("build", MODEL)
    call = transcript.add_part(answer, ToolCallPart("call_1", "bash", {"command": "ls"}))
    assert isinstance(call, ToolCallPart)
    transcript.update_part(call.running("ls"))
    transcript.update_part(call.complete("a.py\n", "ls", {"exit": 0}))
    transcript.add_part(answer, TextPart("There is a.py."))
    transcript.finish(answer, "stop")
    transcript.info.title = "Listing files"
    transcript.update_session()

    loaded = Transcript.load(store, transcript.info.id)
    assert loaded is not None
    assert loaded.info == transcript.info
    assert loaded.as_dicts() == transcript.as_dicts()
    assert loaded.messages == transcript.messages
    assert loaded.last_text() == "There is a.py."
    assert loaded.info.updated >= loaded.info.created
    # the loaded transcript goes on writing to the store
    loaded.add_user("thanks", "build")
    again = Transcript.load(store, transcript.info.id)
    assert again is not None and again.as_dicts() == loaded.as_dicts() and len(again) == 3


def test_parts_keep_their_place_after_an_upsert(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    transcript = new_transcript(store)
    message = transcript.add_assistant("build")
    # ids deliberately out of lexical order: order is insertion order, not id order
    parts = [
        TextPart("first", id="prt_z"),
        ToolCallPart("call_1", "bash", {"command": "ls"}, id="prt_m"),
        TextPart("last", id="prt_a"),
    ]
    for part in parts:
        transcript.add_part(message, part)
    tool = parts[1]
    assert isinstance(tool, ToolCallPart)
    transcript.update_part(tool.running())
    transcript.update_part(tool.complete("a.py"))
    # re-adding a part with a known id replaces it in place, in memory and in the store
    transcript.add_part(message, TextPart("first, edited", id="prt_z"))
    (stored,) = store.messages(transcript.info.id)
    assert [part["id"] for part in stored["parts"]] == ["prt_z", "prt_m", "prt_a"]
    assert stored["parts"][0]["text"] == "first, edited"
    assert stored["parts"][1]["state"]["status"] == "completed"
    assert [part.id for part in message.parts] == ["prt_z", "prt_m", "prt_a"]


def test_messages_keep_their_order_when_ids_do_not_sort(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    for message_id in ["msg_c", "msg_a", "msg_b"]:
        info = {"id": message_id, "sessionID": "ses_1", "role": "user", "time": {"created": 5}, "agent": "x"}
        store.save_message("ses_1", info)
    store.save_message("ses_1", {"id": "msg_c", "sessionID": "ses_1", "role": "user", "time": {"created": 5}})
    store.save_part({"id": "prt_1", "sessionID": "ses_1", "messageID": "msg_b", "type": "text", "text": "b"})
    store.save_message("ses_2", {"id": "msg_0", "sessionID": "ses_2", "role": "user", "time": {"created": 1}})
    stored = store.messages("ses_1")
    assert [m["info"]["id"] for m in stored] == ["msg_c", "msg_a", "msg_b"]
    assert "agent" not in stored[0]["info"]  # the upsert replaced the data
    assert [len(m["parts"]) for m in stored] == [0, 0, 1]
    assert store.messages("ses_unknown") == []


def test_children_lists_child_sessions(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    parent = new_transcript(store)
    first = parent.child("Explore the code", "explore")
    second = parent.child(
        "Write tests", "general", [{"permission": "edit", "pattern": "*", "action": "deny"}]
    )
    first.child("Nested", "explore")
    new_transcript(store)  # an unrelated top-level session
    children = store.children(parent.info.id)
    assert children == [first.info.as_dict(), second.info.as_dict()]
    assert {child["parentID"] for child in children} == {parent.info.id}
    assert children[0]["directory"] == parent.info.directory
    assert [c["title"] for c in store.children(first.info.id)] == ["Nested"]
    assert store.children(second.info.id) == [] and store.children("ses_unknown") == []
    assert store.session("ses_unknown") is None


CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    from opencode_cli.results import Attachment
    from opencode_cli.modelref import ModelRef
    from opencode_cli.store import Store
    from opencode_cli.transcript import FilePart, SessionInfo, TextPart, ToolCallPart, Transcript

    store = Store(Path(sys.argv[1]))
    rules = [{"permission": "bash", "pattern": "*", "action": "ask"}]
    transcript = Transcript(SessionInfo("Résumé \\u65e5\\u672c", "build", "/w", permission=rules), store)
    model = ModelRef.parse("openai/gpt-5")
    user = transcript.add_user("read a.png", "build", model)
    transcript.add_part(user, FilePart("image/png", "file:///w/a.png", "a.png"))
    answer = transcript.add_assistant("build", model)
    call = transcript.add_part(answer, ToolCallPart("call_1", "read", {"filePath": "/w/a.png"}))
    transcript.update_part(call.running("a.png"))
    png = Attachment("image/png", "data:image/png;base64,AA==", "a.png")
    transcript.update_part(call.complete("Image read \\udcff", "a.png", {"truncated": False}, [png]))
    failed = transcript.add_part(answer, ToolCallPart("call_2", "bash", {"command": "rm -rf /"}))
    transcript.update_part(failed.fail("denied"))
    transcript.add_part(answer, TextPart("It is a cat."))
    transcript.finish(answer, "stop")
    child = transcript.child("Look closer", "explore")
    child.add_user("zoom", "explore")
    print(json.dumps({"id": transcript.info.id, "info": transcript.info.as_dict(),
                      "messages": transcript.as_dicts(), "child": child.info.id}))
    """
)


def test_a_transcript_survives_a_process_restart(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    written = json.loads(done.stdout)
    store = Store(path)
    loaded = Transcript.load(store, written["id"])
    assert loaded is not None
    assert loaded.info.as_dict() == written["info"]
    assert loaded.as_dicts() == written["messages"]
    assert loaded.info.title == "Résumé 日本"
    call = loaded.messages[1].parts[0]
    assert isinstance(call, ToolCallPart) and call.output == "Image read \udcff"  # a lone surrogate survives
    assert [m.role for m in loaded] == ["user", "assistant"]
    assert loaded.last_text() == "It is a cat."
    assert [child["id"] for child in store.children(written["id"])] == [written["child"]]
    child = Transcript.load(store, written["child"])
    assert child is not None and child.info.parent_id == written["id"] and child.messages[0].text == "zoom"


def test_a_version_2_file_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    connection = sqlite3.connect(path)
    for migration in MIGRATIONS[:2]:
        connection.executescript(migration)
    connection.execute("PRAGMA user_version = 2")
    connection.execute("INSERT INTO todo VALUES ('ses_1', 0, 'write tests', 'pending', 'high', 0)")
    connection.commit()
    connection.close()
    store = Store(path)
    assert store.todos("ses_1") == [{"content": "write tests", "status": "pending", "priority": "high"}]
    assert SCHEMA_VERSION >= 3
    transcript = new_transcript(store)
    transcript.add_user("hi", "build")
    assert Transcript.load(Store(path), transcript.info.id).as_dicts() == transcript.as_dicts()  # type: ignore[union-attr]


# -- round trips -------------------------------------------------------------------------------------

TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)  # surrogates too
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
OBJECTS = st.dictionaries(TEXT, JSON, max_size=4)
MODELS = st.none() | st.builds(ModelRef, st.none() | st.sampled_from(["openai", "anthropic"]), TEXT)
ATTACHMENTS = st.builds(Attachment, TEXT, TEXT, st.none() | TEXT)


@st.composite
def tool_parts(draw: st.DrawFn) -> ToolCallPart:
    part = ToolCallPart(draw(TEXT), draw(TEXT), draw(OBJECTS), raw=draw(TEXT))
    for step in draw(st.lists(st.sampled_from(["running", "complete", "fail"]), max_size=3)):
        if part.status in ("completed", "error"):
            break
        if step == "running":
            part.running(draw(st.none() | TEXT), draw(st.none() | OBJECTS))
        elif step == "complete":
            part.complete(draw(TEXT), draw(TEXT), draw(OBJECTS), draw(st.lists(ATTACHMENTS, max_size=2)))
        else:
            part.fail(draw(TEXT), draw(st.none() | OBJECTS))
    return part


PARTS = st.one_of(
    st.builds(TextPart, TEXT, st.booleans()),
    st.builds(FilePart, TEXT, TEXT, st.none() | TEXT),
    tool_parts(),
)


@st.composite
def transcripts(draw: st.DrawFn, store: Store | None = None) -> Transcript:
    permission = draw(st.lists(st.fixed_dictionaries({"permission": TEXT, "pattern": TEXT, "action": TEXT})))
    info = SessionInfo(draw(TEXT), draw(TEXT), draw(TEXT), draw(st.none() | TEXT), permission)
    transcript = Transcript(info, store)
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            message = transcript.add_user(draw(TEXT), draw(TEXT), draw(MODELS))
        else:
            message = transcript.add_assistant(draw(TEXT), draw(MODELS), draw(st.none() | TEXT))
        for part in draw(st.lists(PARTS, max_size=3)):
            transcript.add_part(message, part)
        if message.role == "assistant" and draw(st.booleans()):
            transcript.finish(message, draw(st.none() | TEXT), draw(st.none() | TEXT))
    return transcript


@given(transcripts())
def test_round_trip_through_dicts_and_json(transcript: Transcript) -> None:
    assert SessionInfo.from_dict(transcript.info.as_dict()) == transcript.info
    dicts = transcript.as_dicts()
    assert [Message.from_dict(d) for d in dicts] == transcript.messages
    assert [Message.from_dict(d).as_dict() for d in dicts] == dicts
    as_json = json.loads(json.dumps(dicts))
    assert [Message.from_dict(d) for d in as_json] == transcript.messages
    for message in transcript:
        for part in message.parts:
            assert part_from_dict(part.as_dict()) == part


@pytest.mark.slow
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_round_trip_through_the_store(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "opencode.db")
        transcript = data.draw(transcripts(store))
        loaded = Transcript.load(Store(store.path), transcript.info.id)
        assert loaded is not None
        assert loaded.info == transcript.info
        assert loaded.messages == transcript.messages
        assert loaded.as_dicts() == transcript.as_dicts()


# -- a bounded window ------------------------------------------------------------------------------------


def test_a_window_holds_the_latest_messages_and_the_store_keeps_all(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    transcript = Transcript(SessionInfo("s", "build", "/p"), store, window=4)
    held = transcript.messages
    for index in range(10):
        message = transcript.add_assistant("build")
        transcript.add_part(message, TextPart(f"step {index}"))

    assert transcript.messages is held  # the same list: ctx.messages keeps seeing the latest
    assert [m.text for m in transcript.messages] == [f"step {i}" for i in range(6, 10)]
    assert len(store.messages(transcript.info.id)) == 10
    resumed = Transcript.load(store, transcript.info.id, window=3)
    assert resumed is not None and [m.text for m in resumed.messages] == ["step 7", "step 8", "step 9"]
    assert len(Transcript.load(store, transcript.info.id).messages) == 10  # type: ignore[union-attr]


def test_a_window_below_two_messages_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        Transcript(SessionInfo("s", "build", "/p"), window=1)


def test_a_session_holds_a_bounded_window(make_project, project_dir: Path) -> None:
    import asyncio

    from opencode_cli.session import ToolCall

    (project_dir / "a.txt").write_text("a\n")
    with make_project().session(window=5) as session:

        async def calls() -> None:
            for _ in range(12):
                session.step()
                await session.dispatch(ToolCall("read", {"filePath": "a.txt"}))

        asyncio.run(calls())
        assert len(session.messages) == 5
        assert all(m.parts and m.parts[0].status == "completed" for m in session.messages)


def test_an_error_quoting_a_huge_argument_is_cut_short(make_project) -> None:
    import asyncio

    from opencode_cli.errors import MAX_ERROR_CHARS
    from opencode_cli.session import ToolCall

    with make_project().session() as session:
        part = asyncio.run(session.dispatch(ToolCall("skill", {"name": "x" * 300_000})))

    assert part.status == "error" and len(part.text) < MAX_ERROR_CHARS + 100
    assert part.text.startswith('Skill "xxx') and "characters) …" in part.text


# -- bounded in bytes ------------------------------------------------------------------------------------


def test_parts_past_the_byte_bound_are_let_go_oldest_first_and_the_store_keeps_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "opencode.db")
    transcript = Transcript(SessionInfo("s", "build", "/p"), store, max_bytes=50_000)
    message = transcript.add_assistant("build")  # one message, no steps: every call is a part of it
    for index in range(40):
        part = transcript.add_part(message, ToolCallPart(f"call_{index}", "read", {"filePath": f"{index}"}))
        part.running()
        transcript.update_part(part)
        part.complete("y" * 9_000)
        transcript.update_part(part)
        assert transcript.held <= 50_000

    assert [p.call_id for p in message.parts] == [f"call_{i}" for i in range(35, 40)]
    assert transcript.messages == [message]
    stored = store.messages(transcript.info.id)
    assert len(stored[0]["parts"]) == 40  # what memory let go of stays in the store
    resumed = Transcript.load(store, transcript.info.id, max_bytes=20_000)
    assert resumed is not None and [p.call_id for p in resumed.messages[0].parts] == ["call_38", "call_39"]


def test_a_running_call_and_the_last_message_stay_however_big(tmp_path: Path) -> None:
    transcript = Transcript(SessionInfo("s", "build", "/p"), max_bytes=1_000)
    first = transcript.add_assistant("build")
    transcript.add_part(first, TextPart("t" * 5_000))
    running = transcript.add_part(first, ToolCallPart("call_big", "write", {"content": "c" * 5_000}))
    running.running()
    transcript.update_part(running)
    assert first.parts == [running]  # the text went; the running call stays
    second = transcript.add_user("u" * 3_000, "build")
    assert transcript.messages == [first, second] and second.parts  # the last message keeps its part
    running.complete("done")
    transcript.update_part(running)
    assert transcript.messages == [second] and transcript.held > 1_000  # only the last message is left


def test_a_session_without_steps_holds_a_bounded_number_of_bytes(make_project, project_dir: Path) -> None:
    """2 000 calls in one step would hold every read's 27 KB output; ``transcript.max_bytes`` bounds it,
    and a remembered session's store keeps every call."""
    import asyncio

    from opencode_cli.session import ToolCall

    (project_dir / "opencode.toml").write_text("[transcript]\nmax_bytes = 300_000\n")
    (project_dir / "big.txt").write_text(("z" * 89 + "\n") * 300)
    project = make_project()
    with project.session(remember=True) as session:

        async def calls() -> None:
            for index in range(200):  # two offsets in turn: no three identical calls in a row
                args = {"filePath": "big.txt", "offset": 1 + index % 2}
                part = await session.dispatch(ToolCall("read", args))
                assert part.status == "completed"
                assert session.transcript.held <= 300_000

        asyncio.run(calls())
        held = [p for m in session.messages for p in m.parts]
        assert 5 <= len(held) < 20
        stored = project.store.messages(session.id)
        assert sum(len(m["parts"]) for m in stored) >= 200


def test_a_bad_byte_bound_is_warned_about(make_project, project_dir: Path, warnings: list[str]) -> None:
    from opencode_cli.limits import TRANSCRIPT_BYTES

    (project_dir / "opencode.toml").write_text('[transcript]\nmax_bytes = "lots"\n')
    with make_project().session() as session:
        assert session.transcript.max_bytes == TRANSCRIPT_BYTES
    assert any("transcript.max_bytes" in warning for warning in warnings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["call", "text", "step"]), st.integers(0, 3_000), st.booleans()),
        max_size=40,
    )
)
def test_what_is_held_stays_within_the_bound_but_for_running_calls_and_the_newest_part(
    steps: list[tuple[str, int, bool]],
) -> None:
    """Whatever the sequence of calls, texts and steps: the characters held never pass ``max_bytes``
    by more than the running calls and the newest part, and ``held`` is the sum of what is held."""
    from opencode_cli.transcript import part_size

    transcript = Transcript(SessionInfo("s", "build", "/p"), max_bytes=5_000)
    message = transcript.add_assistant("build")
    for kind, size, finish in steps:
        if kind == "step":
            message = transcript.add_assistant("build")
        elif kind == "text":
            transcript.add_part(message, TextPart("t" * size))
        else:
            call = ToolCallPart(new_id("call"), "read", {"filePath": "p" * size})
            part = transcript.add_part(message, call)
            part.running()
            transcript.update_part(part)
            if finish:
                part.complete("o" * size)
                transcript.update_part(part)
        held = [p for m in transcript.messages for p in m.parts]
        assert transcript.held == sum(part_size(p) for p in held)
        running = [p for p in held if isinstance(p, ToolCallPart) and p.status == "running"]
        newest = held[-1:] if held else []
        allowance = sum(part_size(p) for p in {id(p): p for p in running + newest}.values())
        assert transcript.held <= 5_000 + allowance
