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

The builder works on a thread of its own, never on an event loop and never in the thread that asks: a
request only records what changed and wakes it, so an MCP server that connects on a serving loop never
stalls that loop for a build. The asker may wait until a build carries its request (``wait=True``, from
a thread that runs no loop) or not. Observers are told on the builder's thread too, whichever thread
installed the generation (a held one is installed by the thread that closes the last hold), so an
observer never runs on a loop: it makes the offer a session would get, ``async def`` hooks included
(they are awaited on the project's portal, as for any sync caller), and hands what it found to its own
loop.

The thread decides whether to sleep and takes what to build under one lock, the lock every request
takes: no request can arrive between "nothing is left" and "asleep" and be left unbuilt.
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
        self._building = False
        self._untold: list[Built] = []
        """Builds installed by another thread (a hold that closed), to be told on the builder's thread."""
        self._thread: threading.Thread | None = None
        self._closed = False
        self._waiting: Built | None = None
        self._observers: list[Observer] = []

    # -- requests -------------------------------------------------------------------------------------------

    def request(
        self, keys: Iterable[str] = (), files: Iterable[str | Path] = (), *, wait: bool = True
    ) -> int:
        """Ask for a new generation with the sources of ``keys`` (and of the changed ``files``) rebuilt.

        Returns the request's ticket at once; the builder's thread builds it (with every request that
        arrives before that build begins). With ``wait``, this thread waits until a build carries it
        (never the builder's own thread: an observer asking again does not wait on itself). A request
        made after :meth:`close` is not built.
        """
        with self._lock:
            self._keys.update(keys)
            self._files.update(str(name) for name in files)
            self._asked += 1
            ticket = self._asked
            if not self._closed:
                self._start()
                self._changed.notify_all()
            if wait:
                self._wait_for(ticket)
        return ticket

    def wait(self) -> None:
        """Block until every request made so far is carried by a build and every observer was told of it
        (a quiet point; returns at once in the builder's own thread and once the builder is closed)."""
        with self._lock:
            self._wait_for(self._asked)

    def _wait_for(self, ticket: int) -> None:
        """Wait (the lock held) until ``ticket`` is built and nothing is left to tell."""
        if self._on_thread():
            return
        while not self._closed and (self._finished < ticket or self._untold or self._building):
            self._changed.wait()

    @property
    def finished(self) -> int:
        """The newest ticket a build carried."""
        return self._finished

    @property
    def idle(self) -> bool:
        """Whether no build runs, none is asked for and nothing is left to tell."""
        with self._lock:
            return not self._building and not self._untold and self._finished == self._asked

    def close(self) -> None:
        """Stop the builder's thread (a build in progress ends first; requests left are not built)."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and not self._on_thread():
            thread.join()

    def _on_thread(self) -> bool:
        thread = self._thread
        return thread is not None and thread.ident == threading.get_ident()

    def _start(self) -> None:
        """Start the builder's thread (the lock is held) if it is not running."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="opencode-builder", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        """The builder's thread: tell what was installed elsewhere, build what was asked, sleep when
        nothing is left (decided under the lock every request takes), until closed."""
        while True:
            with self._lock:
                while not self._closed and not self._untold and self._finished == self._asked:
                    self._changed.wait()
                if self._closed:
                    self._changed.notify_all()
                    return
                untold, self._untold = self._untold, []
                work = None
                if self._finished < self._asked:
                    work = Built(self._asked, self._keys, self._files)
                    self._keys, self._files = set(), set()
                self._building = True
            try:
                for built in untold:
                    self._tell(built)
                if work is not None:
                    self._build(work)
            finally:
                with self._lock:
                    if work is not None:
                        self._finished = work.ticket
                    self._building = False
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
        """``built`` was swapped in: told now on the builder's thread, else handed to it."""
        built.before = before
        with self._lock:
            if self._waiting is built:
                self._waiting = None
            if not self._on_thread():
                self._untold.append(built)
                self._start()
                self._changed.notify_all()
                return
        self._tell(built)

    # -- the stream -----------------------------------------------------------------------------------------

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(built)`` for every generation installed and every build that failed (on the
        builder's thread, never on a loop: an observer with a loop hands what it found to it); returns a
        function that stops it."""
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
