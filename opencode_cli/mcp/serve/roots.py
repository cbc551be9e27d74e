"""The projects ``opencode mcp serve`` serves when it follows its clients' roots.

Started without ``--directory``, the server serves the directory it was started in until a client offers
MCP roots: then that client's project is its first ``file://`` root that is a directory (other schemes
are skipped), and follows the client's ``notifications/roots/list_changed``. Over HTTP a root is taken
only inside the served directory or a ``--roots-within`` one (:func:`choose`: a client holding the token
must not serve itself the rest of the machine); the stdio client is the user's own application, whose
roots are followed wherever they are. :class:`RootProjects` owns those projects: each is opened on first
use (its MCP servers connecting, its tool files watched), shared by the clients naming it, and closed
when the last of them leaves, or when the server stops. The started directory's project belongs to the
server itself and is never closed here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import mcp_types as types
from pydantic import BaseModel

if TYPE_CHECKING:
    from ...project import Project

#: Seconds a client gets to answer ``roots/list``.
ROOTS_TIMEOUT = 10.0


class ListedRoot(BaseModel):
    """A root as a client listed it: any URI (the SDK's own ``Root`` takes only ``file://`` ones, and
    would refuse a whole list for one root of another scheme, which is to be skipped)."""

    uri: str
    name: str | None = None


class ListedRoots(types.Result):
    """``roots/list``'s answer, each root kept whatever its scheme (the result type the server asks for)."""

    roots: list[ListedRoot]


@dataclass(frozen=True)
class Choice:
    """What a client's roots select: the first acceptable directory (``None``: none), and the ``file://``
    directories before it that were refused for lying outside the allowed ones."""

    directory: Path | None
    refused: tuple[Path, ...] = ()


def choose(roots: Iterable[Any], within: Sequence[Path] | None = None) -> Choice:
    """The first ``file://`` root that is a directory on this machine (other schemes, and paths that are
    not directories here, are skipped) and, when ``within`` is given, lies inside one of those directories
    once links are resolved (a root outside them is refused, and the next one tried)."""
    allowed = None if within is None else [place.resolve() for place in within]
    refused: list[Path] = []
    for root in roots:
        try:
            uri = urlparse(str(getattr(root, "uri", "")))
        except ValueError:  # not a URI at all (an unclosed "[" of an IPv6 host): skipped as another scheme
            continue
        if uri.scheme != "file" or uri.netloc not in ("", "localhost"):
            continue
        path = Path(unquote(uri.path))
        try:
            if not (path.is_absolute() and path.is_dir()):
                continue
        except (OSError, ValueError):  # a name the system cannot take (too long, a NUL byte)
            continue
        path = path.resolve()
        if allowed is None or any(path.is_relative_to(place) for place in allowed):
            return Choice(path, tuple(refused))
        refused.append(path)
    return Choice(None, tuple(refused))


def declares_roots(outbound: Any) -> bool:
    """Whether the client behind ``outbound`` (the SDK's server session) said it has roots."""
    capabilities = getattr(outbound, "client_capabilities", None)
    return getattr(capabilities, "roots", None) is not None


@dataclass
class _Open:
    """A project opened for clients' roots, with what follows its changes."""

    project: Project
    watcher: Any
    follower: asyncio.Future[None]
    opening: asyncio.Future[None]
    users: int = 0


class RootProjects:
    """The projects of clients' roots, by directory (``main``: the server's own, never closed here)."""

    def __init__(
        self,
        main: Project,
        prepare: Callable[[Project], Any],
        follow: Callable[[Any, Project], Any],
        warn: Callable[[str], None],
    ) -> None:
        self.main = main
        self._prepare = prepare
        self._follow = follow
        self._warn = warn
        self._open: dict[Path, _Open] = {}
        self._lock = asyncio.Lock()

    async def acquire(self, directory: Path) -> Project:
        """The project of ``directory``, opened if no client uses it yet (a broken config raises)."""
        if directory == self.main.directory:
            return self.main
        async with self._lock:
            entry = self._open.get(directory)
            if entry is None:
                entry = await self._start(directory)
                self._open[directory] = entry
            entry.users += 1
            return entry.project

    async def _start(self, directory: Path) -> _Open:
        from ...project import Project

        # The default trust, never trusted=True: the root's own tool files, MCP servers and wider rules take
        # effect only if the user trusted that directory (a client's root cannot grant it).
        project = Project(directory, warn=self._warn)
        try:
            watch = self._prepare(project)  # the agent, the model and the tools, checked now
            watcher = project.watch(**watch)
            await watcher.start()
        except BaseException:
            await project.aclose()
            raise
        follower = asyncio.ensure_future(self._follow(watcher, project))
        opening = asyncio.ensure_future(project.open())  # its MCP servers join as each one is ready
        return _Open(project, watcher, follower, opening)

    def opening(self, project: Project) -> asyncio.Future[None] | None:
        """How the MCP servers of a root's ``project`` are connecting (``None``: not a root's project)."""
        entry = self._open.get(project.directory)
        return entry.opening if entry is not None and entry.project is project else None

    async def release(self, project: Project) -> None:
        """A client no longer serves ``project``: closed when it was the last."""
        if project is self.main:
            return
        async with self._lock:
            entry = self._open.get(project.directory)
            if entry is None or entry.project is not project:
                return
            entry.users -= 1
            if entry.users > 0:
                return
            del self._open[project.directory]
        await _close(entry)

    async def aclose(self) -> None:
        """Close every project opened for roots."""
        async with self._lock:
            entries, self._open = list(self._open.values()), {}
        for entry in entries:
            await _close(entry)


async def _close(entry: _Open) -> None:
    for task in (entry.opening, entry.follower):
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    with contextlib.suppress(Exception):
        await entry.watcher.stop()
    await entry.project.aclose()
