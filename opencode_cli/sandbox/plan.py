"""From settings to rules: the effective writable and readable lists of one call, what the kernel can
enforce, and the line a model reads when a sandboxed command fails.

Every path is made real (``~`` expanded, relative ones taken from the project, symlinks resolved) when
the plan is built, once per call; the launcher only opens them.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError
from ..files import contains
from . import landlock, private
from .settings import Settings

#: What programs need to read and run when reads are confined (``read = "project"``).
SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/dev",
    "/proc",
    "/sys",
)
#: Device files any mode may read and write (output thrown away, terminals).
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)


@dataclass(frozen=True)
class Support:
    """What this kernel can enforce: the Landlock ABI (0: none), and why not when it cannot."""

    abi: int
    reason: str = ""
    mounts: bool = False
    """Whether a command can get read-only binds in a private mount namespace (see :mod:`.mounts`)."""
    mounts_reason: str = ""

    @property
    def available(self) -> bool:
        """Whether Landlock can be used at all."""
        return self.abi >= 1

    @property
    def network(self) -> bool:
        """Whether TCP connect/bind can be refused (ABI 4 and later)."""
        return self.abi >= landlock.NETWORK_ABI

    def shortfall(self, settings: Settings) -> str | None:
        """Why ``settings`` cannot be enforced here, or ``None`` when they can."""
        if not self.available:
            return self.reason or "Landlock is not available"
        if not settings.network and not self.network:
            needed = f"ABI {landlock.NETWORK_ABI}, Linux 6.7, is needed"
            return f"Landlock ABI {self.abi} has no network rules ({needed})"
        return None


#: ``0`` in the environment: do not bind the configuration read-only (to see the degraded behaviour).
MOUNTS_ENV = "OPENCODE_SANDBOX_MOUNTS"


def support(env: Mapping[str, str] = os.environ) -> Support:
    """What the kernel supports (``OPENCODE_LANDLOCK_ABI`` can lower it: see :mod:`.landlock`;
    ``OPENCODE_SANDBOX_MOUNTS=0`` turns the read-only binds of the configuration off)."""
    abi, reason = landlock.abi(env)
    if env.get(MOUNTS_ENV, "").strip() == "0":
        return Support(abi, reason, False, f"{MOUNTS_ENV}=0")
    if abi < 1:
        return Support(abi, reason)
    from . import mounts

    return Support(abi, reason, *mounts.available())


@dataclass
class Plan:
    """The effective lists of a sandboxed call, and its :class:`~.landlock.Rules`."""

    settings: Settings
    write: list[str]
    read: list[str] = field(default_factory=list)
    """The readable roots when reads are confined (empty: everything may be read)."""
    missing: list[str] = field(default_factory=list)
    """Configured roots that do not exist (they grant nothing)."""
    protected: list[str] = field(default_factory=list)
    """The project's configuration and trusted code that exists inside the writable roots (bound
    read-only where the kernel lets us)."""
    unprotected: list[str] = field(default_factory=list)
    """The same places that do not exist yet: a command may create them (nothing to bind)."""
    private: private.Walls = field(default_factory=lambda: private.Walls({}, frozenset()))
    """The user's places kept from the command whatever the lists say (:mod:`.private`)."""

    def rules(self, abi: int, protect: bool = True) -> landlock.Rules:
        """The rules for the launcher (``protect``: with the read-only binds), built around the private
        places (``read = "all"`` too: ``/`` is granted as everything beside them)."""
        read = ["/"] if self.settings.read == "all" else self.read
        grants = [*((path, "w") for path in self.write), *((path, "r") for path in read)]
        kinds: dict[str, list[str]] = {kind: [] for kind in private.KINDS}
        for path, kind in private.around(grants, self.private):
            kinds[kind].append(path)
        return landlock.Rules(
            abi=abi,
            write=kinds["w"],
            read=kinds["r"],
            listed=kinds["l"],
            devices=[d for d in DEVICES if os.path.exists(d)],
            read_all=False,
            network=self.settings.network,
            protect=list(self.protected) if protect else [],
        )

    def note(self) -> str:
        """The line the model reads at the end of a sandboxed command's failing result."""
        s = self.settings
        if s.mode == "read-only":
            blocked = ["writing anywhere but the temporary directory"]
        else:
            blocked = [
                "writing outside the project, the worktree, the temporary directory and the writable roots"
            ]
        if s.read == "project":
            blocked.append("reading outside them, the readable roots and the system directories")
        if not s.network:
            blocked.append("TCP connections")
        return (
            f"This command ran in the {s.mode} sandbox, which blocks: {'; '.join(blocked)} "
            "(such attempts fail with permission denied)."
        )


