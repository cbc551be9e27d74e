"""A small real language server (pygls's server side) for the failure tests.

It answers ``hover`` with the hovered line, except on a line holding ``hang``: then it writes the file
named by ``FIXTURE_MARK`` and never answers. It offers pull diagnostics: one error for every line holding
``oops``; with ``FIXTURE_DIAGNOSTICS=hang`` it never answers them, with ``FIXTURE_DIAGNOSTICS=crash`` it
exits at once (code 3).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("fixture-server", "1.0")


def _lines(uri: str) -> list[str]:
    return server.workspace.get_text_document(uri).source.splitlines()


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(params: types.HoverParams) -> types.Hover:
    line = _lines(params.text_document.uri)[params.position.line]
    if "hang" in line:
        mark = os.environ.get("FIXTURE_MARK")
        if mark:
            Path(mark).write_text(str(os.getpid()))
        await asyncio.sleep(3600)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.PlainText, value=f"line: {line}"))


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=False),
)
async def diagnostic(params: types.DocumentDiagnosticParams) -> types.RelatedFullDocumentDiagnosticReport:
    mode = os.environ.get("FIXTURE_DIAGNOSTICS", "")
    if mode == "hang":
        await asyncio.sleep(3600)
    if mode == "crash":
        os._exit(3)
    items = [
        types.Diagnostic(
            range=types.Range(
                start=types.Position(line=number, character=line.index("oops")),
                end=types.Position(line=number, character=line.index("oops") + 4),
            ),
            message="oops is not allowed",
            severity=types.DiagnosticSeverity.Error,
        )
        for number, line in enumerate(_lines(params.text_document.uri))
        if "oops" in line
    ]
    return types.RelatedFullDocumentDiagnosticReport(items=items)


if __name__ == "__main__":
    server.start_io()
