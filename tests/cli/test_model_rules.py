"""The per-model rule for the file tools (builtin-tools spec §1.10), seen through ``opencode tools list``.

GPT models other than ``gpt-4*`` and ``*oss*`` edit with ``apply_patch``; every other model gets ``edit``
and ``write``. The edit/write half is checked only once those tools exist (they are built separately).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

HAS_EDIT_WRITE = all(
    importlib.util.find_spec(f"opencode_cli.tools.{name}") is not None for name in ("edit", "write")
)
needs_edit_write = pytest.mark.skipif(not HAS_EDIT_WRITE, reason="the edit and write tools are not built yet")


def offered(run_cli: Any, model: str) -> tuple[list[str], dict[str, str]]:
    """The ids offered to ``model`` and the hidden ids with their reasons."""
    result = run_cli("tools", "list", "--model", model, "--all", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return [tool["id"] for tool in data["tools"]], {tool["id"]: tool["reason"] for tool in data["hidden"]}


@pytest.mark.parametrize("model", ["gpt-5", "openai/gpt-5", "openai/gpt-5.1-codex"])
def test_gpt_models_get_apply_patch(run_cli: Any, model: str) -> None:
    ids, hidden = offered(run_cli, model)
    assert "apply_patch" in ids
    assert "apply_patch" not in hidden


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "openai/gpt-4o", "openai/gpt-oss-120b"])
def test_other_models_do_not_get_apply_patch(run_cli: Any, model: str) -> None:
    ids, hidden = offered(run_cli, model)
    assert "apply_patch" not in ids
    assert "apply_patch" in hidden


@needs_edit_write
def test_gpt_5_gets_apply_patch_and_neither_edit_nor_write(run_cli: Any) -> None:
    ids, hidden = offered(run_cli, "gpt-5")
    assert "apply_patch" in ids
    assert "edit" not in ids and "write" not in ids
    assert hidden["edit"] == hidden["write"] == "gpt-5 edits with apply_patch"


@needs_edit_write
def test_claude_gets_edit_and_write_and_not_apply_patch(run_cli: Any) -> None:
    ids, hidden = offered(run_cli, "anthropic/claude-sonnet-4-5")
    assert "edit" in ids and "write" in ids
    assert "apply_patch" not in ids
    assert "apply_patch" in hidden


def test_plain_listing_without_all(run_cli: Any) -> None:
    result = run_cli("tools", "list", "--model", "gpt-5", "--json")
    ids = [tool["id"] for tool in json.loads(result.stdout)["tools"]]
    assert "apply_patch" in ids
    if HAS_EDIT_WRITE:
        assert "edit" not in ids and "write" not in ids
    claude = run_cli("tools", "list", "--model", "anthropic/claude-sonnet-4-5", "--json")
    claude_ids = [tool["id"] for tool in json.loads(claude.stdout)["tools"]]
    assert "apply_patch" not in claude_ids
    if HAS_EDIT_WRITE:
        assert "edit" in claude_ids and "write" in claude_ids


def test_apply_patch_is_last_of_the_built_ins(run_cli: Any) -> None:
    ids, _ = offered(run_cli, "gpt-5")
    assert ids[-1] == "apply_patch"
