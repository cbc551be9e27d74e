"""The one door for change: a project's serialized builder of generations.

Every change — a tool file saved or broken, ``opencode.toml`` edited, a plugin, an MCP server that
connects, lists new tools, exits or fails — is a *request* to the project's :class:`Builder`, naming the
keys of the sources it concerns (``file:<path>``, ``mcp:<server>``…) and the files it saw. The builder
builds one generation at a time: a request that arrives while it works is coalesced into the next build
(with every other request that arrived meanwhile), never dropped. Each build starts from the newest
generation built (installed, or waiting for the calls in flight to end), so it carries every change
before it; what it installs therefore equals what a fresh process would build from the same inputs.

Hosts observe the builder's one stream (:meth:`Builder.observe`): each :class:`Built` is told once its
generation is installed (or once a build failed, the current generation kept). The watcher turns them
into reports, ``mcp serve`` into one ``notifications/tools/list_changed`` each; nobody keeps a copy of
the offer: that belongs to the generation.

The builder runs in the thread that asks when it is idle (a build is short: only the sources that
changed are built again), and a request made while another thread builds is left to that thread: the
asker may wait for it (``wait=True``) or not.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .generation import Generation
    from .project import Project


@dataclass
class Built:
    """One pass of the builder, as observers are told it."""

    ticket: int
    """The newest request this build carries (every request up to it is in it)."""
    keys: set[str] = field(default_factory=set)
    """The keys of the sources rebuilt (besides the new ones)."""
    files: set[str] = field(default_factory=set)
    """The files whose change was reported (saved tool files, config files)."""
    warnings: list[str] = field(default_factory=list)
    """Problems reported while building."""
    generation: Generation | None = None
    """The generation built (``None`` when the build failed)."""
    before: Generation | None = None
    """The generation it replaced, once installed."""
    error: str | None = None
    """Why the build failed (the current generation is kept)."""

    @property
    def ok(self) -> bool:
        """Whether a generation was built."""
        return self.error is None


Observer = Callable[[Built], Any]


class Builder:
    """The serialized builder of ``project``'s generations (see the module docstring)."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._keys: set[str] = set()
        self._files: set[str] = set()
        self._asked = 0
        self._finished = 0
        self._busy = False
        self._drainer: int | None = None
        self._waiting: Built | None = None
        self._observers: list[Observer] = []

    # -- requests -------------------------------------------------------------------------------------------

    def request(
        self, keys: Iterable[str] = (), files: Iterable[str | Path] = (), *, wait: bool = True
    ) -> int:
        """Ask for a new generation with the sources of ``keys`` (and of the changed ``files``) rebuilt.

        Returns the request's ticket. When the builder is idle, the build runs now, in this thread, until
        no request is left; when another thread builds, the request joins its next build, and with
        ``wait`` this thread waits until a build carries it.
        """
        with self._lock:
            self._keys.update(keys)
            self._files.update(str(name) for name in files)
            self._asked += 1
            ticket = self._asked
            if self._busy:
                # this thread may be the one building (an observer asking again): it never waits on itself
                while wait and self._finished < ticket and self._drainer != threading.get_ident():
                    self._changed.wait()
                return ticket
            self._busy = True
            self._drainer = threading.get_ident()
        self._drain()
        return ticket

    def wait(self) -> None:
        """Block until every request made so far is carried by a build (a quiet point)."""
        with self._lock:
            target = self._asked
            while self._finished < target and self._drainer != threading.get_ident():
                self._changed.wait()

    @property
    def finished(self) -> int:
        """The newest ticket a build carried."""
        return self._finished

    @property
    def idle(self) -> bool:
        """Whether no build runs and none is asked for."""
        with self._lock:
            return not self._busy and self._finished == self._asked

    def _drain(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._finished == self._asked:
                        return
                    keys, files, ticket = self._keys, self._files, self._asked
                    self._keys, self._files = set(), set()
                built = Built(ticket, keys, files)
                try:
                    self._build(built)
                finally:
                    with self._lock:
                        self._finished = ticket
                        self._changed.notify_all()
        finally:
            with self._lock:
                self._busy = False
                self._drainer = None
                self._changed.notify_all()

    def _build(self, built: Built) -> None:
        from .errors import ConfigError
        from .plugins import describe_exception

        project = self._project
        for name in built.files:
            _drop_bytecode(name)
        keys = built.keys | project.sources.keys(built.files)
        try:
            generation = project.generations.prepare(keys, warn=built.warnings.append)
        except Exception as error:
            built.error = str(error) if isinstance(error, ConfigError) else describe_exception(error)
            self._tell(built)
            return
        built.generation = generation
        with self._lock:
            replaced, self._waiting = self._waiting, built
        if replaced is not None and replaced.before is None:  # built, never installed: this one carries it
            built.keys |= replaced.keys
            built.files |= replaced.files
            built.warnings[:0] = replaced.warnings
        project.generations.install(
            generation, on_installed=lambda before, after: self._installed(built, before)
        )

    def _installed(self, built: Built, before: Generation) -> None:
        built.before = before
        with self._lock:
            if self._waiting is built:
                self._waiting = None
        self._tell(built)

    # -- the stream -----------------------------------------------------------------------------------------

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(built)`` for every generation installed and every build that failed (in the
        thread that installed it); returns a function that stops it."""
        self._observers.append(observer)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                self._observers.remove(observer)

        return stop

    def _tell(self, built: Built) -> None:
        for observer in list(self._observers):
            try:
                observer(built)
            except Exception as error:
                from .plugins import describe_exception

                self._project.warn(f"an observer of the tools failed: {describe_exception(error)}")


def _drop_bytecode(path: str) -> None:
    """Forget a changed file's cached bytecode (an edit within the same second, at the same size, would
    otherwise be taken for the cached version)."""
    if not path.endswith(".py"):
        return
    from .nofollow import unlink

    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        cached = importlib.util.cache_from_source(path)
        folder, name = os.path.split(cached)  # <dir>/__pycache__/<name>: never through a planted link
        unlink(os.path.dirname(folder), [os.path.basename(folder)], name)
