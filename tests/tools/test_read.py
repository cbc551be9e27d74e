"""The built-in ``read`` tool (builtin-tools spec §3; test list "read.test.ts" in §17)."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness, Recorder
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import Project
from opencode_cli import collate as _collate
from opencode_cli.context import AbortSignal
from opencode_cli.errors import AbortedError, InvalidArgumentsError, RejectedError, ToolError
from opencode_cli.tools import _instructions, _text_window
from opencode_cli.tools import read as read_module

# A real 1x1 RGB PNG (one red pixel), CRCs included.
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c4944415478da63f8cfc0000003010100f70341430000000049454e44ae426082"
)
JPEG_MAGIC = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"


# -- helpers -------------------------------------------------------------------------------------------


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "read")


@pytest.fixture
def big_file(root: Path) -> Iterator[Path]:
    """A path for a large generated file, deleted after the test (pytest keeps old tmp dirs)."""
    path = root / "huge.log"
    yield path
    path.unlink(missing_ok=True)


def read(project: Project, args: dict[str, Any], prompt: Recorder | None = None, **options: Any) -> Any:
    return project.run_tool("read", args, prompt=prompt or Recorder(), **options)


def png(width: int, height: int, seed: int = 0) -> bytes:
    """A valid RGB PNG filled with noise (so it does not compress)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rng = random.Random(seed)
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class CountingFile:
    """Wraps a binary file and counts the bytes read through it."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self.inner = inner
        self.counter = counter

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.counter[0] += len(data)
        return data

    def seek(self, *args: Any) -> int:
        return self.inner.seek(*args)

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.inner.close()


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the bytes the read tool pulls from files it opens."""
    counter = [0]

    def counting_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return CountingFile(open(path, mode, *args, **kwargs), counter)

    monkeypatch.setattr(read_module, "open", counting_open, raising=False)
    return counter


# -- read.test.ts: paths and permissions ---------------------------------------------------------------


def test_reads_absolute_path_inside_project(project: Project, root: Path) -> None:
    (root / "test.txt").write_text("hello world")
    result = read(project, {"filePath": str(root / "test.txt")})
    assert "hello world" in result.output
    assert result.title == "test.txt"


def test_reads_file_in_nested_subdirectory(project: Project, root: Path) -> None:
    nested = root / "sub" / "dir"
    nested.mkdir(parents=True)
    (nested / "nested.txt").write_text("nested content")
    result = read(project, {"filePath": str(nested / "nested.txt")})
    assert "nested content" in result.output
    assert result.title == "sub/dir/nested.txt"


def test_outside_file_asks_external_directory(project: Project, outer: Path) -> None:
    (outer / "external.txt").write_text("external content")
    prompt = Recorder()
    result = read(project, {"filePath": str(outer / "external.txt")}, prompt)
    asks = prompt.asked("external_directory")
    assert len(asks) == 1
    assert f"{outer}/*" in asks[0].patterns
    assert asks[0].always == [f"{outer}/*"]
    assert asks[0].metadata == {"filepath": str(outer / "external.txt"), "parentDir": str(outer)}
    assert "external content" in result.output


def test_outside_file_rejected(project: Project, outer: Path) -> None:
    (outer / "external.txt").write_text("external content")
    with pytest.raises(RejectedError) as caught:
        read(project, {"filePath": str(outer / "external.txt")}, Recorder("reject"))
    assert str(caught.value) == "The user rejected permission to use this specific tool call."


def test_read_pattern_is_worktree_relative(harness: Harness, root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "secret.ts").write_text("const secret = 1")
    harness.run({"filePath": str(root / "src" / "secret.ts")})
    asks = harness.asked("read")
    assert len(asks) == 1
    assert asks[0].patterns == ["src/secret.ts"]
    assert asks[0].always == ["*"]
    assert asks[0].metadata == {}


def test_read_pattern_relative_to_worktree_not_subdirectory(make_project: Any, project_dir: Path) -> None:
    sub = project_dir / "packages" / "app"
    sub.mkdir(parents=True)
    (sub / "main.py").write_text("print(1)")
    harness = Harness(make_project(sub), "read")
    result = harness.run({"filePath": "main.py"})
    assert harness.asked("read")[0].patterns == ["packages/app/main.py"]
    assert result.title == "packages/app/main.py"


def test_outside_directory_pattern_is_the_directory_itself(project: Project, outer: Path) -> None:
    external = outer / "external"
    external.mkdir()
    (external / "a.txt").write_text("a")
    prompt = Recorder()
    result = read(project, {"filePath": str(external)}, prompt)
    asks = prompt.asked("external_directory")
    assert [a.patterns for a in asks] == [[f"{external}/*"]]
    assert "<type>directory</type>" in result.output


def test_missing_relative_outside_file_asks_then_fails(project: Project, tmp_path: Path) -> None:
    prompt = Recorder()
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": "../outside.txt"}, prompt)
    asks = prompt.asked("external_directory")
    assert [a.patterns for a in asks] == [[f"{tmp_path}/*"]]
    assert "File not found" in str(caught.value)


def test_inside_file_does_not_ask_external_directory(harness: Harness, root: Path) -> None:
    (root / "internal.txt").write_text("internal content")
    harness.run({"filePath": str(root / "internal.txt")})
    assert harness.asked("external_directory") == []
    assert len(harness.asked("read")) == 1


