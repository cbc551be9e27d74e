"""The launcher: the process every command (and local MCP or language server) starts under, so that nothing
it starts outlives the host, optionally inside a Landlock sandbox. Two ways to run it:

``python -E -s -S launcher.py HOST STATUS [RULE…] -- COMMAND ARGS…`` (one command)
    HOST is the pid that must stay our parent; STATUS a descriptor to report the command's exit on, or -1;
    the RULEs, when there are any, are :class:`landlock.Rules` as words (:meth:`landlock.Rules.as_args`).
    The launcher becomes the command's *keeper* (below), with ``SIGUSR1`` asked for when the host dies
    (``PR_SET_PDEATHSIG``). Local MCP and language servers start this way.

``python -E -s -S launcher.py --serve SOCKET`` (the long-lived launcher of a project)
    SOCKET is a ``SOCK_SEQPACKET`` Unix socket on which the host opens *channels*: a message with the
    sandbox rules (none: unsandboxed) and another socket, on which each message is one command as a dict
    in :mod:`marshal`'s format (``argv``, ``cwd``, ``env``) with three descriptors (its standard input,
    its output, its status pipe). Keepers are forked ahead for each channel (no interpreter starts: a
    keeper is a fork of this small process), confine themselves to the channel's rules once, and wait on
    its socket, each taking one command at a time; the launcher forks more when too few are idle. When
    SOCKET ends (the host closed it, or died: even a SIGKILLed host's descriptors are closed by the
    kernel) every keeper is told to end, killing its command's tree, and the launcher exits. bash's
    commands start this way.

The keeper of a command:

1. is the *reaper* of everything below it (``PR_SET_CHILD_SUBREAPER``: an orphaned descendant is
   reparented to it, not to init), and, from ``--serve``, leads a session of its own and asks for
   ``SIGUSR1`` when the launcher dies; it reports ``pid PID`` on the status descriptor (its process group);
2. starts the command. The one-shot launcher forks it, and between fork and exec the child restores the
   signals Python ignores, binds the project's configuration read-only (:mod:`mounts`) and applies the
   rules (``no_new_privs`` + ``landlock_restrict_self``), then ``exec``'s. A keeper of the long-lived
   launcher did the same to itself when it was forked (it has nothing to lose to the sandbox), and
   ``posix_spawn``'s the command, which inherits it. Any failure is reported on the status descriptor
   (``exec ERRNO`` or ``sandbox MESSAGE``) and the command does not run;
3. waits. When the command exits it writes ``exit CODE`` on the status descriptor and, with one, stays to
   reap the command's background jobs (so those die with the host too); without one it exits with the
   command's code, killing what is left. On ``SIGUSR1`` (the host or launcher died, or the host's grace
   period for a stopped command ran out) it ``SIGKILL``'s every descendant and exits; on ``SIGTERM`` it
   passes it on to every descendant (those that left the process group too).

It is a script, not a module of the package: it imports only a few standard modules and :mod:`landlock`
beside it (its own directory is the first entry of ``sys.path``), so it starts in a few milliseconds.
"""

import os
import sys

# typing's TYPE_CHECKING would import typing: mypy takes any name TYPE_CHECKING as true (PEP 484)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal  # the same functions and numbers, typed (typeshed has no stubs of ``_signal``)
    from _socket import socket as Socket
    from typing import NoReturn

    # the launcher's siblings: it imports them as top-level modules where needed (its folder is first on
    # sys.path), each import behind ``if not TYPE_CHECKING``, so that mypy checks their uses against these
    from opencode_cli.sandbox import landlock, mounts  # noqa: F401 - (ruff sees the hidden imports' uses)
else:
    import _signal as signal  # the C module: ``signal`` would import enum (and functools, collections)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class _Doomed(Exception):
    """The host died (or asks for the end): kill everything below us."""


def _descendants() -> list[int]:
    """Every live process below this one (read from ``/proc``)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc: only the process group can be reached
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _signal_all(sig: int) -> bool:
    """Send ``sig`` to every descendant; whether there was one."""
    pids = _descendants()
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:  # gone meanwhile
            continue
    return bool(pids)


#: The keepers the long-lived launcher forked and has not reaped yet.
_KEEPERS: set = set()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _KEEPERS.discard(pid)


def _kill_all_and_exit(code: int) -> None:
    """Kill every descendant, then exit with ``code`` (negative: die of that signal, as the command did)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:  # no child, so no descendant at all: nothing to look for in /proc
        _exit(code)
    while _signal_all(signal.SIGKILL):  # until none is left (one may fork meanwhile)
        _reap()
    _reap()
    _exit(code)


def _exit(code: int) -> None:
    if code < 0:  # the command died of a signal: so do we, and our parent sees which
        try:
            signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
            os.kill(os.getpid(), -code)
        except (OSError, ValueError):
            pass
        code = 128 - code
    os._exit(code)


