"""``opencode run`` as a real process against the scripted OpenAI-compatible server: Ctrl-C keeps what
was typed, an unknown model is a usage error, and OpenCode's flags (``--format json``, ``-c``, ``-f``,
``--title``)."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, call, configure, local_config, opencode

from opencode_cli.project import Project

#: A generous bound on waiting for something a test expects to happen.
BOUND = 60.0
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)


def start(project_dir: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    script = Path(sys.executable).parent / "opencode"
    return subprocess.Popen(
        [str(script), *args],
        cwd=project_dir,
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def wait_for(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + BOUND
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)
    return value


@pytest.fixture
def project(local_project: Callable[..., Project], project_dir: Path) -> Project:
    (project_dir / "notes.txt").write_text("one\ntwo\n")
    return local_project()


def user_messages(request: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "user"]


# -- Ctrl-C, usage errors --------------------------------------------------------------------------------


def test_ctrl_c_while_the_model_thinks_keeps_the_prompt_and_prints_the_session(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    scripted_model.script([{"text": "too late", "delay": 120}])
    process = start(project_dir, env, "run", "keep this prompt")
    wait_for(lambda: scripted_model.requests(), "the request to reach the server")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=BOUND)
    assert process.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    session_id = stderr.split("continue it with --session ")[1].split(")")[0]
    kept = project.resume(session_id)
    assert kept.messages[0].role == "user" and kept.messages[0].text == "keep this prompt"


def test_ctrl_c_mid_answer_keeps_the_text_so_far_and_json_names_the_session_first(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
        for text in ("first piece,", " never sent")
    ]
    scripted_model.script([{"stream": chunks, "pause": 120}])  # the second chunk comes 120 s later
    process = start(project_dir, env, "run", "tell me", "--format", "json")
    assert process.stdout is not None
    events = []
    while not any(event["type"] == "text" for event in events):
        events.append(json.loads(process.stdout.readline()))
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(timeout=BOUND)
    assert process.returncode == 130 and "Traceback" not in stderr
    last = json.loads(rest.splitlines()[-1])
    assert last == {"type": "exit", "sessionID": events[0]["sessionID"], "code": 130, "reason": "interrupted"}
    session_id = events[0]["sessionID"]
    assert session_id.startswith("ses_") and f"--session {session_id}" in stderr
    assert all(event["sessionID"] == session_id for event in events)
    user, assistant = project.resume(session_id).messages
    assert user.text == "tell me"
    assert assistant.text == events[-1]["text"] == "first piece,"
    assert assistant.error == "MessageAbortedError"


def test_an_unknown_model_or_provider_is_a_usage_error_and_starts_no_session(
    make_project: Callable[..., Project],
    scripted_model: ScriptedModel,
    project_dir: Path,
    env: dict[str, str],
) -> None:
    config = local_config(scripted_model.url)
    config["provider"]["local"]["models"] = {"scripted-model": {"name": "Scripted"}}
    configure(project_dir, config)
    for model, line in [
        ("local/qwen4", "error: unknown model 'qwen4' for provider local"),
        ("nowhere/qwen4", "error: unknown provider 'nowhere'"),
    ]:
        done = opencode(project_dir, env, "run", "hi", "--model", model)
        assert done.returncode == 2 and line in done.stderr, done.stderr
        assert "--session" not in done.stderr and "Traceback" not in done.stderr
    assert scripted_model.requests() == []
    assert make_project().store.latest_session(str(project_dir)) is None


# -- OpenCode's flags -------------------------------------------------------------------------------------


def test_continue_title_and_format_json(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    scripted_model.script([{"text": "noted"}, {"text": "it was 42"}])
    first = opencode(project_dir, env, "run", "remember 42", "--title", "Numbers", "--format", "json")
    assert first.returncode == 0, first.stderr
    events = [json.loads(line) for line in first.stdout.splitlines()]
    session_id = events[0]["sessionID"]
    assert events[0]["type"] == "step" and events[-2] == {
        "type": "finish",
        "sessionID": session_id,
        "reason": "stop",
        "text": "noted",
    }
    assert events[-1] == {"type": "exit", "sessionID": session_id, "code": 0, "reason": "answered"}
    again = opencode(project_dir, env, "run", "what was it?", "-c", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[0])["sessionID"] == session_id
    assert user_messages(scripted_model.requests()[1]) == ["remember 42", "what was it?"]
    assert project.store.session(session_id)["title"] == "Numbers"
    bad = opencode(project_dir, env, "run", "hi", "--format", "yaml")
    assert bad.returncode == 2 and "--format is default or json" in bad.stderr


def test_continue_with_no_session_is_a_usage_error(
    project: Project, project_dir: Path, env: dict[str, str]
) -> None:
    done = opencode(project_dir, env, "run", "hi", "--continue")
    assert done.returncode == 2 and "no session to continue" in done.stderr


def test_files_are_read_into_the_prompt_text_inline_and_images_attached(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    (project_dir / "dot.png").write_bytes(PNG)
    scripted_model.script([{"text": "a dot and two lines"}])
    done = opencode(project_dir, env, "run", "what are these?", "-f", "notes.txt", "--file", "dot.png")
    assert done.returncode == 0, done.stderr
    [content] = user_messages(scripted_model.requests()[0])
    text, image = content
    notes = json.dumps({"filePath": str((project_dir / "notes.txt").resolve())}, separators=(",", ":"))
    png = json.dumps({"filePath": str((project_dir / "dot.png").resolve())}, separators=(",", ":"))
    assert text["type"] == "text" and text["text"].startswith("what are these?\n\n")
    assert f"Called the Read tool with the following input: {notes}" in text["text"]
    assert "1: one\n2: two" in text["text"]
    assert f"Called the Read tool with the following input: {png}" in text["text"]
    assert image == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }
    missing = opencode(project_dir, env, "run", "hi", "-f", "nope.txt")
    assert missing.returncode == 2 and "no such file: nope.txt" in missing.stderr


def test_a_usage_error_before_the_session_still_ends_the_json_stream_with_exit(
    project: Project, project_dir: Path, env: dict[str, str]
) -> None:
    for args in (["-f", "nothere.png"], ["--continue"], ["--agent", "nobody"]):
        done = opencode(project_dir, env, "run", "hi", *args, "--format", "json")
        assert done.returncode == 2, done.stderr
        assert [json.loads(line) for line in done.stdout.splitlines()] == [
            {"type": "exit", "sessionID": None, "code": 2, "reason": "usage"}
        ], args


# -- exit codes -------------------------------------------------------------------------------------------


def test_a_run_stopped_at_a_refused_ask_exits_3_and_says_so_last(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    (project_dir / ".env").write_text("SECRET=1\n")  # reading .env asks; with no terminal it is refused
    refused = [{"tool_calls": [call("call_1", "read", filePath=".env")]}]
    scripted_model.script(refused * 2)
    done = opencode(project_dir, env, "run", "read the env")
    assert done.returncode == 3, done.stderr
    assert "a permission was rejected, so the run stopped there (exit 3)" in done.stderr
    as_json = opencode(project_dir, env, "run", "read the env", "--format", "json")
    assert as_json.returncode == 3, as_json.stderr
    *_, finish, last = (json.loads(line) for line in as_json.stdout.splitlines())
    assert finish["type"] == "finish" and finish["reason"] == "rejected"
    assert last == {"type": "exit", "sessionID": finish["sessionID"], "code": 3, "reason": "rejected"}
    assert len(scripted_model.requests()) == 2  # the model was not asked again after either refusal


def test_a_failed_run_ends_the_json_stream_with_exit_1(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    scripted_model.script([{"status": 401, "body": {"error": {"message": "bad key"}}}])
    done = opencode(project_dir, env, "run", "hi", "--format", "json")
    assert done.returncode == 1, done.stderr
    *_, error, last = (json.loads(line) for line in done.stdout.splitlines())
    assert error["type"] == "error" and "401" in error["message"]
    assert last == {"type": "exit", "sessionID": error["sessionID"], "code": 1, "reason": "error"}


# -- the sessions a run keeps -----------------------------------------------------------------------------


def test_session_commands_see_what_run_kept_and_continue_uses(
    project: Project, scripted_model: ScriptedModel, project_dir: Path, env: dict[str, str]
) -> None:
    reading = {"tool_calls": [call("call_1", "read", filePath="notes.txt")]}
    scripted_model.script([reading, {"text": "two lines"}, {"text": "ok"}])
    assert opencode(project_dir, env, "run", "count the lines", "--title", "Counting").returncode == 0
    listed = opencode(project_dir, env, "session", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["sessions"]
    assert (row["title"], row["agent"], row["model"], row["messages"]) == (
        "Counting",
        "build",
        "local/scripted-model",
        3,
    )
    shown = opencode(project_dir, env, "session", "show", row["id"])
    assert shown.returncode == 0, shown.stderr
    assert "  count the lines" in shown.stdout.splitlines()
    assert "  ✓ read completed  notes.txt" in shown.stdout.splitlines()
    assert "  two lines" in shown.stdout.splitlines()
    again = opencode(project_dir, env, "run", "and now?", "-c", "--json")
    assert json.loads(again.stdout.splitlines()[0])["sessionID"] == row["id"]
    exported = json.loads(opencode(project_dir, env, "session", "export", row["id"]).stdout)
    assert len(exported["messages"]) == 5
    assert opencode(project_dir, env, "session", "delete", row["id"]).returncode == 0
    assert json.loads(opencode(project_dir, env, "session", "list", "--json").stdout) == {"sessions": []}
    gone = opencode(project_dir, env, "run", "hi", "-c")
    assert gone.returncode == 2 and "no session to continue" in gone.stderr
