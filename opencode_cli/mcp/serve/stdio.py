"""The stdio transport's two ends, read and written on the event loop (no thread blocks on stdin).

The SDK's own stdio transport reads stdin in a worker thread, which a cancellation cannot interrupt: a
signal while the client is idle would wait for the next line. Here stdin and stdout are the loop's pipes,
so SIGINT, SIGTERM and stdin closing end the server at once. Each line is checked before the SDK sees it,
by the rule HTTP bodies meet too (:func:`~opencode_cli.mcp.serve.limits.check_message`): a line over
:data:`~opencode_cli.mcp.serve.limits.MAX_REQUEST_BYTES` is dropped unread, and a malformed request that
carries an id gets a JSON-RPC error reply, never silence.

While serving, fd 0 reads the null device and fd 1 writes to stderr (as in the SDK), so a tool's child
process can neither read the client's requests nor write into the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from .limits import MAX_REQUEST_BYTES, check_message, error_reply, replies, too_large

#: Bytes read from stdin at a time.
CHUNK = 1 << 16


class Stdout:
    """The protocol's output: whole lines, written in order on the loop (``write`` + ``flush``, as the
    SDK's stdio transport expects of its ``stdout``)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        """Attach the descriptor to the loop (a regular file is written directly)."""
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(os.dup(self._fd), "wb", buffering=0)
        try:
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
        except (ValueError, OSError):  # not a pipe, socket or terminal: plain writes never block long
            pipe.close()
            return
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(self, text: str) -> None:
        """Write ``text`` (one or more whole lines)."""
        data = text.encode("utf-8")
        async with self._lock:
            if self._writer is None:
                os.write(self._fd, data)
                return
            self._writer.write(data)
            await self._writer.drain()

    async def flush(self) -> None:
        """Everything is written as it comes: nothing to flush."""

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


class Stdin:
    """The protocol's input: the lines of stdin that are fit to hand to the SDK (async iteration ends
    when stdin closes)."""

    def __init__(self, fd: int, out: Stdout, limit: int = MAX_REQUEST_BYTES) -> None:
        self._fd = fd
        self._out = out
        self._limit = limit
        self._reader: asyncio.StreamReader | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._ended = False

    async def open(self) -> None:
        """Attach the descriptor to the loop (a regular file is read in a thread: it never blocks long)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=CHUNK, loop=loop)
        pipe = os.fdopen(os.dup(self._fd), "rb", buffering=0)
        try:
            self._transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
            )
        except (ValueError, OSError):
            pipe.close()
            return
        self._reader = reader

    def end(self) -> None:
        """Take stdin as closed (the server is stopping): what was read is served, nothing more."""
        if self._ended:
            return
        self._ended = True
        if self._transport is not None:
            self._transport.pause_reading()  # type: ignore[attr-defined]
        if self._reader is not None:
            self._reader.feed_eof()

    async def _chunks(self) -> AsyncIterator[bytes]:
        while not self._ended:
            if self._reader is not None:
                chunk = await self._reader.read(CHUNK)
            else:
                chunk = await asyncio.to_thread(os.read, self._fd, CHUNK)
            if not chunk:
                return
            yield chunk

    async def __aiter__(self) -> AsyncIterator[str]:
        pending = bytearray()
        head: bytes | None = None  # the start of a line over the limit, whose rest is being skipped
        async for chunk in self._chunks():
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                piece, start = chunk[start:end], end + 1
                if head is not None:
                    await self._reply(too_large(head, self._limit))
                    head = None
                    continue
                pending += piece
                line, pending = bytes(pending), bytearray()
                if len(line) > self._limit:
                    await self._reply(too_large(line[:4096], self._limit))
                    continue
                text = await self._checked(line)
                if text is not None:
                    yield text
            rest = chunk[start:]
            if head is None:
                pending += rest
                if len(pending) > self._limit:
                    head, pending = bytes(pending[:4096]), bytearray()
        if pending.strip() and head is None:
            text = await self._checked(bytes(pending))
            if text is not None:
                yield text

    async def _checked(self, line: bytes) -> str | None:
        """The line as text if the SDK should see it; ``None`` (after replying, if it had an id) if not."""
        if not line.strip():
            return None
        problem = check_message(line)
        if problem is None:
            return line.decode("utf-8")
        if problem.batch:
            for reply in replies(problem):
                await self._reply(reply)
        elif problem.id is not None:
            await self._reply(problem)
        else:
            print(f"opencode mcp serve: dropped a message: {problem.message}", file=sys.stderr, flush=True)
        return None

    async def _reply(self, problem: Any) -> None:
        await self._out.write(error_reply(problem) + "\n")

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


@contextlib.asynccontextmanager
async def claimed_stdio() -> AsyncIterator[tuple[Stdin, Stdout]]:
    """stdin and stdout for the protocol; fds 0 and 1 point at the null device and stderr meanwhile (the
    protocol writes to the stdout :mod:`opencode_cli.machine_output` kept, when the command claimed it)."""
    from ...machine_output import wire_fd

    wire_in, wire_out, before_out = os.dup(0), os.dup(wire_fd()), os.dup(1)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        out = Stdout(wire_out)
        stdin = Stdin(wire_in, out)
        await out.open()
        await stdin.open()
        try:
            yield stdin, out
        finally:
            stdin.close()
            out.close()
    finally:
        for fd in (wire_in, wire_out):  # the loop made them non-blocking: a terminal is shared with the shell
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)
        os.dup2(wire_in, 0)
        os.dup2(before_out, 1)
        for fd in (wire_in, wire_out, before_out):
            os.close(fd)