#: Set once this process is on its way out (killing what is below it, then exiting): a second end signal
#: (the host's stop and the death of the thread that started us can both send one) must not cut that way
#: short, which would leave what is below us running.
_DOOMED: list = []


def _doomed(signum: int, frame: object) -> None:
    if not _DOOMED:
        _doom()


def _doom() -> "NoReturn":
    _DOOMED.append(True)
    raise _Doomed


#: Set when the host stopped the command (a keeper that got SIGTERM does not serve again).
_STOPPED: set = set()


def _terminated(signum: int, frame: object) -> None:
    _STOPPED.add(True)
    _signal_all(signal.SIGTERM)  # those that left the process group get it too


def _report(status: int, line: str) -> None:
    if status >= 0:
        try:
            os.write(status, line.encode("utf-8", "replace") + b"\n")
        except OSError:  # the host stopped listening
            return


def _child(status: int, rules: list, argv: list, env: dict | None = None, cwd: str | None = None) -> None:
    """In the forked child: default signals, the sandbox, then the command (never returns)."""
    try:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGUSR1, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        if cwd is not None:
            try:
                os.chdir(cwd)
            except OSError as error:
                _report(status, f"exec {error.errno or 0} {error.strerror or error}")
                os._exit(127)
        if rules:
            if not TYPE_CHECKING:  # mypy reads the sibling imported at the top
                import landlock

            try:
                confined = landlock.Rules.from_args(rules)
                if confined.protect:  # before Landlock, which forbids changing the mount table
                    if not TYPE_CHECKING:
                        import mounts

                    mounts.protect(confined.protect)
                landlock.restrict(confined)
            except Exception as error:  # never run the command unconfined
                _report(status, f"sandbox {getattr(error, 'strerror', None) or error}")
                os._exit(126)
        try:
            if env is None:
                os.execvp(argv[0], argv)
            else:
                os.execvpe(argv[0], argv, env)
        except OSError as error:
            _report(status, f"exec {error.errno or 0} {error.strerror or error}")
            os._exit(127)
    finally:
        os._exit(127)


_PRCTL: list = []


def _prctl(option: int, value: int) -> None:
    """``prctl(option, value)`` on Linux (nothing elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    if not _PRCTL:
        import ctypes

        _PRCTL.append((ctypes.CDLL(None, use_errno=True).prctl, ctypes.c_ulong))
    prctl, ulong = _PRCTL[0]
    prctl(option, ulong(value), ulong(0), ulong(0), ulong(0))


def _keep(status: int, command: int) -> None:
    """The keeper's wait (see the module docstring): report the command's exit, reap what it leaves, and
    end by killing whatever is left. Never returns."""
    code = None
    try:
        while True:
            try:
                pid, wait_status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if pid == command:
                code = os.waitstatus_to_exitcode(wait_status)
                _report(status, f"exit {code}")
                if status >= 0:
                    os.close(status)
                    status = -1
                else:
                    break
    except _Doomed:
        _kill_all_and_exit(137)
    _kill_all_and_exit(code or 0)


def _quiet() -> None:
    """Standard input, output and error to ``/dev/null`` (the commands' pipes are theirs alone)."""
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.close(null)


def main() -> None:
    host, status = int(sys.argv[1]), int(sys.argv[2])
    split = sys.argv.index("--", 3)
    rules, argv = sys.argv[3:split], sys.argv[split + 1 :]
    if status >= 0:
        os.set_inheritable(status, False)  # the command and its children must not hold it open
    signal.signal(signal.SIGUSR1, _doomed)
    signal.signal(signal.SIGTERM, _terminated)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1)
    if os.getppid() != host:  # the host died before the parent-death signal was set
        os._exit(137)
    _report(status, f"pid {os.getpid()}")
    try:
        command = os.fork()
        if command == 0:
            _child(status, rules, argv)
        _quiet()
    except _Doomed:
        _kill_all_and_exit(137)
    _keep(status, command)


# -- the long-lived launcher -------------------------------------------------------------------------------

#: Keepers kept idle on each channel, waiting for a command (a command then waits for no fork).
SPARES = 2
#: At most this many keepers stay idle on a channel after a burst (the others exit when done).
IDLE = 4
#: Signals a command gets back at their default (Python ignores some; the keeper handles others).
_DEFAULTED = ("SIGPIPE", "SIGXFSZ", "SIGUSR1", "SIGTERM", "SIGCHLD", "SIGINT")