def temp_dir(env: Mapping[str, str]) -> str:
    """The process's own temporary directory: ``TMPDIR`` (or ``TMP``, ``TEMP``) as the project sees it,
    else ``/tmp``."""
    for name in ("TMPDIR", "TMP", "TEMP"):
        value = env.get(name)
        if value:
            return value
    return "/tmp"


def real(path: str, base: Path, env: Mapping[str, str]) -> str:
    """``path`` with ``~`` expanded, made absolute against ``base``, symlinks resolved."""
    home = env.get("HOME") or os.path.expanduser("~")
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.realpath(os.path.join(base, path))


def _unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


#: What the programs of a ``bin`` directory load from beside it, in a prefix that is not a tool's own
#: (``~/.local``, a virtual environment, ``/opt/x``): never its ``share``, ``etc`` or ``state``
#: (``~/.local/share`` is every application's data, opencode's included).
PREFIX_PARTS = ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "include", "pyvenv.cfg")
#: Directories in the home directory that hold many programs' files: never granted whole.
SHARED_HOMES = (".local", ".config", ".cache", ".local/share", ".local/state")
#: A tool's home beside another that its programs need: rustup's proxies in ``~/.cargo/bin`` run the
#: toolchains of ``$RUSTUP_HOME`` (``~/.rustup``).
COMPANIONS = {".cargo": ("RUSTUP_HOME", ".rustup")}


def tool_dirs(env: Mapping[str, str]) -> list[str]:
    """Where the programs a command runs are installed, and what they load: the Python prefixes; each
    ``PATH`` directory; beside a ``bin``/``sbin`` one, its prefix's :data:`PREFIX_PARTS` — or the whole
    of a tool's own home (a dot-directory of the home directory, ``~/.cargo``, ``~/.bun``; a ``shims``
    directory's parent, ``~/.pyenv``) and its companion (``~/.rustup``); and, for a program that is a link
    elsewhere (``~/.local/bin/ruff`` → a ``uv`` tool's environment), its own directory and prefix the
    same way. Never ``/``, the home directory, a directory above it or one of :data:`SHARED_HOMES` as a
    whole. Resolved once per ``PATH`` and home."""
    return list(_tool_dirs(env.get("PATH", ""), env.get("HOME") or os.path.expanduser("~"), _homes(env)))


