"""``wire.result``: a dispatched call's part in each provider's tool-result shape."""

from __future__ import annotations

import pytest

from opencode_cli import Attachment, ToolPart, WireError, tool_result

PNG = "data:image/png;base64,iVBORw0KGgo="
PDF = "data:application/pdf;base64,JVBERi0xLjQ="


def completed(**changes: object) -> ToolPart:
    part = ToolPart("toolu_7", "read", {"filePath": "a.png"}, "completed", output="Image read successfully")
    for key, value in changes.items():
        setattr(part, key, value)
    return part


def failed() -> ToolPart:
    return ToolPart("call_3", "read", {}, "error", error="File not found: /p/a.txt", requested="Read")


def test_openai_is_a_tool_message_with_the_text() -> None:
    assert tool_result(completed(), "openai") == {
        "role": "tool",
        "tool_call_id": "toolu_7",
        "content": "Image read successfully",
    }
    assert tool_result(failed(), "openai")["content"] == "File not found: /p/a.txt"


def test_anthropic_is_a_tool_result_block_with_attachments_as_blocks() -> None:
    part = completed(
        attachments=[
            Attachment("image/png", PNG),
            Attachment("application/pdf", PDF),
            Attachment("text/plain", "data:text/plain;base64,aGk="),
        ]
    )
    assert tool_result(part, "anthropic") == {
        "type": "tool_result",
        "tool_use_id": "toolu_7",
        "content": [
            {"type": "text", "text": "Image read successfully"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            },
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="},
            },
        ],
        "is_error": False,
    }


def test_anthropic_plain_and_failed_results() -> None:
    assert tool_result(completed(), "anthropic")["content"] == "Image read successfully"
    block = tool_result(failed(), "anthropic")
    assert block["is_error"] is True and block["content"] == "File not found: /p/a.txt"


def test_gemini_names_the_call_as_the_model_did() -> None:
    assert tool_result(completed(), "gemini") == {
        "functionResponse": {"name": "read", "response": {"output": "Image read successfully"}}
    }
    assert tool_result(failed(), "gemini") == {
        "functionResponse": {"name": "Read", "response": {"error": "File not found: /p/a.txt"}}
    }


def test_unknown_format() -> None:
    with pytest.raises(WireError, match="unknown format 'bedrock'"):
        tool_result(completed(), "bedrock")
