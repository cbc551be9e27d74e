"""Files attached to a prompt (``opencode run -f PATH``), read as OpenCode's session layer reads them.

Each file is read with the ``read`` tool (the user named it, so no permission is asked) and lands in
the user message as OpenCode puts it there: a synthetic ``Called the Read tool with the following
input: {...}`` text part, then the file's numbered text as a synthetic text part, or, for an image or a
PDF, the file itself as a file part (a ``data:`` URL).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session import Session
    from ..transcript import Message

#: The synthetic text that says which file was read (OpenCode's words).
READ_NOTE = "Called the Read tool with the following input: {arguments}"


async def _no_ask(request: Any) -> None:
    """The asker of an attached file's read: the user named the file, nothing to ask."""


async def attach_files(session: Session, message: Message, paths: Sequence[Path]) -> None:
    """Read each of ``paths`` with the ``read`` tool and add what it gives to ``message``."""
    from ..transcript import FilePart, TextPart

    if not paths:
        return
    tool = session.project.registry.get("read").tool.load()
    for path in paths:
        target = path if path.is_absolute() else session.project.directory / path
        arguments = {"filePath": str(target.resolve())}
        context = replace(session.context("read", None), asker=_no_ask)
        result = await tool.run(arguments, context)
        note = READ_NOTE.format(arguments=json.dumps(arguments, separators=(",", ":"), ensure_ascii=False))
        session.transcript.add_part(message, TextPart(note, synthetic=True))
        if not result.attachments:
            session.transcript.add_part(message, TextPart(result.output, synthetic=True))
        for item in result.attachments:
            session.transcript.add_part(message, FilePart(item.mime, item.url, item.filename or target.name))
