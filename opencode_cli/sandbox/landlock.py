"""A small ctypes binding to Linux's Landlock LSM: what the kernel supports, and restricting this process.

Only the standard library is imported: the launcher (:mod:`.launcher`) runs this file as a plain module
of its own directory, before it becomes the command, so it must not need the package.

:func:`abi` is the Landlock ABI version the kernel offers (0: none). ``OPENCODE_LANDLOCK_ABI`` in the
environment lowers it, for a test or a user who wants to see the degraded behaviour: ``0`` makes the
binding report Landlock unavailable, ``3`` a kernel without network rules. :func:`restrict` applies a
:class:`Rules` to the calling process (and so to everything it will start): ``no_new_privs``, one ruleset,
``landlock_restrict_self``. A rule's path is opened with ``O_PATH``; a path that does not exist is skipped.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys

TYPE_CHECKING = False  # not ``typing``'s: the launcher imports this module, and typing is slow to import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ABI_ENV = "OPENCODE_LANDLOCK_ABI"
#: Syscall numbers by machine (they are the same on every architecture that has them, since 5.13).
_SYSCALLS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights (ABI 1 unless noted).
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
# Network access rights (ABI 4).
BIND_TCP = 1 << 0
CONNECT_TCP = 1 << 1

#: The rights that apply to a file (a rule on a file may grant only these).
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
NETWORK_ABI = 4


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_LIBC: list[Any] = []


def _libc() -> Any:
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _call(function: Any, *args: Any) -> int:
    """A variadic C call with every integer passed as a ``long`` (as the kernel reads syscall arguments)."""
    return int(function(*(ctypes.c_long(a) if isinstance(a, int) else a for a in args)))


_KERNEL: list[tuple[int, str]] = []


def kernel_abi() -> tuple[int, str]:
    """The kernel's own Landlock ABI version and, when it is 0, why (not Linux, no Landlock, disabled);
    asked once per process."""
    if not _KERNEL:
        _KERNEL.append(_ask_kernel())
    return _KERNEL[0]


def _ask_kernel() -> tuple[int, str]:
    if not sys.platform.startswith("linux"):
        return 0, "Landlock is a Linux security module; this is " + sys.platform
    try:
        libc = _libc()
    except OSError as error:  # pragma: no cover - a Linux without a C library
        return 0, f"the C library could not be loaded ({error})"
    version = _call(libc.syscall, _SYSCALLS["create_ruleset"], None, 0, _CREATE_RULESET_VERSION)
    if version >= 1:
        return int(version), ""
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return 0, "this kernel has no Landlock (landlock_create_ruleset: ENOSYS; Linux 5.13+ is needed)"
    if code == errno.EOPNOTSUPP:
        return 0, "Landlock is built in but not enabled (add landlock to the kernel's lsm= boot parameter)"
    return 0, f"landlock_create_ruleset failed: {os.strerror(code)}"


def abi(env: Mapping[str, str] = os.environ) -> tuple[int, str]:
    """The Landlock ABI version to use, and why it is 0 when it is: the kernel's, lowered by
    ``OPENCODE_LANDLOCK_ABI`` when that is set to a smaller number."""
    version, reason = kernel_abi()
    override = env.get(ABI_ENV, "").strip()
    if override.isdigit() and int(override) < version:
        version = int(override)
        reason = f"{ABI_ENV}={override} reports Landlock unavailable" if version == 0 else ""
    return version, reason


def fs_rights(version: int) -> int:
    """Every filesystem right the ABI ``version`` knows (the rights a ruleset handles)."""
    rights = (MAKE_SYM << 1) - 1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


class Rules:
    """What a sandboxed process may touch. Paths are real (symlinks resolved) and absolute.

    ``write``: full access beneath each path; ``read``: read and execute beneath each path (or ``/`` as a
    whole when ``read_all``); ``listed``: directories whose entries may be listed (and nothing more: the
    way down to a place kept out, see :mod:`.private`); ``devices``: files such as ``/dev/null`` that
    may be read and written;
    ``network``: whether TCP ``connect``/``bind`` stay allowed (refused otherwise, on ABI 4 and later);
    ``protect``: paths inside the writable roots bound read-only in a private mount namespace first
    (see :mod:`mounts`). A plain class (no dataclasses): the launcher imports this module between fork
    and exec.
    """

    __slots__ = ("abi", "devices", "listed", "network", "protect", "read", "read_all", "write")

    def __init__(
        self,
        abi: int,
        write: list[str] | None = None,
        read: list[str] | None = None,
        devices: list[str] | None = None,
        read_all: bool = True,
        network: bool = False,
        protect: list[str] | None = None,
        listed: list[str] | None = None,
    ) -> None:
        self.abi = abi
        self.write = list(write or [])
        self.read = list(read or [])
        self.devices = list(devices or [])
        self.read_all = read_all
        self.network = network
        self.protect = list(protect or [])
        self.listed = list(listed or [])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rules) and self.as_args() == other.as_args()

    def __repr__(self) -> str:
        return f"Rules({' '.join(self.as_args())})"

    def as_args(self) -> list[str]:
        """The rules as command-line words (what the launcher receives): ``abi=N``, ``network=0|1``,
        ``read_all=0|1``, then ``w:PATH``, ``r:PATH``, ``l:PATH``, ``d:PATH`` and ``p:PATH`` for each
        path."""
        words = [f"abi={self.abi}", f"network={int(self.network)}", f"read_all={int(self.read_all)}"]
        words += [f"w:{path}" for path in self.write]
        words += [f"r:{path}" for path in self.read]
        words += [f"l:{path}" for path in self.listed]
        words += [f"d:{path}" for path in self.devices]
        words += [f"p:{path}" for path in self.protect]
        return words

    @classmethod
    def from_args(cls, words: list[str]) -> Rules:
        """The inverse of :meth:`as_args`."""
        rules = cls(0)
        lists = {"w": rules.write, "r": rules.read, "l": rules.listed, "d": rules.devices, "p": rules.protect}
        for word in words:
            kind, _, value = word.partition(":")
            if kind in lists and value:
                lists[kind].append(value)
                continue
            key, _, number = word.partition("=")
            if key == "abi":
                rules.abi = int(number)
            elif key == "network":
                rules.network = number == "1"
            elif key == "read_all":
                rules.read_all = number == "1"
            else:
                raise ValueError(f"not a rule: {word!r}")
        return rules


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def restrict(rules: Rules) -> None:
    """Confine the calling process and its future children to ``rules`` (irreversible).

    Raises :class:`OSError` when the kernel refuses; the caller must then not go on to run the command.
    """
    if rules.abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    libc = _libc()
    handled = fs_rights(rules.abi)
    attr = _RulesetAttr(
        handled, BIND_TCP | CONNECT_TCP if rules.abi >= NETWORK_ABI and not rules.network else 0
    )
    size = ctypes.sizeof(_RulesetAttr) if attr.handled_access_net else ctypes.sizeof(ctypes.c_uint64)
    ruleset = _check(
        _call(libc.syscall, _SYSCALLS["create_ruleset"], ctypes.byref(attr), size, 0),
        "landlock_create_ruleset",
    )
    try:
        read = READ_RIGHTS | (IOCTL_DEV if rules.abi >= 5 else 0)
        grants = [("/", read)] if rules.read_all else []
        grants += [(path, read) for path in rules.read]
        grants += [(path, READ_DIR) for path in rules.listed]
        grants += [(path, handled) for path in rules.write]
        grants += [(path, handled & FILE_RIGHTS) for path in rules.devices]
        for path, rights in grants:
            _add_path(libc, ruleset, path, rights & handled)
        _check(_call(libc.prctl, _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(_call(libc.syscall, _SYSCALLS["restrict_self"], ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _add_path(libc: Any, ruleset: int, path: str, rights: int) -> None:
    try:
        descriptor = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # absent (or unreachable): nothing beneath it to grant
    try:
        if not stat.S_ISDIR(os.fstat(descriptor).st_mode):
            rights &= FILE_RIGHTS
        beneath = _PathBeneathAttr(rights, descriptor)
        _check(
            _call(libc.syscall, _SYSCALLS["add_rule"], ruleset, _RULE_PATH_BENEATH, ctypes.byref(beneath), 0),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(descriptor)
