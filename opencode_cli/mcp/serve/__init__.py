"""``opencode mcp serve``: the project's tools served to any MCP client (a host, like the CLI).

``host`` (the MCP server: the tools an agent and model are offered, each call through
:meth:`~opencode_cli.session.Session.dispatch`, ``list_changed`` after a reload), ``clients`` (who a
request comes from and the session each client is served, one per client), ``roots`` (the projects of
clients' MCP roots), ``calls`` (what belongs to one ``tools/call``: its client, live progress, the asks
nobody could answer), ``rounds`` (what a request gets: the call's result, or on the newest revision its
next ask as an input-required result), ``asking`` (permission asks put to the person behind the client
through elicitation), ``questions`` (the ``question`` tool's asker, by elicitation too), ``content`` (a
call's outcome as MCP content) and ``transports`` (stdio, streamable HTTP).

Only ``opencode mcp serve`` imports this package: the ``mcp`` SDK stays out of every other command.
"""

from __future__ import annotations

from .host import ServeHost, ServeOptions

__all__ = ["ServeHost", "ServeOptions"]
