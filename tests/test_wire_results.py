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


# -- media: what a tool message cannot hold (issue 36, finding 10) -----------------------------------------


def test_openai_media_is_the_user_message_opencode_run_sends() -> None:
    from opencode_cli import tool_media
    from opencode_cli.models.base import FileContent, Message
    from opencode_cli.models.openai_format import to_openai

    image = completed(attachments=[Attachment("image/png", PNG)])
    document = completed(call_id="call_9", attachments=[Attachment("application/pdf", PDF, filename="a.pdf")])
    parts = [image, failed(), document]
    sent = to_openai(
        [
            Message(
                "tool",
                part.text,
                tool_call_id=part.call_id,
                files=[FileContent(a.mime, a.url, a.filename) for a in part.attachments],
            )
            for part in parts
        ]
    )
    library = [tool_result(part, "openai") for part in parts] + tool_media(parts, "openai")
    assert library == sent
    assert library[-1]["content"][0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert tool_media([failed()], "openai") == []


def test_gemini_media_is_inline_data_after_the_responses_and_anthropic_needs_none() -> None:
    from opencode_cli import tool_media

    parts = [completed(attachments=[Attachment("image/png", PNG), Attachment("application/pdf", PDF)])]
    assert tool_media(parts, "gemini") == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]
    assert tool_media(parts, "anthropic") == []
    with pytest.raises(WireError, match="unknown format 'bedrock'"):
        tool_media(parts, "bedrock")


# -- parse_calls: a reply that calls no tool -----------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        {"role": "assistant", "content": "All done."},
        {"role": "assistant", "content": "All done.", "tool_calls": None},
        {"role": "assistant", "content": [{"type": "text", "text": "All done."}]},
        {"role": "model", "parts": [{"text": "All done."}]},
        [{"type": "text", "text": "All done."}],
        [],
    ],
)
def test_parse_calls_of_a_reply_without_calls_is_empty(reply: object) -> None:
    from opencode_cli import parse_calls

    assert parse_calls(reply) == []


def test_parse_calls_skips_the_text_beside_the_calls() -> None:
    from opencode_cli import parse_calls

    anthropic = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {"filePath": "a"}},
        ],
    }
    gemini = {
        "role": "model",
        "parts": [{"text": "Reading."}, {"functionCall": {"name": "read", "args": {"filePath": "a"}}}],
    }
    assert [call.name for call in parse_calls(anthropic)] == ["read"]
    assert [call.name for call in parse_calls(gemini)] == ["read"]
    with pytest.raises(WireError, match="not a tool call"):
        parse_calls({"arguments": "{}"})