def _homes(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The companions' homes as the environment places them (``RUSTUP_HOME``)."""
    return tuple((name, env[name]) for name, _ in COMPANIONS.values() if env.get(name))


@functools.lru_cache(maxsize=8)
def _tool_dirs(search: str, home: str, homes: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    home = os.path.realpath(home)
    shared = {"/", home, *(os.path.join(home, name) for name in SHARED_HOMES)}

    def whole(path: str) -> bool:  # may ``path`` be granted as a whole?
        return path not in shared and not contains(path, home)

    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    todo = [os.path.realpath(entry) for entry in search.split(os.pathsep) if os.path.isabs(entry)]
    seen: set[str] = set()
    while todo:
        directory = todo.pop(0)
        if directory in seen or not whole(directory):
            continue
        seen.add(directory)
        found.append(directory)
        found += _beside(directory, home, homes, whole)
        if os.path.basename(directory) not in ("bin", "sbin") or any(
            contains(system, directory) for system in SYSTEM_READ
        ):
            continue  # the system's programs link to the system's directories
        for name, link in private.listing(directory):
            if not link:
                continue
            target = os.path.realpath(os.path.join(directory, name))
            if os.path.dirname(target) != directory:  # a program linked from elsewhere: its own place too
                todo.append(os.path.dirname(target))
    return tuple(p for p in _unique(map(os.path.realpath, found)) if whole(p))


def _beside(
    directory: str, home: str, homes: tuple[tuple[str, str], ...], whole: Callable[[str], bool]
) -> list[str]:
    """What the programs of ``directory`` load from beside it (see :func:`tool_dirs`)."""
    kind, prefix = os.path.basename(directory), os.path.dirname(directory)
    if kind not in ("bin", "sbin", "shims") or prefix == "/" or contains(prefix, home):
        return []
    if any(contains(system, prefix) for system in SYSTEM_READ):
        return []  # read already
    tool = os.path.basename(prefix)
    mine = kind == "shims" or (os.path.dirname(prefix) == home and tool.startswith("."))
    if mine and whole(prefix):  # a tool's own home
        if tool not in COMPANIONS:
            return [prefix]
        variable, default = COMPANIONS[tool]
        return [prefix, dict(homes).get(variable) or os.path.join(home, default)]
    return [os.path.join(prefix, part) for part in PREFIX_PARTS]


def build(
    settings: Settings,
    *,
    directory: Path,
    worktree: Path | None,
    env: Mapping[str, str],
    spill: Path | None = None,
) -> Plan:
    """The plan of one call in ``directory`` (see the README's sandbox section for the lists)."""
    base = Path(directory)
    temp = real(temp_dir(env), base, env)
    project = [real(str(directory), base, env)]
    if worktree is not None:
        project.append(real(str(worktree), base, env))
    configured = [real(p, base, env) for p in settings.writable]
    if settings.mode == "read-only":
        write = [temp]
    else:
        write = [*project, temp, *([real(str(spill), base, env)] if spill is not None else []), *configured]
    read: list[str] = []
    readable = [real(p, base, env) for p in settings.readable]
    if settings.read == "project":
        read = [*project, *configured, *readable, *SYSTEM_READ, *tool_dirs(env)]
        read = [p for p in _unique(read) if p not in write]
    missing = [p for p in [*configured, *readable] if not os.path.exists(p)]
    write = _unique(write)
    protected, unprotected = _config_in(write, directory, worktree, env)
    readable_now = [p for p in read if os.path.exists(p)]
    walled = private.walls(env, None if spill is None else str(spill))
    return Plan(settings, write, readable_now, missing, protected, unprotected, walled)


def _config_in(
    write: list[str], directory: Path, worktree: Path | None, env: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """The project's configuration places beneath a writable root: those that exist, those that do not."""
    from ..boundary import config_places

    places = config_places(directory, worktree, env)
    inside = [p for p in (*places.files, *places.directories) if any(contains(root, p) for root in write)]
    present = [p for p in inside if os.path.lexists(p)]
    return present, [p for p in inside if p not in present]


class SandboxRequired(ToolError):
    """``required = true`` and the kernel cannot enforce the mode: the command is not run."""


def warn(message: str) -> None:
    """The one-line warning of a command that runs with less of a sandbox than asked (on stderr)."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def confine(
    settings: Settings,
    *,
    directory: Path,
    worktree: Path | None,
    env: Mapping[str, str],
    spill: Path | None = None,
    what: str = "the command",
) -> tuple[Plan, landlock.Rules] | None:
    """The plan and rules for one command (or server) under ``settings``, or ``None`` when it runs
    unsandboxed: mode off, or no Landlock (with a warning). Where the kernel lacks network rules the
    filesystem rules still apply, with a warning. Raises :class:`SandboxRequired` with ``required = true``
    when the kernel falls short."""
    if not settings.on:
        return None
    found = support(env)
    problem = found.shortfall(settings)
    if problem is not None:
        if settings.required:
            raise SandboxRequired(
                f"The {settings.mode} sandbox is required (sandbox.required) but cannot be enforced: "
                f"{problem}. {what[0].upper() + what[1:]} was not run."
            )
        if not found.available:
            warn(f"sandbox {settings.mode} not enforced, {what} runs unsandboxed: {problem}")
            return None
        warn(f"sandbox {settings.mode}: TCP connections are not blocked for {what}: {problem}")
    plan = build(settings, directory=directory, worktree=worktree, env=env, spill=spill)
    return plan, plan.rules(found.abi, found.mounts)
