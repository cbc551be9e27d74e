"""The audit plugin's three hooks, run through a real opencode session with ``opencode_cli.testing``."""

import json

import pytest

from opencode_cli import ToolError, hookimpl


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_description_is_marked(run_tool, opencode_project):
    assert run_tool.definition("read").description.endswith("\n\n(audited)")
    # every tool is marked (task's list of subagents is appended after the hooks, as OpenCode does)
    assert all("\n\n(audited)" in definition.description for definition in opencode_project.tools())
    # asking again does not mark twice
    assert run_tool.definition("read").description.count("(audited)") == 1


def test_finished_calls_are_logged(run_tool, opencode_tmp_project, audit_log):
    opencode_tmp_project.write("notes.txt", "one\ntwo\n")
    result = run_tool("read", filePath="notes.txt")
    run_tool("glob", pattern="*.txt")
    first, second = lines(audit_log)
    assert first["status"] == "completed" and first["tool"] == "read"
    assert first["args"] == {"filePath": "notes.txt"}
    assert first["session"] == run_tool.session.id and first["call"].startswith("call_")
    assert first["title"] == result.title and first["outputBytes"] == len(result.output.encode())
    assert first["time"].endswith("Z") and first["attachments"] == 0
    assert second["tool"] == "glob"


def test_the_log_defaults_to_the_data_directory(run_tool, opencode_tmp_project):
    run_tool("glob", pattern="*")
    [entry] = lines(opencode_tmp_project.data_dir / "audit.jsonl")
    assert entry["tool"] == "glob"


def test_a_matching_call_is_blocked_with_a_clear_message(
    run_tool, opencode_tmp_project, audit_log, monkeypatch
):
    opencode_tmp_project.write("secret.txt", "hunter2\n")
    monkeypatch.setenv("OPENCODE_AUDIT_BLOCK", r'"filePath": "[^"]*secret')
    with pytest.raises(ToolError, match=r"blocked this read call: its arguments match the pattern"):
        run_tool("read", filePath="secret.txt")
    part = run_tool.dispatch("read", {"filePath": "secret.txt"})  # what the model would see
    assert part.status == "error" and "OPENCODE_AUDIT_BLOCK" in part.text and "hunter2" not in part.text
    assert run_tool("read", filePath=".git").title  # other calls go through
    blocked, again, allowed = lines(audit_log)
    assert blocked["status"] == again["status"] == "blocked" and "Do not retry" in blocked["error"]
    assert allowed["status"] == "completed"


def test_an_invalid_pattern_blocks_everything(run_tool, audit_log, monkeypatch):
    monkeypatch.setenv("OPENCODE_AUDIT_BLOCK", "(unclosed")
    with pytest.raises(
        ToolError, match=r"OPENCODE_AUDIT_BLOCK='\(unclosed' is not a valid regular expression"
    ):
        run_tool("glob", pattern="*")


class Rewriter:
    """Another plugin that changes the arguments: the audit judges (and logs) what the tool will get."""

    @hookimpl
    def tool_execute_before(self, tool, args):
        if tool == "read":
            args["filePath"] = "secret.txt"


def test_the_block_sees_arguments_changed_by_other_plugins(
    make_opencode_project, permission_replies, audit_log, monkeypatch
):
    import opencode_audit

    from opencode_cli.testing import ToolRunner

    monkeypatch.setenv("OPENCODE_AUDIT_BLOCK", "secret")
    # registered after the audit plugin, the rewriter would run first anyway; trylast makes sure of it
    runner = ToolRunner(make_opencode_project(opencode_audit, Rewriter()), permission_replies)
    with pytest.raises(ToolError, match="blocked this read call"):
        runner("read", filePath="README.md")
    assert lines(audit_log)[0]["args"] == {"filePath": "secret.txt"}


def test_an_unwritable_log_fails_the_call(run_tool, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("OPENCODE_AUDIT_LOG", str(tmp_path / "file" / "audit.jsonl"))
    with pytest.raises(ToolError, match="could not write its log"):
        run_tool("glob", pattern="*")
