"""The demo tools, run through a real opencode session with the ``opencode_cli.testing`` fixtures."""

import base64
import hashlib
import struct
import zlib

import pytest

from opencode_cli import InvalidArgumentsError, ToolError


def test_the_plugin_registers_four_tools(opencode_project):
    tools = {definition.id: definition for definition in opencode_project.tools()}
    for tool_id in ("demo_word_count", "demo_checksum", "demo_swatch", "demo_steps"):
        assert tools[tool_id].entry.source.kind == "plugin"
        assert tools[tool_id].entry.source.name == "opencode_demo_tools"
    assert tools["demo_swatch"].description.startswith("Make a small square PNG image")


def test_word_count_is_a_sync_tool(run_tool):
    result = run_tool("demo_word_count", text="the cat and the hat\nthe end", top=2)
    assert result.title == "7 words"
    assert result.output.splitlines() == ["2 lines, 7 words, 27 characters", "    3  the", "    1  cat"]
    assert result.metadata["common"] == {"the": 3, "cat": 1}
    assert result.metadata["truncated"] is False  # the wrap truncates (and says so) after every tool


def test_invalid_arguments_get_the_model_facing_template(run_tool):
    with pytest.raises(
        InvalidArgumentsError, match=r"demo_word_count tool was called with invalid arguments"
    ):
        run_tool("demo_word_count", text="x", top=500)


def test_checksum_is_an_async_tool_that_asks_to_read(run_tool, opencode_tmp_project, permission_replies):
    opencode_tmp_project.write("data.bin", "hello\n")
    result = run_tool("demo_checksum", path="data.bin")
    digest = hashlib.sha256(b"hello\n").hexdigest()
    assert result.output == f"sha256:{digest}  data.bin"
    assert permission_replies.requests == []  # the build agent allows reading ordinary files

    opencode_tmp_project.write(".env", "TOKEN=1\n")
    permission_replies.extend(["once", ("reject", "do not read secrets")])
    assert run_tool("demo_checksum", path=".env", algorithm="md5").output.startswith("md5:")
    with pytest.raises(ToolError, match="with the following feedback: do not read secrets"):
        run_tool("demo_checksum", path=".env")
    assert permission_replies.permissions == ["read", "read"]
    assert permission_replies.requests[0].patterns == [".env"]


def test_checksum_outside_the_project_asks_for_the_directory(run_tool, tmp_path, permission_replies):
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("notes")
    permission_replies.update({"external_directory": "once"})
    assert run_tool("demo_checksum", path=str(outside)).title == str(outside)
    assert permission_replies.permissions == ["external_directory"]
    assert permission_replies.requests[0].patterns == [f"{outside.parent.as_posix()}/*"]


def test_checksum_of_a_missing_file_is_a_tool_error(run_tool):
    part = run_tool.dispatch("demo_checksum", {"path": "missing.txt"})
    assert part.status == "error"
    assert part.text == "No file at missing.txt: give the path of an existing file."


def test_swatch_returns_a_png_attachment(run_tool):
    result = run_tool("demo_swatch", color="#FF8800", size=4)
    [attachment] = result.attachments
    assert attachment.mime == "image/png" and attachment.filename == "swatch-ff8800.png"
    assert attachment.id.startswith("prt_")  # the session gives every attachment a part id
    data = base64.b64decode(attachment.url.removeprefix("data:image/png;base64,"))
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (4, 4)
    pixels = zlib.decompress(data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8])
    assert pixels == (b"\x00" + b"\xff\x88\x00" * 4) * 4


def test_swatch_rejects_a_colour_that_is_not_hex(run_tool):
    part = run_tool.dispatch("demo_swatch", '{"color": "orange"}')
    assert part.status == "error" and "String should match pattern" in part.text


def test_steps_reports_progress_through_ctx_metadata(run_tool):
    result = run_tool("demo_steps", steps=3, delay=0)
    assert result.output == "Finished 3 of 3 steps."
    assert [report.title for report in run_tool.progress] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    assert run_tool.progress[-1].metadata == {"step": 3, "steps": 3}


def test_the_notes_toolbox_shares_one_database(run_tool, opencode_project, opencode_tmp_project):
    assert run_tool("demo_notes_add", text="buy oat milk").output == "Kept note 1."
    assert run_tool("demo_notes_add", text="call the plumber").output == "Kept note 2."
    assert run_tool("demo_notes_find", words="OAT").output == "1: buy oat milk"
    assert run_tool("demo_notes_count").output == "2 notes"
    assert (opencode_tmp_project.data_dir / "demo-notes.sqlite").is_file()
    [status] = [s for s in opencode_project.services.statuses() if s.name.startswith("toolbox DemoNotes")]
    assert status.state == "running"


def test_the_notes_database_is_closed_with_the_project(run_tool, opencode_project):
    run_tool("demo_notes_add", text="one")
    box = opencode_project.registry.get("demo_notes_add").tool.box
    assert box.db is not None
    opencode_project.close()
    assert box.db is None  # the teardown ran
