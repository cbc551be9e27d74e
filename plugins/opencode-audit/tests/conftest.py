"""The fixtures come from opencode-tools's pytest plugin (``opencode_cli.testing``)."""

import opencode_audit
import pytest


@pytest.fixture
def opencode_plugins():
    return [opencode_audit]


@pytest.fixture
def audit_log(tmp_path, monkeypatch):
    """Where the plugin writes, set through its environment variable (``opencode_env`` isolates the rest)."""
    path = tmp_path / "logs" / "audit.jsonl"
    monkeypatch.setenv("OPENCODE_AUDIT_LOG", str(path))
    return path
