"""The MCP tests' servers: their paths, the npm install of the everything server, and process helpers.

The fixtures built on these are in ``conftest.py``; tests import the helpers as
``from _mcp_servers import alive, wait_gone``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _processes import alive, wait_gone  # noqa: F401 - re-exported for the tests here

SERVERS = Path(__file__).resolve().parent / "servers"
DEMO_SERVER = SERVERS / "demo_server.py"
GARBAGE_SERVER = SERVERS / "garbage_server.py"
EXIT_SERVER = SERVERS / "exit_server.py"
LOOPBACK_PRELOAD = SERVERS / "loopback.cjs"

EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
# One pin, read by .ci/run too.
EVERYTHING_VERSION = (SERVERS / "everything-version.txt").read_text().strip()

STARTUP_TIMEOUT = 30.0


# -- processes ---------------------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(argv: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start a server in its own process group, stdout and stderr to ``log``, no stdin."""
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, start_new_session=True
        )


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def stop(process: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """SIGTERM the server's process group, SIGKILL it if still there after ``timeout``; check it is gone."""
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.wait(timeout)
    assert wait_gone(process.pid), f"server {process.pid} outlived its teardown"


def _died(process: subprocess.Popen[bytes], log: Path, what: str) -> str:
    return f"{what} (exit code {process.returncode}); its output:\n{log.read_text(errors='replace')}"


def wait_listening(
    process: subprocess.Popen[bytes], port: int, log: Path, timeout: float = STARTUP_TIMEOUT
) -> None:
    """Wait until 127.0.0.1:``port`` accepts connections; fail if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            pytest.fail(_died(process, log, f"the server exited before it listened on port {port}"))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() >= deadline:
                pytest.fail(
                    f"the server did not listen on port {port} within {timeout} s:\n{log.read_text()}"
                )
            time.sleep(0.05)


def wait_ready_line(process: subprocess.Popen[bytes], log: Path, timeout: float = STARTUP_TIMEOUT) -> int:
    """Wait for the ``READY <port>`` line the demo server prints once it listens; return the port."""
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(r"^READY (\d+)$", log.read_text(errors="replace"), re.MULTILINE)
        if found:
            return int(found.group(1))
        if process.poll() is not None:
            pytest.fail(_died(process, log, "the demo server exited before it was ready"))
        if time.monotonic() >= deadline:
            pytest.fail(f"the demo server printed no READY line within {timeout} s:\n{log.read_text()}")
        time.sleep(0.05)


# -- the everything server, from npm -----------------------------------------------------------------------


def npm_cache() -> Path:
    """The npm packages' folder: ``$OPENCODE_TEST_NPM_CACHE``, else ``~/.cache/opencode-cli-tests/npm``."""
    configured = os.environ.get("OPENCODE_TEST_NPM_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "opencode-cli-tests" / "npm"


def _installed_version(package_dir: Path) -> str | None:
    try:
        return json.loads((package_dir / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def ensure_everything() -> Path:
    """The everything server's entry script (``dist/index.js``), installed with npm into :func:`npm_cache` if
    missing or at another version than the pin.

    Skips the test when ``npm`` or ``node`` is not installed; fails it when the install fails. A lock file
    in the cache keeps parallel sessions from installing at the same time.
    """
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip(
            f"{'npm' if npm is None else 'node'} is not installed: the everything MCP server needs it"
        )
    cache = npm_cache()
    package_dir = cache / "node_modules" / EVERYTHING_PACKAGE
    entry = package_dir / "dist" / "index.js"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if entry.is_file() and _installed_version(package_dir) == EVERYTHING_VERSION:
            return entry
        spec = f"{EVERYTHING_PACKAGE}@{EVERYTHING_VERSION}"
        argv = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", spec]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(argv)} did not finish within 600 s")
        if done.returncode != 0:
            pytest.fail(
                f"{' '.join(argv)} failed (exit code {done.returncode}):\n{done.stdout}\n{done.stderr}"
            )
        if not entry.is_file() or _installed_version(package_dir) != EVERYTHING_VERSION:
            pytest.fail(f"{' '.join(argv)} succeeded but left no {spec} entry at {entry}")
        return entry


class ServerURL(str):
    """A running HTTP server's MCP endpoint URL, a plain ``str``, that also carries the server's
    ``process`` (a ``subprocess.Popen``) and ``log`` (the file with its stdout and stderr)."""

    process: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def of(cls, url: str, process: subprocess.Popen[bytes], log: Path) -> ServerURL:
        made = cls(url)
        made.process, made.log = process, log
        return made


def demo_over_http(factory: Any, mode: str, path: str) -> Iterator[ServerURL]:
    """Run the demo server in ``mode`` (``http`` or ``sse``) on a free port; yield its URL; stop it."""
    log = factory.mktemp(f"demo-{mode}") / "server.log"
    process = start([sys.executable, str(DEMO_SERVER), mode, "0"], log)
    try:
        port = wait_ready_line(process, log)
        wait_listening(process, port, log)
        yield ServerURL.of(f"http://127.0.0.1:{port}{path}", process, log)
    finally:
        stop(process)
