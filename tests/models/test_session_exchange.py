"""Sessions that move between tools: `session import` of OpenCode's `opencode export` (continued by `opencode
run`), our export re-imported unchanged, `session export --opencode`, `session fork` and `run --fork`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _scripted import ScriptedModel, configure, local_config, opencode
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.transcript.exchange import ExportError, read_export

EXPORT = Path(__file__).parent / "exports" / "opencode-1.18.json"
SESSION = "ses_4f1a2b3c4ffeABCDEFGHIJKLMN"


@pytest.fixture
def project(project_dir: Path, scripted_model: ScriptedModel) -> Path:
    (project_dir / "notes.txt").write_text("NOTE-HERE\n")
    configure(project_dir, local_config(scripted_model.url))
    return project_dir


def contents(request: dict[str, Any]) -> list[tuple[str, str]]:
    """Each message of a request as (role, its text or its calls' names and arguments)."""
    found = []
    for message in request["body"]["messages"]:
        calls = message.get("tool_calls") or []
        text = message.get("content") or " ".join(c["function"]["arguments"] for c in calls)
        found.append((message["role"], str(text)))
    return found


def exported(project: Path, env: dict[str, str], session_id: str, *flags: str) -> dict[str, Any]:
    done = opencode(project, env, "session", "export", session_id, *flags)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_opencode_export_continues_in_run(
    project: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    done = opencode(project, env, "session", "import", str(EXPORT))
    assert done.returncode == 0, done.stderr
    assert SESSION in done.stdout
    scripted_model.script([{"text": "Nothing else."}])
    ran = opencode(project, env, "run", "And then?", "--continue")  # the import is this project's
    assert ran.returncode == 0, ran.stderr
    [request] = scripted_model.requests()
    sent = [item for item in contents(request) if item[0] != "system"]
    assert sent == [
        ("user", "What does notes.txt say?"),
        ("assistant", json.dumps({"filePath": "/home/someone/project/notes.txt"})),
        ("tool", "<file>\n00001| NOTE-FROM-OPENCODE\n</file>"),
        ("assistant", "It says NOTE-FROM-OPENCODE."),
        ("user", "And then?"),
    ]
    kept = exported(project, env, SESSION)
    assert kept["info"]["slug"] == "quiet-river"  # OpenCode's own keys are kept
    types = [part["type"] for part in kept["messages"][1]["parts"]]
    assert types == ["step-start", "reasoning", "tool", "step-finish"]  # and its kinds of part
    assert len(kept["messages"]) == 5


def test_our_export_imported_again_is_identical(
    project: Path, scripted_model: ScriptedModel, env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.script(
        [
            {
                "tool_calls": [
                    {"id": "c1", "name": "read", "arguments": json.dumps({"filePath": "notes.txt"})}
                ]
            },
            {"text": "It says NOTE-HERE."},
        ]
    )
    assert opencode(project, env, "run", "Read notes.txt", "--format", "json").returncode == 0
    [listed] = json.loads(opencode(project, env, "session", "list", "--json").stdout)["sessions"]
    before = exported(project, env, listed["id"])
    saved = tmp_path / "export.json"
    saved.write_text(json.dumps(before))
    assert opencode(project, env, "session", "delete", listed["id"]).returncode == 0
    done = opencode(project, env, "session", "import", str(saved))
    assert done.returncode == 0, done.stderr
    assert exported(project, env, listed["id"]) == before
    again = opencode(project, env, "session", "import", str(saved))
    assert again.returncode == 2 and "kept already" in again.stderr and "Traceback" not in again.stderr


def test_export_in_opencodes_shape_imports_back(
    project: Path, scripted_model: ScriptedModel, env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.script([{"text": "Hello."}])
    assert opencode(project, env, "run", "Say hello").returncode == 0
    [listed] = json.loads(opencode(project, env, "session", "list", "--json").stdout)["sessions"]
    ours = exported(project, env, listed["id"])
    theirs = exported(project, env, listed["id"], "--opencode")
    assert "children" not in theirs and theirs["info"]["projectID"] == "global"  # .git holds no commit
    [answer] = [m["info"] for m in theirs["messages"] if m["info"]["role"] == "assistant"]
    assert answer["mode"] == "build" and answer["tokens"]["cache"] == {"read": 0, "write": 0}
    assert [m["parts"] for m in theirs["messages"]] == [m["parts"] for m in ours["messages"]]
    elsewhere = {**env, "XDG_DATA_HOME": str(tmp_path / "other-data")}
    saved = tmp_path / "theirs.json"
    saved.write_text(json.dumps(theirs))
    assert opencode(project, elsewhere, "session", "import", str(saved)).returncode == 0
    assert exported(project, elsewhere, listed["id"], "--opencode") == theirs


def test_a_fork_is_a_copy_to_continue(
    project: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    scripted_model.script([{"text": "First answer."}, {"text": "Forked answer."}])
    assert opencode(project, env, "run", "First question", "--title", "Plan").returncode == 0
    [original] = json.loads(opencode(project, env, "session", "list", "--json").stdout)["sessions"]
    forked = opencode(project, env, "session", "fork", original["id"])
    assert forked.returncode == 0, forked.stderr
    copy_id = forked.stdout.strip()
    assert copy_id.startswith("ses_") and copy_id != original["id"]
    copy = exported(project, env, copy_id)
    assert copy["info"]["title"] == "Plan (fork)"
    source = exported(project, env, original["id"])
    assert [m["info"]["id"] for m in copy["messages"]].count(source["messages"][0]["info"]["id"]) == 0
    assert copy["messages"][1]["info"]["parentID"] == copy["messages"][0]["info"]["id"]
    texts = [[p.get("text") for p in m["parts"]] for m in copy["messages"]]
    assert texts == [[p.get("text") for p in m["parts"]] for m in source["messages"]]
    ran = opencode(project, env, "run", "Second question", "--session", original["id"], "--fork", "--json")
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    continued = {event["sessionID"] for event in events}
    assert len(continued) == 1 and continued.isdisjoint({original["id"], copy_id})
    sent = contents(scripted_model.requests()[-1])
    assert ("user", "First question") in sent and ("assistant", "First answer.") in sent
    assert len(exported(project, env, original["id"])["messages"]) == 2  # the original is untouched


def test_bad_exports_are_refused_with_their_reason(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    cases = {
        "not json {": "not JSON",
        "[]": "not a session export",
        json.dumps({"info": {"id": "ses_x", "time": {"created": 1}}}): "info.time needs",
        json.dumps({"info": {"id": "ses_x", "time": {"created": 1, "updated": 1}}, "messages": [{}]}): "msg_",
    }
    for number, (text, reason) in enumerate(cases.items()):
        path = tmp_path / f"bad{number}.json"
        path.write_text(text)
        done = opencode(project, env, "session", "import", str(path))
        assert done.returncode == 2 and reason in done.stderr and "Traceback" not in done.stderr, done.stderr
    missing = opencode(project, env, "run", "x", "--session", "ses_nothere", "--fork")
    assert missing.returncode == 2 and "no session" in missing.stderr


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(
    st.one_of(
        JSON,
        st.fixed_dictionaries({"info": JSON, "messages": JSON}),
        st.fixed_dictionaries(
            {
                "info": st.fixed_dictionaries(
                    {"id": st.just("ses_a"), "time": st.just({"created": 1, "updated": 2})}
                ),
                "messages": st.lists(
                    st.fixed_dictionaries({"info": JSON, "parts": JSON})
                    | st.fixed_dictionaries(
                        {
                            "info": st.fixed_dictionaries(
                                {
                                    "id": st.just("msg_a"),
                                    "role": st.sampled_from(["user", "assistant", "x"]),
                                    "time": st.just({"created": 1}),
                                }
                            ),
                            "parts": st.lists(JSON | st.just({"id": "prt_a", "type": "text"}), max_size=3),
                        }
                    ),
                    max_size=3,
                ),
            }
        ),
    )
)
def test_any_json_is_read_as_an_export_or_refused_with_a_reason(data: Any) -> None:
    try:
        info, messages = read_export(json.dumps(data), "f")
    except ExportError as error:
        assert str(error).startswith("f")
        return
    assert info["id"].startswith("ses_")
    assert all(part["messageID"] == m["info"]["id"] for m in messages for part in m["parts"])
