"""The ``external_directory`` guard (core spec §5), symlink-aware.

A path is inside the project when its real location (symlinks resolved; for a path that does not exist
yet, the real location of its nearest existing ancestor plus the rest) lies under the project directory
or under the git worktree. Anything else needs the ``external_directory`` permission, asked once per
call with the pattern ``<dir>/*``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import stat
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from . import files
from .context import ToolContext
from .errors import ToolError
from .files import contains
from .record import Record

Kind = Literal["file", "directory"]


def real(path: str | Path) -> str:
    """The real absolute path: symlinks resolved as far as the path exists."""
    return os.path.realpath(os.path.abspath(path))


@functools.lru_cache(maxsize=64)
def _real_root(path: str) -> str:
    return real(path)


def real_root(path: str | Path) -> str:
    """:func:`real` of a project's directory or worktree, resolved once per process: what a call's target
    is judged against. The root the project started in stays the one calls are judged against, even if
    a link is planted on the way to it later (a root resolved again would follow such a link, and what it
    points to would count as inside); and a call no longer walks it component by component (a system
    call each, on the loop)."""
    return _real_root(str(path))


def is_inside(target: str | Path, directory: str | Path, worktree: str | Path | None) -> bool:
    """Whether ``target`` is inside the project rooted at ``directory`` (and its git worktree)."""
    full = real(target)
    if contains(real_root(directory), full):
        return True
    return worktree is not None and contains(real_root(worktree), full)


def external_pattern(target: str | Path, kind: Kind = "file") -> tuple[str, str]:
    """``(directory, pattern)`` for an outside target: its real directory and ``<dir>/*``."""
    full = real(target)
    folder = full if kind == "directory" else os.path.dirname(full)
    return folder, os.path.join(folder, "*").replace("\\", "/")


async def assert_external_directory(
    ctx: ToolContext,
    target: str | Path | None,
    *,
    kind: Kind = "file",
    bypass: bool = False,
) -> bool:
    """Ask ``external_directory`` when ``target`` is outside the project; returns whether it asked.

    Raises the permission error when the ask is denied or rejected.
    """
    if not target or bypass:
        return False
    if is_inside(target, ctx.directory, ctx.worktree):
        return False
    folder, pattern = external_pattern(target, kind)
    await ctx.ask(
        "external_directory",
        [pattern],
        always=[pattern],
        metadata={"filepath": real(target), "parentDir": folder},
    )
    return True


# -- judging what was opened ------------------------------------------------------------------------------
#
# A path judged before it is opened may lead somewhere else by the time it is opened (a symlink on it can
# be changed in between). What is judged instead is the file a descriptor holds: where it really is
# (:func:`files.opened_location`), a location already resolved and never resolved again.


def is_inside_location(full: str, directory: str | Path, worktree: str | Path | None) -> bool:
    """:func:`is_inside` for a location that is already real: ``full`` itself is not resolved again."""
    if contains(real_root(directory), full):
        return True
    return worktree is not None and contains(real_root(worktree), full)


async def assert_external_location(ctx: ToolContext, full: str, *, kind: Kind = "file") -> bool:
    """:func:`assert_external_directory` for a location that is already real (such as the one
    :func:`opened_location` gives): judged and asked about as it is, never resolved again."""
    if is_inside_location(full, ctx.directory, ctx.worktree):
        return False
    folder = full if kind == "directory" else os.path.dirname(full)
    pattern = os.path.join(folder, "*").replace("\\", "/")
    await ctx.ask(
        "external_directory",
        [pattern],
        always=[pattern],
        metadata={"filepath": full, "parentDir": folder},
    )
    return True


@asynccontextmanager
async def pinned(
    ctx: ToolContext, path: str, *, bypass: bool = False, follow: bool = True
) -> AsyncIterator[files.Target]:
    """Pin ``path`` for a write (:func:`files.pin`) and judge where the pinned file really is, asking
    ``external_directory`` for that location when it is outside the project; the directory is let go on
    exit. Whatever is read, written or removed through the target stays where it was judged, however the
    path's symlinks change meanwhile.

    A path that cannot be pinned (a parent that is not a directory, no permission…) is judged by its name
    before the error is raised, so the error says nothing about an outside place that was not allowed.
    """
    try:
        target = await asyncio.to_thread(functools.partial(files.pin, path, follow=follow))
    except OSError:
        await assert_external_directory(ctx, path, bypass=bypass)
        raise
    try:
        if not bypass:
            await assert_external_location(ctx, target.location)
        yield target
    finally:
        target.close()


class Opened(Record):
    """A file or directory held open for a child process (ripgrep) to work on, and where it really is."""

    __slots__ = ("fd", "is_dir", "location")

    def __init__(self, fd: int, location: str, is_dir: bool) -> None:
        self.fd = fd
        self.location = location
        self.is_dir = is_dir

    @property
    def for_child(self) -> str:
        """A path naming exactly the opened file in a child process started with ``pass_fds=(fd,)``: its
        descriptor's entry under ``/proc/self/fd`` where the system has one, else the real location."""
        return f"/proc/self/fd/{self.fd}" if os.path.isdir("/proc/self/fd") else self.location


@asynccontextmanager
async def opened(ctx: ToolContext, path: str, *, bypass: bool = False) -> AsyncIterator[Opened | None]:
    """Open ``path`` first, then judge where the opened file or directory really is (asking
    ``external_directory`` when outside); closed on exit. ``None`` when it cannot be opened (absent, no
    permission): then it is judged by its name, and the caller reports the problem as before.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # non-blocking: opening a FIFO must not hang
    try:
        fd = await asyncio.to_thread(os.open, path, flags)
    except OSError:
        exists = await asyncio.to_thread(os.path.isdir, path)
        await assert_external_directory(ctx, path, kind="directory" if exists else "file", bypass=bypass)
        yield None
        return
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        location = await asyncio.to_thread(files.opened_location, fd, path)
        if location is None:
            raise ToolError(f"Cannot search {path}: it changed while it was being opened")
        if not bypass:
            await assert_external_location(ctx, location, kind="directory" if is_dir else "file")
        yield Opened(fd, location, is_dir)
    finally:
        os.close(fd)


# -- the project's own configuration and trusted code (the ``config`` permission) -----------------------
#
# A file the project loads as configuration or code at start (its config files, everything under a
# ``.opencode`` directory, the global config directory) changes the rules the model works under: writing
# it asks ``config`` on top of ``edit``. The sandbox keeps commands from the same places (see
# :mod:`opencode_cli.sandbox.protect`).

CONFIG_PERMISSION = "config"
#: Names under a config directory that are the agents' own files, not loaded as configuration.
CONFIG_EXEMPT = ("plans",)
#: What the ``config`` permission covers, for ``permissions check`` and the docs.
CONFIG_COVERS = (
    "write, edit and apply_patch of opencode.toml, opencode.json and opencode.jsonc (in the project "
    "directory and its parents up to the worktree), of everything under .opencode/ there and ~/.opencode/ "
    "(except plans/), and of the global config directory; and a bash command that grants or withdraws "
    "workspace trust (opencode trust/untrust, opencode --trust, OPENCODE_TRUST=…)"
)


class ConfigPlaces(Record):
    """The real paths of a project's configuration: files, and directories whose whole content counts."""

    __slots__ = ("directories", "files")

    def __init__(self, files: tuple[str, ...], directories: tuple[str, ...]) -> None:
        self.files = files
        self.directories = directories

    def covers(self, location: str) -> bool:
        """Whether the real ``location`` is one of them (or beneath one, not in an exempt folder)."""
        if location in self.files:
            return True
        for folder in self.directories:
            if contains(folder, location):
                return not any(contains(os.path.join(folder, name), location) for name in CONFIG_EXEMPT)
        return False


def config_places(directory: str | Path, worktree: str | Path | None, env: Mapping[str, str]) -> ConfigPlaces:
    """Where the project's configuration and trusted code live (whether or not they exist yet): in the
    project directory and each parent up to the worktree, ``opencode.toml``/``.json``/``.jsonc`` and
    ``.opencode/``; ``~/.opencode/``; the global config directory, ``OPENCODE_CONFIG`` and
    ``OPENCODE_CONFIG_DIR``. Project config is covered even when ``OPENCODE_DISABLE_PROJECT_CONFIG`` is
    set."""
    from . import paths
    from .config import FILE_NAME, JSON_NAMES

    start = Path(real(directory))
    chain = [start]
    if worktree is not None:
        top = Path(real(worktree))
        chain += [parent for parent in start.parents if parent.is_relative_to(top)]
    files = [str(folder / name) for folder in chain for name in (*JSON_NAMES, FILE_NAME)]
    folders = [str(folder / ".opencode") for folder in chain]
    folders += [str(paths.home_dir(env) / ".opencode"), str(paths.config_dir(env))]
    if env.get("OPENCODE_CONFIG"):
        files.append(env["OPENCODE_CONFIG"])
    if env.get("OPENCODE_CONFIG_DIR"):
        folders.append(env["OPENCODE_CONFIG_DIR"])
    return ConfigPlaces(tuple(dict.fromkeys(map(real, files))), tuple(dict.fromkeys(map(real, folders))))


def config_pattern(location: str, directory: str | Path, worktree: str | Path | None) -> str:
    """The ``config`` pattern of a real location: relative to the worktree (or the project directory)
    when inside, else the location itself."""
    base = real(worktree or directory)
    return os.path.relpath(location, base).replace("\\", "/") if contains(base, location) else location


async def ask_config(ctx: ToolContext, locations: Iterable[str]) -> None:
    """Ask ``config`` for the real ``locations`` that are the project's configuration or trusted code
    (nothing when none is); raises the permission error when denied or rejected."""
    places = config_places(ctx.directory, ctx.worktree, ctx.env)
    patterns = list(
        dict.fromkeys(
            config_pattern(location, ctx.directory, ctx.worktree)
            for location in locations
            if places.covers(location)
        )
    )
    if patterns:
        await ctx.ask(
            CONFIG_PERMISSION,
            patterns,
            always=patterns,
            metadata={"filepath": ", ".join(patterns), "files": patterns},
        )
