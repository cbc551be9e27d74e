"""The launcher: ``python -E -s -S launcher.py HOST STATUS [RULE…] -- COMMAND ARGS…`` runs COMMAND so that
nothing it starts outlives the host, optionally inside a Landlock sandbox.

It is a script, not a module of the package: it imports only a few standard modules and :mod:`landlock`
beside it (its own directory is the first entry of ``sys.path``), so it starts in a few milliseconds.

HOST is the pid that must stay our parent; STATUS a descriptor to report the command's exit on, or -1;
the RULEs, when there are any, are :class:`landlock.Rules` as words (:meth:`landlock.Rules.as_args`).

1. It becomes the *reaper* of everything below it (``PR_SET_CHILD_SUBREAPER``: an orphaned descendant is
   reparented to it, not to init) and asks for ``SIGUSR1`` when the host dies (``PR_SET_PDEATHSIG``).
2. It forks the command. Between fork and exec the child restores the signals Python ignores, applies the
   rules (``no_new_privs`` + ``landlock_restrict_self``) and ``execvp``'s; any failure is reported on the
   status descriptor (``exec ERRNO`` or ``sandbox MESSAGE``) and the command does not run.
3. It waits. When the command exits it writes ``exit CODE`` on the status descriptor and, with one,
   stays to reap the command's background jobs (so those die with the host too); without one it exits
   with the command's code, killing what is left. On ``SIGUSR1`` (the host died, or the host's grace
   period for a stopped command ran out) it ``SIGKILL``'s every descendant and exits; on ``SIGTERM`` it
   passes it on to every descendant (those that left the process group too).
"""

import _signal as signal  # the C module: ``signal`` would import enum (and functools, collections)
import os
import sys

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


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill_all_and_exit(code: int) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM})
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:  # no child, so no descendant at all: nothing to look for in /proc
        os._exit(code)
    while _signal_all(signal.SIGKILL):  # until none is left (one may fork meanwhile)
        _reap()
    _reap()
    os._exit(code)


def _doomed(signum: int, frame: object) -> None:
    raise _Doomed


def _terminated(signum: int, frame: object) -> None:
    _signal_all(signal.SIGTERM)  # those that left the process group get it too


def _report(status: int, line: str) -> None:
    if status >= 0:
        try:
            os.write(status, line.encode("utf-8", "replace") + b"\n")
        except OSError:  # the host stopped listening
            return


def _child(status: int, rules: list, argv: list) -> None:
    """In the forked child: default signals, the sandbox, then the command (never returns)."""
    try:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGUSR1, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        if rules:
            import landlock

            try:
                confined = landlock.Rules.from_args(rules)
                if confined.protect:  # before Landlock, which forbids changing the mount table
                    import mounts

                    mounts.protect(confined.protect)
                landlock.restrict(confined)
            except Exception as error:  # never run the command unconfined
                _report(status, f"sandbox {getattr(error, 'strerror', None) or error}")
                os._exit(126)
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            _report(status, f"exec {error.errno or 0} {error.strerror or error}")
            os._exit(127)
    finally:
        os._exit(127)


def main() -> None:
    host, status = int(sys.argv[1]), int(sys.argv[2])
    split = sys.argv.index("--", 3)
    rules, argv = sys.argv[3:split], sys.argv[split + 1 :]
    if status >= 0:
        os.set_inheritable(status, False)  # the command and its children must not hold it open
    signal.signal(signal.SIGUSR1, _doomed)
    signal.signal(signal.SIGTERM, _terminated)
    if sys.platform.startswith("linux"):
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(
            _PR_SET_CHILD_SUBREAPER,
            ctypes.c_ulong(1),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
        prctl(
            _PR_SET_PDEATHSIG,
            ctypes.c_ulong(signal.SIGUSR1),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
    if os.getppid() != host:  # the host died before the parent-death signal was set
        os._exit(137)
    try:
        command = os.fork()
        if command == 0:
            _child(status, rules, argv)
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):  # the command's pipes are its own: do not hold them open
            os.dup2(null, descriptor)
        os.close(null)
        code = None
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
    if code is not None and code < 0:
        code = 128 - code
    _kill_all_and_exit(code or 0)


if __name__ == "__main__":
    main()
