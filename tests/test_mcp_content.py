"""MCP tool results and resource contents as the model gets them (core spec §6.1)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import mcp.types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.errors import ToolError
from opencode_cli.mcp.content import (
    DEFAULT_MIME,
    MAX_BLOB,
    SUPPORTED_ATTACHMENT_MIMES,
    TOOL_ERROR,
    blob_size,
    error_text,
    format_size,
    js_stringify,
    raw_content,
    resource_pieces,
    tool_result,
)
from opencode_cli.results import Attachment, ToolResult

PNG = base64.b64encode(b"\x89PNG fake image").decode()
MIB = 1024 * 1024


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def oversized_blob() -> str:
    """Base64 text that decodes to one byte more than 10 MiB."""
    return "A" * (4 * (MAX_BLOB // 3 + 1))


# -- constants and sizes ---------------------------------------------------------------------------------


def test_constants() -> None:
    assert SUPPORTED_ATTACHMENT_MIMES == (
        "application/pdf",
        "image/gif",
        "image/jpeg",
        "image/png",
        "image/webp",
    )
    assert MAX_BLOB == 10 * 1024 * 1024
    assert DEFAULT_MIME == "application/octet-stream"


@given(st.binary(max_size=600))
def test_blob_size_is_the_decoded_length(data: bytes) -> None:
    encoded = base64.b64encode(data)
    assert blob_size(encoded.decode()) == len(data)
    assert blob_size(encoded) == len(data)


@given(st.binary(max_size=300), st.data())
def test_blob_size_ignores_whitespace_anywhere(data: bytes, draw: st.DataObject) -> None:
    encoded = list(base64.b64encode(data).decode())
    spaces = st.sampled_from([" ", "\n", "\r\n", "\t", "\v", "\f", "\u00a0", "\u2028", "\ufeff", "\u3000"])
    for _ in range(draw.draw(st.integers(0, 8))):
        position = draw.draw(st.integers(0, len(encoded)))
        encoded.insert(position, draw.draw(spaces))
    assert blob_size("".join(encoded)) == len(data)


def test_blob_size_edge_cases() -> None:
    assert blob_size("") == 0
    assert blob_size("=") == 0  # floor(3/4) - 1 would be negative
    assert blob_size("YWJjZA==") == 4
    assert blob_size("YWJjZGU=") == 5
    assert blob_size("YWJj\nZGVm\n") == 6
    # characters Python counts as whitespace but JavaScript's \s does not
    assert blob_size("YWJj\x1c") == 3


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1 KB"),
        (1025, "2 KB"),
        (2048, "2 KB"),
        (MIB - 1, "1024 KB"),
        (MIB, "1 MB"),
        (MIB + 1, "2 MB"),
        (10 * MIB, "10 MB"),
        (10 * MIB + 1, "11 MB"),
    ],
)
def test_format_size_boundaries(size: int, text: str) -> None:
    assert format_size(size) == text


# -- resource contents -----------------------------------------------------------------------------------


def test_text_resource_piece() -> None:
    attachments: list[Attachment] = []
    contents = [
        types.TextResourceContents(uri="docs://guide", mime_type="text/markdown", text="# Guide\nRead me."),
        types.TextResourceContents(uri="docs://plain", text=""),
    ]
    assert resource_pieces(contents, attachments) == [
        "Resource: docs://guide\nMIME: text/markdown\n# Guide\nRead me.",
        "Resource: docs://plain\nMIME: application/octet-stream\n",
    ]
    assert attachments == []


def test_supported_blob_is_attached() -> None:
    attachments: list[Attachment] = []
    contents = [types.BlobResourceContents(uri="img://logo", mime_type="image/png", blob=PNG)]
    assert resource_pieces(contents, attachments) == [
        "[Binary MCP resource attached: img://logo (image/png)]"
    ]
    assert attachments == [
        Attachment(mime="image/png", url=f"data:image/png;base64,{PNG}", filename="img://logo")
    ]


def test_attachment_without_filename() -> None:
    attachments: list[Attachment] = []
    contents = [types.BlobResourceContents(uri="doc://a", mime_type="application/pdf", blob="JVBERi0=")]
    resource_pieces(contents, attachments, filename_is_uri=False)
    assert attachments == [Attachment(mime="application/pdf", url="data:application/pdf;base64,JVBERi0=")]


def test_unsupported_blob_is_omitted() -> None:
    attachments: list[Attachment] = []
    contents = [
        types.BlobResourceContents(uri="bin://zip", mime_type="application/zip", blob="YWJjZA=="),
        types.BlobResourceContents(uri="bin://raw", blob=base64.b64encode(b"x" * 2000).decode()),
        types.BlobResourceContents(uri="audio://a", mime_type="audio/wav", blob=oversized_blob()),
    ]
    assert resource_pieces(contents, attachments) == [
        "[Binary MCP resource omitted: bin://zip (application/zip, 4 B) is not a supported attachment type]",
        "[Binary MCP resource omitted: bin://raw (application/octet-stream, 2 KB) "
        "is not a supported attachment type]",
        "[Binary MCP resource omitted: audio://a (audio/wav, 11 MB) is not a supported attachment type]",
    ]
    assert attachments == []


def test_oversized_blob_is_omitted() -> None:
    attachments: list[Attachment] = []
    contents = [types.BlobResourceContents(uri="img://huge", mime_type="image/jpeg", blob=oversized_blob())]
    assert resource_pieces(contents, attachments) == [
        "[Binary MCP resource omitted: img://huge (image/jpeg, 11 MB) exceeds 10 MB]"
    ]
    assert attachments == []


def test_blob_of_exactly_ten_mib_is_attached() -> None:
    blob = base64.b64encode(b"\0" * MAX_BLOB).decode()
    attachments: list[Attachment] = []
    contents = [types.BlobResourceContents(uri="img://edge", mime_type="image/webp", blob=blob)]
    assert resource_pieces(contents, attachments) == [
        "[Binary MCP resource attached: img://edge (image/webp)]"
    ]
    assert len(attachments) == 1


def test_content_without_text_or_blob_and_wire_forms() -> None:
    attachments: list[Attachment] = []
    contents = [
        {"uri": "x://nothing"},
        {"mimeType": "text/plain", "text": "no uri"},
        {"uri": "x://b", "mimeType": "image/gif", "blob": "R0lG"},
        "not an object",
        None,
    ]
    assert resource_pieces(contents, attachments, uri="x://asked") == [
        "[MCP resource content without text or blob: x://nothing]",
        "Resource: x://asked\nMIME: text/plain\nno uri",
        "[Binary MCP resource attached: x://b (image/gif)]",
    ]
    assert attachments == [Attachment(mime="image/gif", url="data:image/gif;base64,R0lG", filename="x://b")]


# -- tool results ----------------------------------------------------------------------------------------


def test_error_result_raises_its_non_blank_texts() -> None:
    result = types.CallToolResult(
        content=[
            text("first problem"),
            text("   "),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            text("\u3000\ufeff\n"),
            text("  second problem  "),
        ],
        is_error=True,
    )
    with pytest.raises(ToolError) as raised:
        tool_result(result)
    assert str(raised.value) == "first problem\n\n  second problem  "
    assert error_text(result) == "first problem\n\n  second problem  "


@pytest.mark.parametrize(
    "content",
    [[], [text("")], [text(" \n\t")], [types.ImageContent(type="image", data=PNG, mime_type="image/png")]],
)
def test_error_result_without_text(content: list[object]) -> None:
    result = types.CallToolResult(content=content, is_error=True, structured_content={"a": 1})
    with pytest.raises(ToolError) as raised:
        tool_result(result)
    assert str(raised.value) == TOOL_ERROR == "MCP tool returned an error"


def test_text_and_image_parts() -> None:
    result = types.CallToolResult(
        content=[
            text("one"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            text(""),
            text("two"),
        ]
    )
    mapped = tool_result(result)
    assert mapped == ToolResult(
        output="one\n\n\n\ntwo",
        title="",
        metadata={},
        attachments=[Attachment(mime="image/png", url=f"data:image/png;base64,{PNG}")],
    )


def test_structured_content_replaces_empty_content() -> None:
    structured = {"temp": 20.0, "city": "Zürich", "tags": ["a", "b"], "ok": True, "none": None}
    result = types.CallToolResult(content=[], structured_content=structured)
    expected = '{"temp":20,"city":"Zürich","tags":["a","b"],"ok":true,"none":null}'
    assert tool_result(result).output == expected
    assert raw_content(result) == [{"type": "text", "text": expected}]


def test_structured_content_beside_content_is_not_used() -> None:
    result = types.CallToolResult(content=[text("shown")], structured_content={"hidden": 1})
    assert tool_result(result).output == "shown"
    assert raw_content(result) == [{"type": "text", "text": "shown"}]


def test_no_content_no_structured_content() -> None:
    assert tool_result(types.CallToolResult(content=[])) == ToolResult()


def test_embedded_resources() -> None:
    result = types.CallToolResult(
        content=[
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="docs://a", mime_type="text/plain", text="embedded text"
                ),
            ),
            types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri="docs://e", text="")
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="img://logo", mime_type="image/png", blob=PNG),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="bin://x", blob="YWJjZA=="),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="img://big", mime_type="image/png", blob=oversized_blob()
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="img://empty", mime_type="image/png", blob=""),
            ),
        ]
    )
    mapped = tool_result(result)
    assert mapped.output == "\n\n".join(
        [
            "embedded text",
            "[Binary MCP resource omitted: bin://x (application/octet-stream, 4 B) "
            "is not a supported attachment type]",
            "[Binary MCP resource omitted: img://big (image/png, 11 MB) exceeds 10 MB]",
        ]
    )
    assert mapped.attachments == [
        Attachment(mime="image/png", url=f"data:image/png;base64,{PNG}", filename="img://logo")
    ]


def test_audio_and_resource_links_are_dropped() -> None:
    result = types.CallToolResult(
        content=[
            text("kept"),
            types.AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", name="readme", uri="file:///readme.md"),
        ]
    )
    mapped = tool_result(result)
    assert mapped.output == "kept"
    assert mapped.attachments == []
    assert [item["type"] for item in raw_content(result)] == ["text", "audio", "resource_link"]


def test_raw_content_is_camel_case_json() -> None:
    result = types.CallToolResult(
        content=[
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="a://b", mime_type="image/gif", blob="R0lG"),
            ),
        ]
    )
    assert raw_content(result) == [
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "a://b", "mimeType": "image/gif", "blob": "R0lG"}},
    ]
    json.dumps(raw_content(result))


def test_wire_form_results() -> None:
    result = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "R0lG", "mimeType": "image/gif"},
            {"type": "resource", "resource": {"uri": "r://1", "blob": "JVBE", "mimeType": "application/pdf"}},
        ]
    }
    mapped = tool_result(result)
    assert mapped.output == "hello"
    assert mapped.attachments == [
        Attachment(mime="image/gif", url="data:image/gif;base64,R0lG"),
        Attachment(mime="application/pdf", url="data:application/pdf;base64,JVBE", filename="r://1"),
    ]
    with pytest.raises(ToolError, match=r"^bad$"):
        tool_result({"isError": True, "content": [{"type": "text", "text": "bad"}]})
    assert tool_result({"content": [], "structuredContent": {"n": 1.5}}).output == '{"n":1.5}'


# -- JSON as JavaScript writes it ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-2.5, "-2.5"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (1e-6, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.2345e25, "1.2345e+25"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (2**60, "1152921504606847000"),
        (12, "12"),
        (True, "true"),
        (None, "null"),
        ('a"b\\c\n\u001f', '"a\\"b\\\\c\\n\\u001f"'),
        ("\ud800", '"\\ud800"'),
    ],
)
def test_js_stringify_scalars(value: object, expected: str) -> None:
    assert js_stringify(value) == expected


def test_js_stringify_key_order_and_indent() -> None:
    assert js_stringify({"b": 1, "2": 2, "1": 3, "01": 4, "a": {}}) == '{"1":3,"2":2,"b":1,"01":4,"a":{}}'
    assert js_stringify({"a": [1, {"b": None}], "c": [], "d": {}}, indent=2) == (
        '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "c": [],\n  "d": {}\n}'
    )
    assert js_stringify({"x": "é"}, indent=2) == json.dumps({"x": "é"}, indent=2, ensure_ascii=False)


def test_modules_import_without_the_mcp_sdk() -> None:
    code = (
        "import sys, opencode_cli.mcp.content, opencode_cli.mcp.resources\n"
        "loaded = [m for m in ('mcp', 'mcp_types') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_served_error_naming_a_file_that_is_not_utf8_shows_u_fffd_as_glob_does() -> None:
    """One rule for text that is not valid Unicode, whoever carries it: a served failed call whose error
    names a file that is not UTF-8 shows U+FFFD for the byte, as the tools' own output does."""
    from opencode_cli.mcp.serve.content import result_for
    from opencode_cli.parts import ToolPart

    name = os.fsdecode(b"odd/bad-\xff.txt")
    part = ToolPart("call_1", "read", {}, "error", error=f"File not found: {name}")
    result = result_for(part)
    assert result.is_error and result.content[0].text == "File not found: odd/bad-\ufffd.txt"
