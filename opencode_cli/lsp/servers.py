"""The language servers of a project: which serve a file, their clients (project services), their state.

:func:`matching` answers, without starting or importing anything heavy, which servers would serve a file:
those of the config (``[lsp.NAME]``, built-ins first) that are not disabled, whose extensions match, and
whose command is found, one per built-in group. :class:`LspServers` (itself a service, key ``lsp``) starts
a matching server on first use, one per (server, root) under the key ``lsp:NAME:ROOT``, reuses it for the
project's lifetime, and starts it again when it was lost (it exited or was killed). A server that failed
to start or hung while checking a file after an edit is set aside for later edits (each edit would
otherwise pay the bound again) and reported once; the ``lsp`` tool still tries it and says what failed.

A server whose program is found but fails to start is remembered in the cache directory
(``lsp-failures.json``: its command and the error, with what it said on stderr) until it starts with that
command, so that ``opencode lsp list`` shows it ``failed``, not merely ``found``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..services import Service
from .config import ServerSpec, root_for, servers

if TYPE_CHECKING:
    from ..project import Project
    from .client import LspClient

#: Seconds a server may take to start and answer ``initialize``.
START_TIMEOUT = 30.0
#: Seconds one request of the ``lsp`` tool may take.
REQUEST_TIMEOUT = 30.0
#: The file (in the cache directory) of the servers that failed to start, by name.
FAILURES_FILE = "lsp-failures.json"


def specs(project: Project) -> list[ServerSpec]:
    """Every server of the project's config (built-ins first), warnings reported once."""
    found, warnings = servers(project.config.data)
    for warning in warnings:
        project.warn(warning)
    return found


@dataclass(frozen=True)
class Match:
    """A server that serves a file: its spec, its resolved command and the root it runs in."""

    spec: ServerSpec
    argv: tuple[str, ...]
    root: Path

    @property
    def key(self) -> str:
        """The key of its service: ``lsp:NAME:ROOT``."""
        return f"lsp:{self.spec.name}:{self.root}"


def available(
    all_specs: list[ServerSpec], env: Mapping[str, str]
) -> list[tuple[ServerSpec, list[str] | None]]:
    """Each enabled server with its resolved command (``None``: not found); of a built-in group, the
    servers after the first found one are left out."""
    taken: set[str] = set()
    result = []
    for spec in all_specs:
        if spec.disabled:
            continue
        if spec.group is not None and spec.group in taken:
            continue
        argv = spec.argv(env)
        if argv is None and spec.explicit:
            argv = list(spec.command)  # starting it will say what is wrong
        if argv is not None and spec.group is not None:
            taken.add(spec.group)
        result.append((spec, argv))
    return result


def matching(project: Project, path: str | Path) -> list[Match]:
    """The servers that serve ``path`` (found on this machine), each with its root; cheap, imports nothing."""
    file = Path(path)
    candidates = [spec for spec in specs(project) if not spec.disabled and spec.handles(file)]
    if not candidates:
        return []
    top = project.root
    return [
        Match(spec, tuple(argv), root_for(spec, file, top))
        for spec, argv in available(candidates, project.env)
        if argv is not None
    ]


class LspServers(Service):
    """The project's language servers (the service ``lsp``): their clients and what was set aside."""

    name = "lsp"

    def __init__(self, project: Project) -> None:
        self.project = project
        #: Servers set aside for diagnostics after edits (failed to start or hung), with the reason.
        self.set_aside: dict[str, str] = {}

    @staticmethod
    async def of(project: Project) -> LspServers:
        """The project's :class:`LspServers`, created on first use."""
        return await project.services.get("lsp", lambda: LspServers(project))

    async def client(self, match: Match) -> LspClient:
        """The running client for ``match``, started now (or again, when it was lost)."""
        from .client import LspClient

        services = self.project.services
        current = services.peek(match.key)
        if isinstance(current, LspClient) and (current.lost or current.argv != list(match.argv)):
            await services.stop(match.key)
        env = dict(self.project.env)

        def factory() -> LspClient:
            return LspClient(
                match.spec,
                list(match.argv),
                match.root,
                env,
                start_timeout=START_TIMEOUT,
                request_timeout=REQUEST_TIMEOUT,
            )

        try:
            client = await services.get(match.key, factory)
        except ToolError as error:
            reason = error.__cause__ if isinstance(error.__cause__, ToolError) else error
            remember_failure(self.project, match.spec.name, list(match.argv), str(reason))
            raise
        if not isinstance(current, LspClient) or current.lost:
            remember_failure(self.project, match.spec.name, list(match.argv), None)  # it starts now
        return client

    async def clients(self, path: str) -> tuple[list[LspClient], list[str]]:
        """The clients of every server for ``path`` and the errors of those that could not start."""
        clients, errors = [], []
        for match in matching(self.project, path):
            try:
                clients.append(await self.client(match))
            except ToolError as error:
                errors.append(str(error))
        return clients, errors

    def statuses(self) -> list[dict[str, Any]]:
        """Every server with its state, what runs of it now and why it was set aside."""
        return statuses(self.project, self.set_aside)


def statuses(project: Project, set_aside: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every configured and built-in server: found or not (``found`` is the program's path), running or
    not (``running`` lists the roots it runs for), set aside or not (``opencode lsp list``)."""
    running: dict[str, list[str]] = {}
    services = project.started_services  # never create the services only to look at them
    if services is not None:
        for status in services.statuses():
            if status.name.startswith("lsp:") and status.state == "running":
                _, name, root = status.name.split(":", 2)
                running.setdefault(name, []).append(root)
    resolved = {spec.name: argv for spec, argv in available(specs(project), project.env) if argv is not None}
    failures = _failures(project)
    rows = []
    for spec in specs(project):
        row = spec.as_dict()
        failure = failures.get(spec.name) or {}
        row.update(
            found=None if spec.disabled else spec.executable(project.env),
            used=spec.name in resolved,
            running=running.get(spec.name, []),
            set_aside=(set_aside or {}).get(spec.name),
            failed=failure.get("error") if failure.get("command") == resolved.get(spec.name) else None,
        )
        rows.append(row)
    return rows


def _failures(project: Project) -> dict[str, dict[str, Any]]:
    import json

    from .. import paths

    try:
        data = json.loads((paths.cache_dir(project.env) / FAILURES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember_failure(project: Project, name: str, command: list[str], error: str | None) -> None:
    """Keep (``error``) or forget (``None``) that server ``name`` failed to start with ``command``; a
    cache: written atomically, a failure to write is ignored."""
    import json

    from .. import paths

    failures = _failures(project)
    if error is None and name not in failures:
        return
    if error is None:
        del failures[name]
    else:
        failures[name] = {"command": command, "error": error}
    from ..nofollow import replace

    with contextlib.suppress(OSError):
        replace(paths.cache_dir(project.env) / FAILURES_FILE, json.dumps(failures).encode("utf-8"))