@pytest.mark.parametrize("agent", ["build", "plan"])
@pytest.mark.parametrize(
    ("name", "asks"),
    [
        (".env", True),
        (".env.local", True),
        (".env.production", True),
        (".env.development.local", True),
        (".env.example", False),
        (".envrc", False),
        ("environment.ts", False),
    ],
)
def test_env_files_need_approval(project: Project, root: Path, agent: str, name: str, asks: bool) -> None:
    (root / name).write_text("KEY=value")
    prompt = Recorder()
    result = read(project, {"filePath": str(root / name)}, prompt, agent=agent)
    assert [r.patterns for r in prompt.asked("read")] == ([[name]] if asks else [])
    assert "KEY=value" in result.output


def test_read_is_asked_even_when_file_is_missing(harness: Harness, root: Path) -> None:
    with pytest.raises(ToolError):
        harness.run({"filePath": str(root / "nope.txt")})
    assert [r.patterns for r in harness.asked("read")] == [["nope.txt"]]


def test_rejected_env_read_fails_before_touching_file(project: Project, root: Path) -> None:
    (root / ".env").write_text("SECRET=1")
    with pytest.raises(RejectedError):
        read(project, {"filePath": ".env"}, Recorder("reject"))


def test_symlink_to_outside_asks_for_real_target_directory(project: Project, root: Path, outer: Path) -> None:
    target_dir = outer / "real"
    target_dir.mkdir()
    (target_dir / "data.txt").write_text("linked content")
    (root / "link.txt").symlink_to(target_dir / "data.txt")
    prompt = Recorder()
    result = read(project, {"filePath": str(root / "link.txt")}, prompt)
    asks = prompt.asked("external_directory")
    assert [a.patterns for a in asks] == [[f"{target_dir}/*"]]
    assert asks[0].metadata["filepath"] == str(target_dir / "data.txt")
    assert "linked content" in result.output
    assert f"<path>{root / 'link.txt'}</path>" in result.output


def test_symlinked_directory_to_outside_asks(project: Project, root: Path, outer: Path) -> None:
    (outer / "lib").mkdir()
    (outer / "lib" / "x.py").write_text("x")
    (root / "vendor").symlink_to(outer / "lib", target_is_directory=True)
    prompt = Recorder()
    result = read(project, {"filePath": "vendor"}, prompt)
    assert [a.patterns for a in prompt.asked("external_directory")] == [[f"{outer / 'lib'}/*"]]
    assert "x.py" in result.output


def test_bypass_cwd_check(harness: Harness, outer: Path) -> None:
    (outer / "f.txt").write_text("content")
    harness.run({"filePath": str(outer / "f.txt")}, extra={"bypassCwdCheck": True})
    assert harness.asked("external_directory") == []
    assert len(harness.asked("read")) == 1


