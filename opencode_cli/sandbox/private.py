"""The user's own places that no sandboxed command reaches, whatever ``read`` and ``PATH`` say.

- **Walled off** (neither read nor written): opencode's data directory (the store ``opencode.db`` with
  every session's transcript, ``mcp-auth.json``, the trust record), the host's runtime directory (its
  edit locks: :func:`~opencode_cli.paths.runtime_dir`) and the well-known credential files and
  directories of :data:`HOME_SECRETS` (moved where their tool's variable says, e.g. ``CARGO_HOME``).
  The tool-output spill directory inside the data directory is the one exception: the truncation hints
  send the model there, and the host creates its files without following links.
- **Read-only**: the user's own configuration and trusted code — the global config directory (where the
  user says which projects are trusted), ``~/.opencode``, ``OPENCODE_CONFIG`` and ``OPENCODE_CONFIG_DIR``
  — which every project loads.

Landlock only grants access beneath a path, and cannot take a sub-path back out of a grant. So a grant
that holds one of these places is replaced by grants of everything beside them (:func:`around`): each
directory on the way down is only *listed* (its entries' names, not their contents; nothing can be made,
removed or renamed in it), and each of its other entries gets the grant. A symbolic link among those
entries is given no rule of its own: what it leads to is judged where that is.
"""

from __future__ import annotations

import functools
import os
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..files import contains

#: Grants, strongest first: everything beneath (``w``), read and execute (``r``), list a directory (``l``).
KINDS = ("w", "r", "l")

#: Credential files and directories under the home directory, walled off from every sandboxed command.
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".password-store",
    ".aws/credentials",
    ".aws/sso",
    ".aws/cli",
    ".azure",
    ".config/gcloud",
    ".kube/config",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    ".config/glab-cli",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".local/share/keyrings",
)
#: The same places where a variable moves them: the variable, and the secrets beneath its value (``""``:
#: the value itself is the secret file or directory; a ``:``-separated list for ``KUBECONFIG``).
MOVED_SECRETS = (
    ("CARGO_HOME", ("credentials.toml", "credentials")),
    ("DOCKER_CONFIG", ("config.json",)),
    ("GH_CONFIG_DIR", ("hosts.yml",)),
    ("GNUPGHOME", ("",)),
    ("AWS_SHARED_CREDENTIALS_FILE", ("",)),
    ("NETRC", ("",)),
    ("KUBECONFIG", ("",)),
    ("NPM_CONFIG_USERCONFIG", ("",)),
    ("XDG_CONFIG_HOME", ("gcloud", "gh/hosts.yml", "glab-cli", "git/credentials")),
)


@dataclass(frozen=True)
class Walls:
    """The private places by real path: walled off (``None``: nothing beneath them), read-only
    (``"r"``), or open again inside a wall (``"w"``: the spill directory); ``holders``: every directory
    strictly above one of them (where a grant must be rebuilt)."""

    places: Mapping[str, str | None]
    holders: frozenset[str]
    lowered: dict[tuple[str, str], str | None] = field(default_factory=dict, compare=False, hash=False)
    """What a grant that holds no wall becomes, by (path, kind): known once asked."""

    @classmethod
    def of(cls, places: Mapping[str, str | None]) -> Walls:
        """The walls of ``places`` (real, absolute paths)."""
        holders = set()
        for place in places:
            above = os.path.dirname(place)
            while above not in holders:
                holders.add(above)
                if above == "/":
                    break
                above = os.path.dirname(above)
        return cls(dict(places), frozenset(holders))

    def allowed(self, path: str) -> str | None:
        """What the innermost wall holding ``path`` allows there (``"w"``: no wall holds it)."""
        while True:
            if path in self.places:
                return self.places[path]
            if path == "/":
                return "w"
            path = os.path.dirname(path)


#: The variables :func:`walls` reads.
_READ = (
    "HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    *(name for name, _ in MOVED_SECRETS),
)


def walls(env: Mapping[str, str], spill: str | None = None) -> Walls:
    """The private places of this environment: opencode's data directory and the credential files walled
    off, the global config directory read-only, and ``spill`` (the tool-output directory, inside the data
    directory) open as granted. Resolved again only when one of those names is made, removed or replaced
    (by a link, say) since."""
    named = _named(tuple(env.get(name) or "" for name in _READ))
    return _walls(named, tuple(_identity(path) for path, _ in named), spill)