def _receive(connection: "Socket", count: int) -> tuple[dict, list] | None:
    """The next message on the socket (``None`` when the socket ended): its dict (in :mod:`marshal`'s
    format: the host runs this same interpreter) and its ``count`` descriptors (a message without them is
    dropped)."""
    import _socket as socket  # the C module: ``socket`` would import enum (and re, functools…)
    import marshal

    while True:
        data, ancillary, _, _ = connection.recvmsg(1 << 20, socket.CMSG_SPACE(count * 4))
        if not data:
            return None
        descriptors = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for i in range(0, len(payload) - len(payload) % 4, 4):
                    descriptors.append(int.from_bytes(payload[i : i + 4], sys.byteorder))
        try:
            message = marshal.loads(data)
            if len(descriptors) == count and isinstance(message, dict):
                return message, descriptors
        except (ValueError, EOFError, TypeError):
            pass
        for descriptor in descriptors:
            os.close(descriptor)


class _Channel:
    """One socket of commands that share their sandbox rules (none: unsandboxed), with its keepers'
    bookkeeping: ``taken`` (a keeper writes a byte per command it takes) and ``slots`` (a byte per free
    idle place; an idle keeper holds one)."""

    def __init__(self, connection: "Socket", rules: list) -> None:
        self.connection, self.rules = connection, rules
        self.taken_read, self.taken_write = os.pipe()
        self.slots_read, self.slots_write = os.pipe()
        os.set_blocking(self.slots_read, False)
        os.write(self.slots_write, b"." * IDLE)

    def close(self) -> None:
        self.connection.close()
        for descriptor in (self.taken_read, self.taken_write, self.slots_read, self.slots_write):
            os.close(descriptor)


def _confine(rules: list) -> str | None:
    """Apply a channel's rules to this keeper (the read-only binds, then Landlock): ``None``, or why they
    could not be applied."""
    if not rules:
        return None
    if not TYPE_CHECKING:
        import landlock

    try:
        confined = landlock.Rules.from_args(rules)
        if confined.protect:  # before Landlock, which forbids changing the mount table
            if not TYPE_CHECKING:
                import mounts

            mounts.protect(confined.protect)
        landlock.restrict(confined)
    except Exception as error:
        return str(getattr(error, "strerror", None) or error)
    return None


def _spare(launcher: int, channel: _Channel, others: list) -> None:
    """A keeper of ``channel`` (never returns): it leads a session of its own, confines itself to the
    channel's rules, and serves its commands one at a time, telling the launcher each time it takes one.

    The command starts with ``posix_spawn`` (no second fork of this interpreter) and inherits the
    keeper's sandbox; the keeper only waits, writes its reports and signals its descendants, none of which
    the sandbox takes away. A keeper serves again once every descendant of its command is gone and the
    host has closed the status pipe (so no signal meant for that command can reach the next one), unless
    the command was stopped, if an idle slot is free: the launcher forks only when too few are idle. A
    keeper whose rules could not be applied answers each command with why, and runs none."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the keeper waits for its own children
        signal.signal(signal.SIGUSR1, _doomed)
        signal.signal(signal.SIGTERM, _doomed)
        for other in others:
            other.close()
        os.close(channel.taken_read)
        os.setsid()
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1)
        if os.getppid() != launcher:
            os._exit(0)
        problem = _confine(channel.rules)
        while True:
            signal.signal(signal.SIGTERM, _doomed)
            received = _receive(channel.connection, 3)
            if received is None:
                os._exit(0)
            os.write(channel.slots_write, b".")
            os.write(channel.taken_write, b".")
            request, (stdin, output, status) = received
            _STOPPED.clear()
            signal.signal(signal.SIGTERM, _terminated)
            os.set_inheritable(status, False)
            if problem is not None:
                _report(status, f"sandbox {problem}")
                for descriptor in (stdin, output, status):
                    os.close(descriptor)
                continue
            _report(status, f"pid {os.getpid()}")
            try:
                command = _spawn(request, stdin, output, status)
            except _Failed as error:
                os._exit(error.args[0])
            finally:
                os.close(stdin)
                os.close(output)
            if not _keep_served(status, command) or _STOPPED:
                _kill_all_and_exit(0)
            try:
                os.read(channel.slots_read, 1)  # an idle slot: serve again
            except BlockingIOError:
                os._exit(0)  # enough keepers are idle
    except _Doomed:
        _kill_all_and_exit(137)
    finally:
        os._exit(127)


def _keep_served(status: int, command: int) -> bool:
    """A served keeper's wait: report the command's exit, reap what it leaves until nothing is left, then
    wait for the host to close the status pipe. Whether all went so (the keeper may serve again)."""
    import select

    while True:
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == command:
            _report(status, f"exit {os.waitstatus_to_exitcode(wait_status)}")
    poller = select.poll()
    poller.register(status, 0)  # POLLERR comes when the reading end is closed
    while not poller.poll():
        pass
    os.close(status)
    return True


class _Failed(Exception):
    """The command could not start (reported on the status descriptor already); the exit code."""


def _spawn(request: dict, stdin: int, output: int, status: int) -> int:
    """Start the command of ``request`` as the keeper's child; on failure report it and raise
    :class:`_Failed` with the keeper's exit code."""
    try:
        os.chdir(request["cwd"])
    except OSError as error:
        _report(status, f"exec {error.errno or 0} {error.strerror or error}")
        raise _Failed(127) from None
    argv = request["argv"]
    dup2 = os.POSIX_SPAWN_DUP2
    actions = [(dup2, stdin, 0), (dup2, output, 1), (dup2, output, 2)]
    defaulted = [getattr(signal, name) for name in _DEFAULTED if hasattr(signal, name)]
    try:
        return os.posix_spawnp(
            argv[0], argv, request["env"], file_actions=actions, setsigdef=defaulted, setsigmask=()
        )
    except OSError as error:
        _report(status, f"exec {error.errno or 0} {error.strerror or error}")
        raise _Failed(127) from None