def test_title_and_pattern_without_git(tmp_path: Path, env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    (plain / "a").mkdir(parents=True)
    (plain / "a" / "b.txt").write_text("b")
    project = Project(plain, env=env, autoload_plugins=False)
    harness = Harness(project, "read")
    result = harness.run({"filePath": "a/b.txt"})
    assert result.title == "a/b.txt"
    assert harness.asked("read")[0].patterns == ["a/b.txt"]


# -- read.test.ts: truncation --------------------------------------------------------------------------


def test_large_json_is_capped(project: Project, root: Path) -> None:
    blurb = "A capable general-purpose model with long context, tool use and vision support. " * 2
    data = {
        f"model-{i:04d}": {"id": f"provider/model-{i:04d}", "context": 128000, "description": blurb}
        for i in range(300)
    }
    text = json.dumps(data, indent=2)
    assert len(text.encode()) > 60 * 1024 and text.count("\n") < 2000
    (root / "models-api.json").write_text(text)
    result = read(project, {"filePath": str(root / "models-api.json")})
    assert result.metadata["truncated"] is True
    assert "Output capped at" in result.output
    assert "Use offset=" in result.output


def test_many_lines_stop_streaming_early(project: Project, root: Path, bytes_read: list[int]) -> None:
    line = "x" * 80
    path = root / "many.txt"
    path.write_text((line + "\n") * 50_000)
    size = path.stat().st_size
    assert size == 50_000 * 81
    result = read(project, {"filePath": str(path)})
    assert result.metadata["truncated"] is True
    assert "Output capped at" in result.output
    assert 0 < bytes_read[0] < size / 2


def test_limit_ten_of_hundred(project: Project, root: Path) -> None:
    (root / "hundred.txt").write_text("\n".join(f"line{i}" for i in range(100)))
    result = read(project, {"filePath": str(root / "hundred.txt"), "limit": 10})
    assert result.metadata["truncated"] is True
    assert "Showing lines 1-10 of 100" in result.output
    assert "Use offset=11" in result.output
    assert "line0" in result.output
    assert "line9" in result.output
    assert "line10" not in result.output


def test_small_file_is_whole(project: Project, root: Path) -> None:
    path = root / "small.txt"
    path.write_text("hello world")
    result = read(project, {"filePath": str(path)})
    assert result.metadata["truncated"] is False
    assert "End of file" in result.output
    assert result.metadata["display"] == {
        "type": "file",
        "path": str(path),
        "text": "hello world",
        "lineStart": 1,
        "lineEnd": 1,
        "totalLines": 1,
        "truncated": False,
    }
    assert result.output == (
        f"<path>{path}</path>\n<type>file</type>\n<content>\n"
        "1: hello world\n\n(End of file - total 1 lines)\n</content>"
    )
    assert result.metadata["preview"] == "hello world"
    assert result.metadata["loaded"] == []


def test_offset_and_limit_window(project: Project, root: Path) -> None:
    (root / "twenty.txt").write_text("\n".join(f"line{i}" for i in range(1, 21)))
    result = read(project, {"filePath": str(root / "twenty.txt"), "offset": 10, "limit": 5})
    for n in range(10, 15):
        assert f"{n}: line{n}" in result.output
    assert "15: line15" not in result.output
    assert "9: line9" not in result.output
    assert "(Showing lines 10-14 of 20. Use offset=15 to continue.)" in result.output


def test_offset_past_end(project: Project, root: Path) -> None:
    (root / "short.txt").write_text("one\ntwo\nthree")
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": str(root / "short.txt"), "offset": 4})
    assert "Offset 4 is out of range for this file (3 lines)" in str(caught.value)


def test_empty_file(project: Project, root: Path) -> None:
    path = root / "empty.txt"
    path.write_text("")
    result = read(project, {"filePath": str(path)})
    assert result.metadata["truncated"] is False
    assert "End of file - total 0 lines" in result.output
    assert result.output == (
        f"<path>{path}</path>\n<type>file</type>\n<content>\n\n\n(End of file - total 0 lines)\n</content>"
    )


def test_empty_file_with_offset_two(project: Project, root: Path) -> None:
    (root / "empty.txt").write_text("")
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": str(root / "empty.txt"), "offset": 2})
    assert str(caught.value) == "Offset 2 is out of range for this file (0 lines)"


def test_directory_page_in_locale_order(project: Project, root: Path) -> None:
    folder = root / "dir"
    folder.mkdir()
    for i in range(1, 11):
        (folder / f"file-{i}").write_text(str(i))
    result = read(project, {"filePath": str(folder), "offset": 6, "limit": 5})
    assert result.metadata["truncated"] is False
    assert "Showing 5 of 10 entries" not in result.output
    display = result.metadata["display"]
    assert display["entries"] == ["file-5", "file-6", "file-7", "file-8", "file-9"]
    assert display["offset"] == 6
    assert display["totalEntries"] == 10
    assert display["type"] == "directory"
    assert display["path"] == str(folder)


def test_long_line_is_cut(project: Project, root: Path) -> None:
    (root / "long.txt").write_text("x" * 3000)
    result = read(project, {"filePath": str(root / "long.txt")})
    assert "(line truncated to 2000 chars)" in result.output
    assert len(result.output) < 3000
    assert f"1: {'x' * 2000}... (line truncated to 2000 chars)\n" in result.output


# -- read.test.ts: images, PDFs and binaries ----------------------------------------------------------


def test_png_becomes_attachment(harness: Harness, root: Path) -> None:
    (root / "pixel.png").write_bytes(PNG_1X1)
    result = harness.run({"filePath": str(root / "pixel.png")})
    assert result.metadata["truncated"] is False
    assert result.output == "Image read successfully"
    assert len(result.attachments) == 1
    shape = result.attachments[0].as_dict()
    assert shape.pop("id").startswith("prt_")  # given by the session when the call finishes
    assert shape == {
        "type": "file",
        "mime": "image/png",
        "url": "data:image/png;base64," + base64.b64encode(PNG_1X1).decode(),
    }
    assert result.metadata == {"preview": "Image read successfully", "truncated": False, "loaded": []}


def test_png_through_session_gets_part_id(project: Project, root: Path) -> None:
    (root / "pixel.png").write_bytes(PNG_1X1)
    result = read(project, {"filePath": "pixel.png"})
    assert len(result.attachments) == 1
    assert result.attachments[0].id is not None and result.attachments[0].id.startswith("prt_")


def test_jpeg_detected_by_magic_bytes(project: Project, root: Path) -> None:
    (root / "image.bin").write_bytes(JPEG_MAGIC + b"\x00" * 64)
    result = read(project, {"filePath": str(root / "image.bin")})
    assert result.output == "Image read successfully"
    assert result.attachments[0].mime == "image/jpeg"
    assert result.attachments[0].url.startswith("data:image/jpeg;base64,")


def test_large_png(project: Project, root: Path) -> None:
    data = png(600, 600)
    assert len(data) > 1_000_000
    (root / "large-image.png").write_bytes(data)
    result = read(project, {"filePath": str(root / "large-image.png")})
    assert result.metadata["truncated"] is False
    assert [a.type for a in result.attachments] == ["file"]
    url = result.attachments[0].url
    assert base64.b64decode(url.split(",", 1)[1]) == data


def test_pdf_becomes_attachment(project: Project, root: Path) -> None:
    data = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"
    (root / "doc.pdf").write_bytes(data)
    result = read(project, {"filePath": str(root / "doc.pdf")})
    assert result.output == "PDF read successfully"
    assert result.metadata["preview"] == "PDF read successfully"
    assert result.attachments[0].mime == "application/pdf"
    assert result.attachments[0].url == "data:application/pdf;base64," + base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("anim.dat", b"GIF89a" + b"\x01\x00" * 8, "image/gif"),
        ("pic", b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        ("paper.txt", b"%PDF-1.7\n", "application/pdf"),
        ("photo.jpg", b"not really a jpeg", "image/jpeg"),
    ],
)
def test_mime_sniffing_and_extension_fallback(
    project: Project, root: Path, name: str, data: bytes, mime: str
) -> None:
    (root / name).write_bytes(data)
    result = read(project, {"filePath": name})
    assert result.attachments[0].mime == mime


