"""``lsp``: ask the language servers of a file (builtin spec §15.1; experimental, see ``policy``).

The flow is the spec's: the external-directory check, the ``lsp`` permission (its metadata depends on
the operation), ``File not found``, ``No LSP server available for this file type.``, then the file is
opened in every server that handles it and the request sent with a 0-based position. The answers of all
servers are gathered in one list and shown as JSON (two-space indent), or ``No results found for …``.
Servers are the project's (:mod:`opencode_cli.lsp.servers`); one killed mid-request gives a clear error
and is started again by the next call.
"""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, Any, Literal

from .. import boundary
from ..context import ToolContext
from ..errors import ToolError
from ..results import ToolResult
from ._paths import worktree_relative

if TYPE_CHECKING:
    from pydantic import BaseModel

NO_SERVER = "No LSP server available for this file type."

Operation = Literal[
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
]


#: The server capability each operation needs; a server without it adds nothing to the answer.
CAPABILITY = {
    "goToDefinition": "definition_provider",
    "findReferences": "references_provider",
    "hover": "hover_provider",
    "documentSymbol": "document_symbol_provider",
    "workspaceSymbol": "workspace_symbol_provider",
    "goToImplementation": "implementation_provider",
    "prepareCallHierarchy": "call_hierarchy_provider",
    "incomingCalls": "call_hierarchy_provider",
    "outgoingCalls": "call_hierarchy_provider",
}


@functools.cache
def parameters() -> type[BaseModel]:
    """The lsp tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class LspParameters(Arguments):
        """Arguments of the lsp tool."""

        operation: Operation = Field(description="What to ask the language server")
        filePath: str = Field(
            description="The file to ask about: an absolute path, or relative to the project"
        )
        line: int = Field(ge=1, description="The line of the position, counted from 1 as editors show it")
        character: int = Field(ge=1, description="The character of the position on that line, counted from 1")
        query: str | None = Field(
            None, description="For workspaceSymbol: the text symbol names must match (empty: every symbol)"
        )

    return LspParameters


def _metadata(params: Any, path: str) -> dict[str, Any]:
    if params.operation == "workspaceSymbol":
        return {"operation": params.operation}
    if params.operation == "documentSymbol":
        return {"operation": params.operation, "filePath": path}
    return {
        "operation": params.operation,
        "filePath": path,
        "line": params.line,
        "character": params.character,
    }


def _title(params: Any, relative: str) -> str:
    if params.operation == "workspaceSymbol":
        return params.operation
    if params.operation == "documentSymbol":
        return f"{params.operation} {relative}"
    return f"{params.operation} {relative}:{params.line}:{params.character}"


async def _ask(client: Any, params: Any, path: str) -> list[Any]:
    """One server's answer, as a list of JSON values (empty: nothing)."""
    from lsprotocol import types
    from lsprotocol.converters import get_converter

    from ..lsp.client import file_uri

    document = types.TextDocumentIdentifier(uri=file_uri(path))
    position = types.Position(line=params.line - 1, character=params.character - 1)
    operation = params.operation
    if operation == "goToDefinition":
        result = await client.request(
            types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(text_document=document, position=position)
        )
    elif operation == "findReferences":
        result = await client.request(
            types.TEXT_DOCUMENT_REFERENCES,
            types.ReferenceParams(
                text_document=document,
                position=position,
                context=types.ReferenceContext(include_declaration=True),
            ),
        )
    elif operation == "hover":
        result = await client.request(
            types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=document, position=position)
        )
    elif operation == "documentSymbol":
        result = await client.request(
            types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=document)
        )
    elif operation == "workspaceSymbol":
        result = await client.request(
            types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=params.query or "")
        )
    elif operation == "goToImplementation":
        result = await client.request(
            types.TEXT_DOCUMENT_IMPLEMENTATION,
            types.ImplementationParams(text_document=document, position=position),
        )
    else:
        items = await client.request(
            types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
            types.CallHierarchyPrepareParams(text_document=document, position=position),
        )
        if operation == "prepareCallHierarchy" or not items:
            result = items
        elif operation == "incomingCalls":
            result = await client.request(
                types.CALL_HIERARCHY_INCOMING_CALLS, types.CallHierarchyIncomingCallsParams(item=items[0])
            )
        else:
            result = await client.request(
                types.CALL_HIERARCHY_OUTGOING_CALLS, types.CallHierarchyOutgoingCallsParams(item=items[0])
            )
    if result is None:
        return []
    value = get_converter().unstructure(result)
    return list(value) if isinstance(value, list) else [value]


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Send one request to the file's language servers."""
    path = str(ctx.resolve(params.filePath))
    await boundary.assert_external_directory(ctx, path, kind="file")
    await ctx.ask("lsp", ["*"], always=["*"], metadata=_metadata(params, path))
    if not os.path.isfile(path):  # a directory is not a file either (OpenCode: Bun.file().exists())
        raise ToolError(f"File not found: {path}")
    project = ctx.project
    from ..errors import ConfigError
    from ..lsp.servers import LspServers, matching

    try:
        found = matching(project, path)
    except ConfigError as error:
        raise ToolError(f"The language server configuration is invalid: {error}") from None
    if not found:
        raise ToolError(NO_SERVER)
    servers = await LspServers.of(project)
    clients, errors = await servers.clients(path)
    if not clients:
        raise ToolError("; ".join(errors) or NO_SERVER)
    results: list[Any] = []
    for client in clients:
        if getattr(client.capabilities, CAPABILITY[params.operation], None) in (None, False):
            continue
        try:
            client.open_file(path)
        except OSError as error:
            raise ToolError(f"Cannot read {path}: {error.strerror or error}") from None
        results.extend(await _ask(client, params, path))
    output = (
        json.dumps(results, indent=2, ensure_ascii=False)
        if results
        else f"No results found for {params.operation}"
    )
    return ToolResult(
        title=_title(params, worktree_relative(ctx, path)), output=output, metadata={"result": results}
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters_from": parameters, "execute": execute}
