"""The test suite's own guarantees: no test can hang, and a test that interrupts gets its signal through,
also when the shell that started the suite ignores SIGINT (a background job, ``python -m pytest &``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HANGING = """
import threading


def test_hangs():
    threading.Event().wait()
"""


def pytest_process(*args: str, cwd: Path, ignore_sigint: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` in a process of its own, bounded (it must end by itself well before)."""

    def ignored() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a shell does for a job started with `&`

    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
        preexec_fn=ignored if ignore_sigint else None,
    )  # fmt: skip


def test_every_test_has_a_default_timeout(pytestconfig: pytest.Config) -> None:
    assert float(pytestconfig.getini("timeout")) > 0
    assert pytestconfig.getini("timeout_method") == "signal"


@pytest.mark.slow
def test_a_hanging_test_fails_under_xdist_with_the_projects_settings(tmp_path: Path) -> None:
    """The configured method works in xdist's workers: the hanging test fails, the next one still runs."""
    config = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(config[config.index("[tool.pytest.ini_options]") :])
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hang.py").write_text(HANGING + "\n\ndef test_after():\n    pass\n")
    done = pytest_process("-n", "1", "-o", "timeout=3", "-o", "addopts=", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeout (>3.0s)" in done.stdout and "1 failed, 1 passed" in done.stdout


@pytest.mark.slow
def test_a_self_interrupting_test_passes_when_sigint_is_ignored() -> None:
    test = "tests/test_services.py::test_portal_call_interrupted_cancels_the_coroutine"
    done = pytest_process("-n", "0", "-q", test, cwd=ROOT, ignore_sigint=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@pytest.mark.skipif(os.name != "posix", reason="signal dispositions")
def test_sigint_is_deliverable_during_a_test_and_to_its_children() -> None:
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    child = subprocess.run(
        [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert child.stdout.strip() == "False"