def test_fbs_file_is_text(project: Project, root: Path) -> None:
    (root / "schema.fbs").write_text("namespace MyGame;\ntable Monster { hp: short; }\n")
    result = read(project, {"filePath": str(root / "schema.fbs")})
    assert result.attachments == []
    assert "1: namespace MyGame;" in result.output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("image.bmp", "BM text content"),
        ("photo.tiff", "tiff text content"),
        ("photo.avif", "avif text content"),
    ],
)
def test_other_image_types_read_as_text(project: Project, root: Path, name: str, text: str) -> None:
    (root / name).write_text(text)
    result = read(project, {"filePath": str(root / name)})
    assert result.attachments == []
    assert f"1: {text}" in result.output


def test_null_byte_is_binary(project: Project, root: Path) -> None:
    path = root / "null-byte.txt"
    path.write_bytes(b"hello\x00world")
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": str(path)})
    assert str(caught.value) == f"Cannot read binary file: {path}"


def test_wasm_extension_is_binary(project: Project, root: Path) -> None:
    path = root / "module.wasm"
    path.write_text("plain text inside")
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": str(path)})
    assert str(caught.value) == f"Cannot read binary file: {path}"


def test_many_control_bytes_is_binary(project: Project, root: Path) -> None:
    path = root / "controls.txt"
    path.write_bytes(b"\x01\x02\x03\x04" * 40 + b"a" * 100)
    with pytest.raises(ToolError, match="Cannot read binary file"):
        read(project, {"filePath": str(path)})


def test_some_control_bytes_are_text(project: Project, root: Path) -> None:
    path = root / "ansi.log"
    path.write_bytes(b"\x1b[31mred\x1b[0m plain text that is mostly printable\n")
    result = read(project, {"filePath": str(path)})
    assert "\x1b[31mred" in result.output


# -- read.test.ts: instructions ------------------------------------------------------------------------


def test_nearby_agents_md_is_attached(project: Project, root: Path) -> None:
    (root / "subdir" / "nested").mkdir(parents=True)
    agents = root / "subdir" / "AGENTS.md"
    agents.write_text("# Test Instructions\nDo something special.")
    (root / "subdir" / "nested" / "test.txt").write_text("test content")
    result = read(project, {"filePath": str(root / "subdir" / "nested" / "test.txt")})
    assert "test content" in result.output
    assert "system-reminder" in result.output
    assert "Do something special." in result.output
    assert result.metadata["loaded"] == [str(agents)]
    assert result.output.endswith(
        "</content>\n\n<system-reminder>\nInstructions from: "
        f"{agents}\n# Test Instructions\nDo something special.\n</system-reminder>"
    )


def test_project_root_instructions_are_not_repeated(project: Project, root: Path) -> None:
    (root / "AGENTS.md").write_text("root rules")
    (root / "pkg").mkdir()
    (root / "pkg" / "CLAUDE.md").write_text("claude rules")
    (root / "pkg" / "CONTEXT.md").write_text("context rules")
    (root / "pkg" / "a.txt").write_text("a")
    result = read(project, {"filePath": "pkg/a.txt"})
    assert result.metadata["loaded"] == [str(root / "pkg" / "CLAUDE.md")]
    assert "root rules" not in result.output
    assert "context rules" not in result.output


def test_instructions_collected_nearest_first(project: Project, root: Path) -> None:
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    (root / "a" / "AGENTS.md").write_text("outer")
    (deep / "CONTEXT.md").write_text("inner")
    (deep / "f.txt").write_text("f")
    result = read(project, {"filePath": "a/b/f.txt"})
    assert result.metadata["loaded"] == [str(deep / "CONTEXT.md"), str(root / "a" / "AGENTS.md")]


def test_reading_the_instruction_file_itself(project: Project, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "AGENTS.md").write_text("be kind")
    result = read(project, {"filePath": "sub/AGENTS.md"})
    assert result.metadata["loaded"] == []
    assert "system-reminder" not in result.output


def test_instructions_already_reported_are_skipped(project: Project, root: Path) -> None:
    # A real conversation: the instructions come once, with the first read near them; a second read in the
    # same reply and a read in a later reply (the transcript shows they were given) do not repeat them.
    from opencode_cli.session import ToolCall

    (root / "sub").mkdir()
    agents = root / "sub" / "AGENTS.md"
    agents.write_text("be kind")
    for name in ("x", "y", "z"):
        (root / "sub" / f"{name}.txt").write_text(name)

    async def conversation() -> tuple[Any, ...]:
        async with project.session(prompt=Recorder()) as session:
            session.user("look at x and y")
            first = await session.dispatch(ToolCall("read", {"filePath": "sub/x.txt"}))
            same_reply = await session.dispatch(ToolCall("read", {"filePath": "sub/y.txt"}))
            session.user("and z")
            later_reply = await session.dispatch(ToolCall("read", {"filePath": "sub/z.txt"}))
            roles = [message.role for message in session.messages]
            return first, same_reply, later_reply, roles

    first, same_reply, later_reply, roles = project.portal.call(conversation)
    assert roles == ["user", "assistant", "user", "assistant"]
    assert first.metadata["loaded"] == [str(agents)]
    assert f"Instructions from: {agents}\nbe kind" in first.text
    for repeat in (same_reply, later_reply):
        assert repeat.status == "completed"
        assert repeat.metadata["loaded"] == []
        assert "be kind" not in repeat.text and "system-reminder" not in repeat.text


