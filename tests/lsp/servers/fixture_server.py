"""A small real language server (pygls's server side) for the failure tests.

It answers ``hover`` with the hovered line, except on a line holding ``hang``: then it writes the file
named by ``FIXTURE_MARK`` and never answers. It offers pull diagnostics: one error for every line holding
``oops``; with ``FIXTURE_DIAGNOSTICS=hang`` it never answers them, with ``FIXTURE_DIAGNOSTICS=crash`` it
exits at once (code 3). With ``FIXTURE_CHATTY=1`` it says what it does as basedpyright does: a
``window/logMessage`` on ``initialized`` and on every opened or changed document, and one
``window/showMessage`` once initialised. With ``FIXTURE_FAIL_START=1`` it writes a line on stderr and
exits with code 1 before reading anything, as a server installed without its runtime does.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("fixture-server", "1.0")
CHATTY = os.environ.get("FIXTURE_CHATTY") == "1"


def _say(message: str) -> None:
    if CHATTY:
        server.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=message))


@server.feature(types.INITIALIZED)
def initialized(params: types.InitializedParams) -> None:
    _say("fixture: initialised")
    if CHATTY:
        server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message="fixture: ready")
        )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def opened(params: types.DidOpenTextDocumentParams) -> None:
    _say(f"fixture: opened {params.text_document.uri}")


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def changed(params: types.DidChangeTextDocumentParams) -> None:
    _say(f"fixture: changed {params.text_document.uri}")


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
    if os.environ.get("FIXTURE_FAIL_START") == "1":
        sys.stderr.write("fixture: cannot find its runtime (exit 1)\n")
        sys.exit(1)
    server.start_io()
