"""``[mcp.NAME] maxTotalTimeout``: how long a tool call may run in all while its server reports progress."""

from __future__ import annotations

import pytest

from opencode_cli.errors import ConfigError
from opencode_cli.mcp.config import DEFAULT_MAX_TOTAL_TIMEOUT_MS, servers


def _server(**table: object) -> object:
    found, warnings = servers({"mcp": {"slow": {"type": "local", "command": ["slow-server"], **table}}})
    assert warnings == []  # a known key
    return found["slow"]


def test_the_total_bound_is_configured_in_milliseconds() -> None:
    server = _server(timeout=5000, maxTotalTimeout=120_000)
    assert server.request_timeout == 5 and server.total_timeout == 120  # type: ignore[attr-defined]
    assert server.as_dict()["maxTotalTimeout"] == 120_000  # type: ignore[attr-defined]


def test_by_default_ten_minutes_and_never_less_than_the_request_timeout() -> None:
    assert _server().total_timeout == DEFAULT_MAX_TOTAL_TIMEOUT_MS / 1000  # type: ignore[attr-defined]
    assert _server(timeout=5000, maxTotalTimeout=1000).total_timeout == 5  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [0, -1, "600", True, 1.5])
def test_a_bad_value_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match=r"mcp\.slow\.maxTotalTimeout must be a positive number"):
        _server(maxTotalTimeout=value)