def test_claude_md_can_be_disabled(project: Project, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "CLAUDE.md").write_text("claude")
    (root / "sub" / "x.txt").write_text("x")
    project.env = {**project.env, "OPENCODE_DISABLE_CLAUDE_CODE": "1"}
    result = read(project, {"filePath": "sub/x.txt"})
    assert result.metadata["loaded"] == []
    assert _instructions.file_names({"OPENCODE_DISABLE_CLAUDE_CODE_PROMPT": "true"}) == [
        "AGENTS.md",
        "CONTEXT.md",
    ]
    assert _instructions.file_names({}) == ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]


def test_image_read_lists_instructions_in_metadata(project: Project, root: Path) -> None:
    (root / "img").mkdir()
    (root / "img" / "AGENTS.md").write_text("images here")
    (root / "img" / "p.png").write_bytes(PNG_1X1)
    result = read(project, {"filePath": "img/p.png"})
    assert result.output == "Image read successfully"
    assert result.metadata["loaded"] == [str(root / "img" / "AGENTS.md")]


def test_remembered_session_keeps_shown_instructions_in_the_store(project: Project, root: Path) -> None:
    (root / "sub").mkdir()
    agents = root / "sub" / "AGENTS.md"
    agents.write_text("be kind")
    (root / "sub" / "x.txt").write_text("x")
    # two hosts in the same remembered session, both opened before either read (each loaded the transcript)
    first = project.session(id="ses_shared", remember=True)
    second = project.session(id="ses_shared", remember=True)
    shown = project.portal.call(first.execute, "read", {"filePath": "sub/x.txt"})
    assert shown.metadata["loaded"] == [str(agents)]
    again = project.portal.call(second.execute, "read", {"filePath": "sub/x.txt"})
    assert again.metadata["loaded"] == []
    assert "be kind" not in again.output
    assert project.store.instructions_shown("ses_shared") == {str(agents)}


def test_sessions_not_remembered_keep_nothing_in_the_store(project: Project, root: Path) -> None:
    (root / "sub").mkdir()
    agents = root / "sub" / "AGENTS.md"
    agents.write_text("be kind")
    (root / "sub" / "x.txt").write_text("x")
    for _ in range(2):
        result = read(project, {"filePath": "sub/x.txt"}, id="ses_plain")
        assert result.metadata["loaded"] == [str(agents)]
    assert project.store.instructions_shown("ses_plain") == set()
    other = read(project, {"filePath": "sub/x.txt"}, id="ses_other", remember=True)
    assert other.metadata["loaded"] == [str(agents)]


def test_store_claims_an_instruction_once_per_session(project: Project) -> None:
    store = project.store
    assert store.claim_instruction("ses_a", "/p/AGENTS.md") is True
    assert store.claim_instruction("ses_a", "/p/AGENTS.md") is False
    assert store.claim_instruction("ses_b", "/p/AGENTS.md") is True
    assert store.instructions_shown("ses_a") == {"/p/AGENTS.md"}


# -- beyond read.test.ts -------------------------------------------------------------------------------