def _identity(path: str) -> tuple[int, int, int] | None:
    """What is at ``path`` itself (device, inode, type), ``None`` when nothing is."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, stat.S_IFMT(info.st_mode)


@functools.lru_cache(maxsize=16)
def _named(values: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """The private places as the environment names them (absolute, not yet resolved)."""
    from .. import paths

    env = {name: value for name, value in zip(_READ, values, strict=True) if value}
    home = env.get("HOME") or os.path.expanduser("~")
    secrets = [str(paths.data_dir(env)), str(paths.runtime_dir(env))]
    secrets += [os.path.join(home, name) for name in HOME_SECRETS]
    for name, beneath in MOVED_SECRETS:
        for value in filter(None, env.get(name, "").split(os.pathsep)):
            secrets += [os.path.join(value, part) if part else value for part in beneath]
    # the user's own configuration and trusted code: read, never written
    config = [str(paths.config_dir(env)), os.path.join(home, ".opencode")]
    config += [env[name] for name in ("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR") if name in env]
    named: list[tuple[str, str | None]] = [(place, "r") for place in config if os.path.isabs(place)]
    named += [(place, None) for place in secrets if os.path.isabs(place)]
    return tuple(named)


@functools.lru_cache(maxsize=16)
def _walls(
    named: tuple[tuple[str, str | None], ...], identities: tuple[object, ...], spill: str | None
) -> Walls:
    places = {os.path.realpath(place): allowed for place, allowed in named}
    if spill is not None:
        places[os.path.realpath(spill)] = "w"
    return Walls.of(places)


#: A kind's strength (``w`` the strongest).
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}


def _weaker(kind: str, allowed: str | None) -> str | None:
    """``kind`` lowered to what a wall allows (``None``: nothing)."""
    if allowed is None:
        return None
    return kind if _RANK[kind] >= _RANK[allowed] else allowed


def around(grants: Iterable[tuple[str, str]], walls: Walls) -> list[tuple[str, str]]:
    """``grants`` (real path, kind) rebuilt so that none reaches into a private place further than the
    innermost wall there allows: a grant beneath a wall is lowered or dropped, a grant holding one is
    replaced by grants around it."""
    built: dict[str, str] = {}
    for path, kind in grants:
        for place, granted in _around(path, kind, walls):
            known = built.get(place, granted)
            built[place] = known if _RANK[known] <= _RANK[granted] else granted  # the stronger
    return list(built.items())


def _around(path: str, kind: str, walls: Walls) -> list[tuple[str, str]]:
    if path not in walls.holders:  # a question of names only: answered once
        key = (path, kind)
        here = walls.lowered.get(key, "")
        if here == "":
            here = walls.lowered[key] = _weaker(kind, walls.allowed(path))
        return [] if here is None else [(path, here)]
    below = [
        place
        for place in walls.places
        if place != path and contains(path, place) and (kind == "w" or os.path.lexists(place))
    ]  # nothing to read in what is not there
    return _carve(path, kind, walls, below)


def _carve(path: str, kind: str, walls: Walls, below: list[str]) -> list[tuple[str, str]]:
    """The grants of ``kind`` at ``path`` and beneath it, ``below`` the walls beneath it."""
    here = _weaker(kind, walls.allowed(path))
    below = [place for place in below if _weaker(kind, walls.places[place]) != here]  # the ones that matter
    if not below or not os.path.isdir(path):
        return [] if here is None else [(path, here)]
    ways: dict[str, list[str]] = {}  # the entry each of them is reached through
    start = len(path.rstrip("/")) + 1
    for place in below:
        ways.setdefault(place[start:].split("/", 1)[0], []).append(place)
    built = [] if here is None else [(path, "l")]
    for name, link in listing(path):
        if link:
            continue  # reached through what it leads to, judged where that is
        entry = os.path.join(path, name)
        if name in ways:
            built += _carve(entry, kind, walls, [place for place in ways[name] if place != entry])
        elif here is not None:
            built.append((entry, here))
    return built


#: Nanoseconds a directory's mtime must lie in the past for its listing to be kept: the kernel stamps
#: changes with a coarse clock, so a change in the same tick as the listing would keep the same mtime.
SETTLED_NS = 2_000_000_000
_LISTINGS: dict[str, tuple[tuple[int, int], tuple[tuple[str, bool], ...]]] = {}


def listing(directory: str) -> tuple[tuple[str, bool], ...]:
    """The entries of ``directory`` (name, whether it is a symbolic link), read again only when it changed
    (its inode or mtime); empty when it cannot be read."""
    try:
        info = os.stat(directory)
    except OSError:
        return ()
    key = (info.st_ino, info.st_mtime_ns)
    known = _LISTINGS.get(directory)
    if known is not None and known[0] == key:
        return known[1]
    try:
        with os.scandir(directory) as found:
            entries = tuple(sorted((entry.name, entry.is_symlink()) for entry in found))
    except OSError:
        return ()
    if time.time_ns() - info.st_mtime_ns > SETTLED_NS:
        _LISTINGS[directory] = (key, entries)
    return entries
