"""``project.generations``: which :class:`~opencode_cli.generation.Generation` of a project is current, the
one prepared to replace it, and the holds that keep the current one for a call or a turn.

A prepared generation is built beside the current one and swapped in at once, or, while calls hold the
current one, when the last hold closes: a call never sees its tools change under it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .generation import Generation

if TYPE_CHECKING:
    from .project import Project

Installed = Callable[[Generation, Generation], Any]


class Generations:
    """The generations of ``project``; ``warn`` receives the problems found while building them."""

    def __init__(self, project: Project, warn: Callable[[str], None]) -> None:
        self._project = project
        self._warn = warn
        self._current: Generation | None = None
        self._pending: tuple[Generation, Installed | None] | None = None
        self._holds = 0
        self._lock = threading.RLock()

    @property
    def current(self) -> Generation:
        """The generation in use; the first is built lazily, part by part, as it is asked for."""
        generation = self._current
        if generation is None:
            with self._lock:
                if self._current is None:
                    self._current = Generation(self._project, self._warn)
                generation = self._current
        return generation

    @property
    def made(self) -> Generation | None:
        """The current generation if anything asked for it already, else ``None`` (nothing is made)."""
        return self._current

    def prepare(self, changed: Iterable[str] = (), warn: Callable[[str], None] | None = None) -> Generation:
        """Build the next generation now, beside the current one (or the one waiting to be installed).

        ``changed`` are keys of the sources to rebuild (:meth:`Sources.keys
        <opencode_cli.sources.Sources.keys>` maps paths to keys); every other source keeps its tools.
        Raises :class:`~opencode_cli.errors.ConfigError` when the config cannot be read.
        """
        with self._lock:
            base = self._pending[0] if self._pending is not None else self.current
        base.registry  # noqa: B018 - the base's tools are what unchanged sources keep
        return Generation(self._project, warn or self._warn, previous=base, changed=changed).build()

    def install(self, generation: Generation, on_installed: Installed | None = None) -> bool:
        """Make ``generation`` current now, or once the last :meth:`hold` closes (``False``; a newer one
        replaces one still waiting). ``on_installed(before, after)`` is called when it is swapped in."""
        with self._lock:
            if self._holds:
                self._pending = (generation, on_installed)
                return False
            before = self._swap(generation)
        if on_installed is not None:
            on_installed(before, generation)
        return True

    def _swap(self, generation: Generation) -> Generation:
        """Make ``generation`` current (the lock is held); returns the one it replaces."""
        before = self.current
        generation.number = before.number + 1
        self._current = generation
        return before

    @contextlib.contextmanager
    def hold(self) -> Iterator[Generation]:
        """Keep the current generation for a call or a turn: no swap happens until every hold closes.

        Usable from async code and from threads; it never blocks. Yields the generation in use.
        """
        with self._lock:
            generation = self.current
            self._holds += 1
        try:
            yield generation
        finally:
            installed = None
            with self._lock:
                self._holds -= 1
                if self._holds == 0 and self._pending is not None:
                    (pending, on_installed), self._pending = self._pending, None
                    installed = (self._swap(pending), pending, on_installed)
            if installed is not None and installed[2] is not None:
                installed[2](installed[0], installed[1])

    @property
    def pending(self) -> bool:
        """Whether a prepared generation waits for the calls in flight to finish."""
        return self._pending is not None

    @property
    def in_flight(self) -> int:
        """How many holds are open."""
        return self._holds