def test_huge_file_window_near_end_has_bounded_memory(harness: Harness, root: Path, big_file: Path) -> None:
    path = big_file
    lines_per_block, total_lines = 10_000, 500_000
    with open(path, "wb") as handle:
        for block in range(total_lines // lines_per_block):
            start = block * lines_per_block
            handle.write(
                "".join(
                    f"{n + 1:08d} {'abcdefghij' * 7}\n" for n in range(start, start + lines_per_block)
                ).encode()
            )
    size = path.stat().st_size
    assert size == 40_000_000
    (root / "warmup.txt").write_text("warm")
    harness.run({"filePath": str(root / "warmup.txt")})  # import lazily loaded modules before measuring
    tracemalloc.start()
    try:
        result = harness.run({"filePath": str(path), "offset": 499_990, "limit": 5})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak
    assert peak < size / 20
    assert "499990: 00499990 abcdefghij" in result.output
    assert "499994: 00499994" in result.output
    assert "499995:" not in result.output
    assert "(Showing lines 499990-499994 of 500000. Use offset=499995 to continue.)" in result.output


def test_huge_single_line_has_bounded_memory(harness: Harness, big_file: Path) -> None:
    path = big_file
    with open(path, "wb") as handle:
        for _ in range(20):
            handle.write(b"var a=1;" * 131072)
        handle.write(b"\nsecond line\n")
    tracemalloc.start()
    try:
        result = harness.run({"filePath": str(path)})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak
    assert "1: var a=1;" in result.output
    assert (
        "... (line truncated to 2000 chars)\n2: second line\n\n(End of file - total 2 lines)" in result.output
    )


def test_output_cap_footer_numbers(project: Project, root: Path) -> None:
    line = "y" * 99  # 100 bytes with the separator
    (root / "cap.txt").write_text((line + "\n") * 1000)
    result = read(project, {"filePath": "cap.txt"})
    # 512 lines cost 99 + 511 * 100 = 51199 bytes; the 513th does not fit.
    assert "512: " + line in result.output
    assert "513: " not in result.output
    assert "(Output capped at 50 KB. Showing lines 1-512. Use offset=513 to continue.)" in result.output
    assert result.metadata["truncated"] is True
    assert result.metadata["display"]["lineEnd"] == 512


def test_no_spill_file_for_read(project: Project, root: Path, env: dict[str, str]) -> None:
    (root / "big.txt").write_text("z" * 1500 + "\n" + ("line\n" * 3000))
    result = read(project, {"filePath": "big.txt"})
    assert "outputPath" not in result.metadata
    assert not (Path(env["XDG_DATA_HOME"]) / "opencode" / "tool-output").exists()


def test_line_endings(project: Project, root: Path) -> None:
    (root / "endings.txt").write_bytes(b"crlf\r\nlf\nlone\rcr\r\nlast")
    result = read(project, {"filePath": "endings.txt"})
    assert "1: crlf\n2: lf\n3: lone\rcr\n4: last\n\n(End of file - total 4 lines)" in result.output


def test_trailing_newline_adds_no_line(project: Project, root: Path) -> None:
    (root / "t.txt").write_text("a\nb\n")
    result = read(project, {"filePath": "t.txt"})
    assert "(End of file - total 2 lines)" in result.output
    (root / "blank.txt").write_text("a\n\n")
    assert "(End of file - total 2 lines)" in read(project, {"filePath": "blank.txt"}).output


def test_offset_zero_means_one(project: Project, root: Path) -> None:
    (root / "z.txt").write_text("first\nsecond")
    result = read(project, {"filePath": "z.txt", "offset": 0})
    assert "1: first\n2: second" in result.output
    assert result.metadata["display"]["lineStart"] == 1


def test_limit_zero(project: Project, root: Path) -> None:
    (root / "z.txt").write_text("first\nsecond")
    result = read(project, {"filePath": "z.txt", "limit": 0})
    assert "(Showing lines 1-0 of 2. Use offset=1 to continue.)" in result.output
    assert result.metadata["truncated"] is True


def test_last_line_exactly_at_limit_is_not_more(project: Project, root: Path) -> None:
    (root / "three.txt").write_text("a\nb\nc\n")
    result = read(project, {"filePath": "three.txt", "offset": 2, "limit": 2})
    assert "(End of file - total 3 lines)" in result.output
    assert result.metadata["truncated"] is False


def test_invalid_utf8_is_replaced(project: Project, root: Path) -> None:
    (root / "latin1.txt").write_bytes("caf\u00e9 ok\n".encode("latin-1"))
    result = read(project, {"filePath": "latin1.txt"})
    assert "1: caf\ufffd ok" in result.output


def test_line_length_counts_utf16_units(project: Project, root: Path) -> None:
    # 1999 ASCII characters then emoji: the 2000-unit cut falls inside the first emoji's surrogate pair.
    (root / "emoji.txt").write_text("a" * 1999 + "\U0001f600" * 10, encoding="utf-8")
    result = read(project, {"filePath": "emoji.txt"})
    assert f"1: {'a' * 1999}\ufffd... (line truncated to 2000 chars)" in result.output
    (root / "fits.txt").write_text("\U0001f600" * 1000, encoding="utf-8")
    assert "truncated to" not in read(project, {"filePath": "fits.txt"}).output


def test_chunk_boundaries_do_not_matter(
    harness: Harness, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = b"alpha\r\nbeta\n" + b"g" * 5000 + b"\r\ndelta\nepsilon"
    (root / "c.txt").write_bytes(content)
    expected = harness.run({"filePath": "c.txt"}).output
    for chunk in (1, 2, 3, 7, 64):
        monkeypatch.setattr(_text_window, "CHUNK_BYTES", chunk)
        assert harness.run({"filePath": "c.txt"}).output == expected
        window = harness.run({"filePath": "c.txt", "offset": 3, "limit": 1}).output
        assert "(Showing lines 3-3 of 5. Use offset=4 to continue.)" in window


def test_not_found_suggestions(project: Project, root: Path) -> None:
    for name in ("config.json", "config.yaml", "Config.toml", "configs", "other.txt"):
        (root / name).write_text("x")
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": "config"})
    assert str(caught.value) == (
        f"File not found: {root / 'config'}\n\nDid you mean one of these?\n"
        f"{root / 'Config.toml'}\n{root / 'config.json'}\n{root / 'config.yaml'}"
    )


def test_not_found_without_suggestions(project: Project, root: Path) -> None:
    with pytest.raises(ToolError) as caught:
        read(project, {"filePath": "missing/deeper.txt"})
    assert str(caught.value) == f"File not found: {root / 'missing' / 'deeper.txt'}"


def test_directory_listing_layout(project: Project, root: Path, outer: Path) -> None:
    folder = root / "d"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.txt").write_text("b")
    (folder / "A.txt").write_text("a")
    (folder / "link").symlink_to(outer, target_is_directory=True)
    (folder / "broken").symlink_to(outer / "nothing")
    result = read(project, {"filePath": "d"})
    assert result.output == (
        f"<path>{folder}</path>\n<type>directory</type>\n<entries>\n"
        "A.txt\nb.txt\nbroken\nlink/\nsub/\n\n(5 entries)\n</entries>"
    )
    assert result.metadata["preview"] == "A.txt\nb.txt\nbroken\nlink/\nsub/"
    assert result.metadata["loaded"] == []


def test_directory_truncated_footer(project: Project, root: Path) -> None:
    folder = root / "many"
    folder.mkdir()
    for i in range(30):
        (folder / f"f{i:02d}").write_text("")
    result = read(project, {"filePath": "many", "limit": 25})
    assert "(Showing 25 of 30 entries. Use 'offset' parameter to read beyond entry 26)" in result.output
    assert result.metadata["truncated"] is True
    assert len(result.metadata["preview"].split("\n")) == 20


def test_project_directory_itself(project: Project, root: Path) -> None:
    harness = Harness(project, "read")
    result = harness.run({"filePath": str(root)})
    assert result.title == ""
    assert harness.asked("read")[0].patterns == [""]
    assert ".git/" in result.output


def test_abort_before_start(harness: Harness, root: Path) -> None:
    (root / "a.txt").write_text("a")
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(AbortedError) as caught:
        harness.run({"filePath": "a.txt"}, abort=signal)
    assert str(caught.value) == "[Tool execution was interrupted]"


def test_stream_stops_when_aborted() -> None:
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(AbortedError):
        _text_window.stream(io.BytesIO(b"a\nb\n"), 1, 10, signal)


def reference_window(data: bytes, offset: int, limit: int, cap: int) -> tuple[list[str], int, bool, bool]:
    """The read window computed the obvious way, on the whole file in memory."""
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    lines = [(p[:-1] if p.endswith(b"\r") else p).decode("utf-8", "replace") for p in pieces]
    shown: list[str] = []
    used = 0
    for index in range(offset - 1, len(lines)):
        if len(shown) >= limit:
            return shown, len(lines), False, True
        cost = len(lines[index].encode()) + (1 if shown else 0)
        if used + cost > cap:
            return shown, index + 1, True, True
        shown.append(lines[index])
        used += cost
    return shown, len(lines), False, False


@given(
    pieces=st.lists(
        st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xff", b"\xe2\x82"]), max_size=40
    ),
    offset=st.integers(1, 8),
    limit=st.integers(0, 8),
    chunk=st.integers(1, 9),
    cap=st.integers(1, 40),
)
def test_stream_matches_reference(pieces: list[bytes], offset: int, limit: int, chunk: int, cap: int) -> None:
    data = b"".join(pieces)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text_window, "MAX_BYTES", cap)
        window = _text_window.stream(io.BytesIO(data), offset, limit, chunk_size=chunk)
    assert (window.lines, window.count, window.cut, window.more) == reference_window(data, offset, limit, cap)


# -- arguments -----------------------------------------------------------------------------------------


def test_invalid_offset_type(project: Project, root: Path) -> None:
    (root / "a.txt").write_text("a")
    with pytest.raises(InvalidArgumentsError) as caught:
        read(project, {"filePath": "a.txt", "offset": "x"})
    assert str(caught.value) == (
        'The read tool was called with invalid arguments: ["offset"]: Input should be a valid integer '
        '(expected integer, received "x").\n'
        "Please rewrite the input so it satisfies the expected schema."
    )


def test_numeric_strings_are_not_coerced(project: Project, root: Path) -> None:
    (root / "a.txt").write_text("a")
    with pytest.raises(InvalidArgumentsError, match=r'\["limit"\]: Input should be a valid integer'):
        read(project, {"filePath": "a.txt", "limit": "10"})


def test_missing_file_path(project: Project) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        read(project, {"offset": 1})
    assert str(caught.value) == (
        'The read tool was called with invalid arguments: ["filePath"]: Field required (expected string).\n'
        "Please rewrite the input so it satisfies the expected schema."
    )


def test_negative_offset(project: Project) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        read(project, {"filePath": "a.txt", "offset": -1})
    assert str(caught.value).startswith(
        'The read tool was called with invalid arguments: ["offset"]: '
        "Input should be greater than or equal to 0"
    )
    assert str(caught.value).endswith(".\nPlease rewrite the input so it satisfies the expected schema.")


def test_unknown_keys_ignored(project: Project, root: Path) -> None:
    (root / "a.txt").write_text("a")
    assert "1: a" in read(project, {"filePath": "a.txt", "encoding": "utf-8"}).output


def test_schema_and_description(project: Project) -> None:
    tool = project.registry.get("read").tool.load()
    schema = tool.schema()
    assert schema["required"] == ["filePath"]
    assert set(schema["properties"]) == {"filePath", "offset", "limit"}
    for name in ("filePath", "offset", "limit"):
        assert schema["properties"][name]["description"]
    assert 900 < len(tool.description) < 1400
    assert "2000" in tool.description


# -- collation -----------------------------------------------------------------------------------------


def test_collation_examples() -> None:
    names = [f"file-{i}" for i in range(1, 11)]
    assert _collate.sort(names) == ["file-1", "file-10", *[f"file-{i}" for i in range(2, 10)]]
    assert _collate.sort(["banana", "Apple", "cherry", "apple"]) == ["apple", "Apple", "banana", "cherry"]
    assert _collate.sort(["b", "_a", "1a", "a", ".hidden", "B"]) == ["_a", ".hidden", "1a", "a", "b", "B"]
    assert _collate.sort(["a.txt", "a/", "a-b", "a_b", "ab"]) == ["a_b", "a-b", "a.txt", "a/", "ab"]
    assert _collate.sort(["e\u0301", "f", "e", "E"]) == ["e", "E", "e\u0301", "f"]
    assert _collate.sort(["README.md", "node_modules/", "package.json", "src/"]) == [
        "node_modules/",
        "package.json",
        "README.md",
        "src/",
    ]


names = st.text(max_size=12)


@given(names, names)
def test_collation_is_antisymmetric(a: str, b: str) -> None:
    assert _collate.compare(a, b) == -_collate.compare(b, a)
    assert (_collate.compare(a, b) == 0) == (a == b)


@given(names, names, names)
def test_collation_is_transitive(a: str, b: str, c: str) -> None:
    x, y, z = _collate.sort([a, b, c])
    assert _collate.compare(x, y) <= 0 and _collate.compare(y, z) <= 0 and _collate.compare(x, z) <= 0


@given(st.lists(names, max_size=20))
def test_collation_sort_is_order_independent(items: list[str]) -> None:
    assert _collate.sort(items) == _collate.sort(reversed(items))


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", max_size=8), st.data())
def test_collation_ignores_case_first(a: str, data: st.DataObject) -> None:
    b = data.draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", max_size=8))
    if a.lower() != b.lower():
        expected = (a.lower() > b.lower()) - (a.lower() < b.lower())
        assert _collate.compare(a, b) == expected
    elif a != b:
        # Same letters: the first position where the case differs decides, lower case first.
        index = next(i for i in range(len(a)) if a[i] != b[i])
        assert _collate.compare(a, b) == (-1 if a[index].islower() else 1)


PUNCTUATION = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


@given(st.sampled_from(PUNCTUATION), st.sampled_from("0123456789"), st.sampled_from("aZ"))
def test_punctuation_before_digits_before_letters(punct: str, digit: str, letter: str) -> None:
    assert _collate.sort([letter, digit, punct]) == [punct, digit, letter]


# -- thread hops ---------------------------------------------------------------------------------------


class _CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, a real thread pool that counts what it is handed."""

    def __init__(self) -> None:
        super().__init__(2)
        self.submitted: list[str] = []

    def submit(self, function: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted.append(getattr(function, "__name__", repr(function)))
        return super().submit(function, *args, **kwargs)


#: What each kind of read hands to a worker thread: a small regular file is read on the loop; a directory,
#: a file too large or too deep to read there, and one with an instruction file near it, in one hop.
HOPS = {
    "notes.txt": 0,
    "sub/a.txt": 0,
    "sub": 1,
    "large.txt": 1,
    "ruled/b.txt": 1,
    "deep": 1,
}


@pytest.mark.parametrize("target", sorted(HOPS))
def test_read_does_its_blocking_work_on_the_loop_or_in_one_worker_hop(
    project: Project, root: Path, target: str
) -> None:
    """Each hop being a wake-up of a thread and of the loop, a read does all of its blocking work in at
    most one: none for a small regular file (a few system calls), one otherwise (the open, the
    instruction files and the read together)."""
    import asyncio

    (root / "notes.txt").write_text("one\ntwo\n")
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("a\n")
    (root / "large.txt").write_text("x\n" * (read_module.READ_HERE_BYTES // 2 + 1))
    (root / "ruled").mkdir()
    (root / "ruled" / "AGENTS.md").write_text("be brief")
    (root / "ruled" / "b.txt").write_text("b\n")
    deep = root.joinpath(*["d"] * (read_module.READ_HERE_DEPTH + 1))
    deep.mkdir(parents=True)
    (deep / "c.txt").write_text("c\n")
    path = deep / "c.txt" if target == "deep" else root / target
    executor = _CountingExecutor()

    async def main() -> Any:
        asyncio.get_running_loop().set_default_executor(executor)
        async with project.session("build", prompt=Recorder()) as session:
            return await session.execute("read", {"filePath": str(path)})

    try:
        result = asyncio.run(main())
    finally:
        executor.shutdown()
    shown = {"sub": "a.txt", "large.txt": "1: x", "ruled/b.txt": "be brief", "deep": "1: c"}
    assert shown.get(target, "1: ") in result.output
    assert len(executor.submitted) == HOPS[target], executor.submitted


def test_a_fifo_where_a_small_file_was_is_read_off_the_loop(project: Project, root: Path) -> None:
    """A FIFO swapped in for a small file after it was looked at opens at once (the open on the loop
    never waits for a writer, which here never comes) and is handed to a worker thread: the loop runs on
    meanwhile, and the call ends as a read of a FIFO ends there."""
    import asyncio

    fifo = root / "pipe"
    os.mkfifo(fifo)
    ticks = 0

    async def main() -> list[Any]:
        nonlocal ticks
        async with project.session("build", prompt=Recorder()) as session:
            ctx = session.context("read", "call-1")
            reading = asyncio.ensure_future(read_module._read_small(ctx, str(fifo), None, "pipe", 1, 10))
            while ticks < 5:
                ticks += 1
                await asyncio.sleep(0)
            return await asyncio.gather(reading, return_exceptions=True)

    outcome = asyncio.run(main())
    assert ticks == 5
    assert len(outcome) == 1


def test_a_small_file_that_grew_is_read_whole_off_the_loop(project: Project, root: Path) -> None:
    """A file looked at when small but larger once opened (it grew meanwhile) is not read on the loop
    past the bound: its descriptor goes, at its start, to a worker thread, which reads it all."""
    import asyncio

    grown = root / "grown.log"
    grown.write_text("".join(f"entry {n}\n" for n in range(read_module.READ_HERE_BYTES // 4)))
    executor = _CountingExecutor()

    async def main() -> Any:
        asyncio.get_running_loop().set_default_executor(executor)
        async with project.session("build", prompt=Recorder()) as session:
            ctx = session.context("read", "call-1")
            return await read_module._read_small(ctx, str(grown), None, "grown.log", 1, 3)

    try:
        result = asyncio.run(main())
    finally:
        executor.shutdown()
    assert len(executor.submitted) == 1 and "_read_opened" in executor.submitted[0]
    assert result.output.splitlines()[3:6] == ["1: entry 0", "2: entry 1", "3: entry 2"]
    assert f"of {read_module.READ_HERE_BYTES // 4}" in result.output