def serve(control: int) -> None:
    """Serve channels of commands (see the module docstring) until the ``control`` socket ends.

    Each message on ``control`` opens a channel: ``{"rules": [...]}`` with the channel's socket.
    For each channel the launcher keeps :data:`SPARES` keepers idle (forking more as commands take
    them); a channel whose socket ends is forgotten (its idle keepers end with it). When the control
    socket ends, every descendant is killed.
    """
    import _socket as socket
    import fcntl  # noqa: F401 - imported once here, not in every keeper
    import gc
    import select
    import termios  # noqa: F401

    if not TYPE_CHECKING:  # the same: a sandboxed command's keeper finds them loaded
        import landlock  # noqa: F401
        import mounts  # noqa: F401

    gc.disable()  # no cycles are made here; and a collection in a keeper would copy every page it touches
    gc.freeze()

    _quiet()
    os.set_inheritable(control, False)
    connection = socket.socket(fileno=control)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    me = os.getpid()
    channels: dict[int, _Channel] = {}  # by the descriptor of their ``taken`` pipe
    poller = select.poll()
    ended = select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL

    def fork_spares(channel: _Channel) -> None:
        """Fork keepers until :data:`SPARES` of ``channel`` are idle (each takes an idle slot first)."""
        idle = IDLE - _available(channel.slots_read)
        while idle < SPARES:
            try:
                os.read(channel.slots_read, 1)
            except BlockingIOError:
                return
            idle += 1
            pid = os.fork()
            if pid == 0:
                connection.close()
                _spare(me, channel, [other for other in channels.values() if other is not channel])
            _KEEPERS.add(pid)

    signal.signal(signal.SIGCHLD, lambda signum, frame: _reap())
    signal.signal(signal.SIGTERM, _doomed)
    signal.signal(signal.SIGUSR1, _doomed)
    try:
        poller.register(connection.fileno(), select.POLLIN | select.POLLRDHUP)
        while True:
            for descriptor, events in poller.poll():
                if descriptor == connection.fileno():
                    if events & select.POLLIN:
                        received = _receive(connection, 1)
                        if received is None:
                            _doom()
                        message, (fd,) = received
                        os.set_inheritable(fd, False)
                        channel = _Channel(socket.socket(fileno=fd), list(message.get("rules") or []))
                        channels[channel.taken_read] = channel
                        poller.register(channel.taken_read, select.POLLIN)
                        poller.register(channel.connection.fileno(), select.POLLRDHUP)
                        fork_spares(channel)
                    elif events & ended:
                        _doom()
                elif descriptor in channels:
                    os.read(descriptor, 4096)
                    fork_spares(channels[descriptor])
                elif events & ended:  # a channel's socket ended: forget it
                    for key, channel in list(channels.items()):
                        if channel.connection.fileno() == descriptor:
                            poller.unregister(descriptor)
                            poller.unregister(key)
                            del channels[key]
                            channel.close()
    except (_Doomed, OSError):
        pass
    _shutdown()


def _shutdown() -> None:
    """The long-lived launcher's end: when its only children are keepers, each is told to end (it kills
    its command's tree, if it has one, and exits) and the launcher exits at once; with any other child
    (an orphan whose keeper was killed), every descendant is killed first."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM, signal.SIGCHLD})
    try:
        with open(f"/proc/self/task/{os.getpid()}/children", "rb") as file:
            children = {int(word) for word in file.read().split()}
    except OSError:  # no such file on this kernel: look at every process
        children = None
    if children is not None and children <= _KEEPERS:
        for pid in children:
            try:
                os.kill(pid, signal.SIGUSR1)
            except OSError:
                continue
        os._exit(0)
    _kill_all_and_exit(0)


def _available(fd: int) -> int:
    """How many bytes wait in the pipe ``fd``."""
    import fcntl
    import termios

    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]))
    else:
        main()
