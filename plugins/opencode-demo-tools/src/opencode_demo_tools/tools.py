"""The demo tools: one per thing a tool can do (see the table in the package's README)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from opencode_cli import Attachment, Field, ToolContext, ToolError, ToolResult, tool

WORD = re.compile(r"[^\W\d_](?:[\w'-]*\w)?")


@tool
def demo_word_count(
    text: str = Field(description="The text to count"),
    top: int = Field(5, ge=0, le=50, description="How many of the most common words to list"),
) -> dict[str, Any]:
    """Count the lines, words and characters of a text and list its most common words."""
    words = [word.lower() for word in WORD.findall(text)]
    common = Counter(words).most_common(top)
    lines = [f"{len(text.splitlines())} lines, {len(words)} words, {len(text)} characters"]
    lines += [f"{count:>5}  {word}" for word, count in common]
    return {
        "title": f"{len(words)} words",
        "output": "\n".join(lines),
        "metadata": {"words": len(words), "common": dict(common)},
    }


@tool
async def demo_checksum(
    ctx: ToolContext,
    path: str = Field(description="The file to hash: absolute, or relative to the project directory"),
    algorithm: Literal["sha256", "sha1", "md5", "blake2b"] = "sha256",
) -> ToolResult:
    """Compute the checksum of a file."""
    target = ctx.resolve(path).resolve()
    roots = [Path(ctx.directory).resolve(), *([Path(ctx.worktree).resolve()] if ctx.worktree else [])]
    inside = any(target.is_relative_to(root) for root in roots)
    if not inside:  # the same guard as the built-in tools: a path outside the project asks first
        pattern = f"{target.parent.as_posix()}/*"
        await ctx.ask("external_directory", [pattern], always=[pattern], metadata={"filepath": str(target)})
    shown = os.path.relpath(target, roots[-1]) if inside else str(target)
    await ctx.ask("read", [shown], always=["*"], metadata={})
    if not target.is_file():
        raise ToolError(f"No file at {shown}: give the path of an existing file.")
    digest = await asyncio.to_thread(_digest, target, algorithm)
    return ToolResult(title=shown, output=f"{algorithm}:{digest}  {shown}", metadata={"algorithm": algorithm})


def _digest(path: Path, algorithm: str) -> str:
    hasher = hashlib.new(algorithm)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            hasher.update(block)
    return hasher.hexdigest()


@tool
def demo_swatch(
    color: str = Field(pattern=r"^#?[0-9a-fA-F]{6}$", description='A hex colour such as "#ff8800"'),
    size: int = Field(16, ge=1, le=256, description="Width and height in pixels"),
) -> ToolResult:
    # the description the model sees is demo_swatch.txt beside this module (it wins over a docstring)
    hex_code = color.lstrip("#").lower()
    picture = png(size, size, bytes.fromhex(hex_code))
    url = "data:image/png;base64," + base64.b64encode(picture).decode("ascii")
    return ToolResult(
        title=f"#{hex_code}",
        output=f"A {size}x{size} swatch of #{hex_code} is attached.",
        metadata={"bytes": len(picture)},
        attachments=[Attachment(mime="image/png", url=url, filename=f"swatch-{hex_code}.png")],
    )


def png(width: int, height: int, rgb: bytes) -> bytes:
    """A PNG image of one colour (8-bit RGB), made with the standard library only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = (b"\x00" + rgb * width) * height  # each row: filter type 0, then the pixels
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


@tool
def demo_steps(
    ctx: ToolContext,
    steps: int = Field(3, ge=1, le=100, description="How many steps to work through"),
    delay: float = Field(0.2, ge=0, le=5, description="Seconds each step takes"),
) -> ToolResult:
    """Work through a number of steps, reporting progress after each one."""
    done = 0
    for step in range(1, steps + 1):
        if ctx.abort.wait(delay):  # sleeps, but wakes at once when the call is aborted
            break
        done = step
        # live progress: the CLI shows the title on a terminal; hosts get (title, metadata)
        ctx.metadata(title=f"step {step} of {steps}", metadata={"step": step, "steps": steps})
    return ToolResult(
        title=f"{done} of {steps} steps",
        output=f"Finished {done} of {steps} steps.",
        metadata={"steps": steps, "done": done},
    )


ALL = (demo_word_count, demo_checksum, demo_swatch, demo_steps)
