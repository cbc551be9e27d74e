"""The plugin contract itself: every hook is documented, argument by argument, and callable as documented."""

from __future__ import annotations

import inspect

import pytest

from opencode_cli import hookspecs

HOOKS = [
    name for name, value in vars(hookspecs).items() if callable(value) and hasattr(value, "opencode_spec")
]


def test_the_contract_has_the_tool_provider_and_chat_hooks() -> None:
    assert sorted(HOOKS) == [
        "chat_headers",
        "chat_message",
        "chat_messages_transform",
        "chat_params",
        "chat_system_transform",
        "event",
        "permission_ask",
        "register_providers",
        "register_tools",
        "session_compacting",
        "shell_env",
        "tool_call",
        "tool_definition",
        "tool_execute",
        "tool_execute_after",
        "tool_execute_before",
    ]


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_documents_each_argument(name: str) -> None:
    spec = getattr(hookspecs, name)
    doc = inspect.getdoc(spec) or ""
    assert len(doc.splitlines()) >= 3, f"{name} needs a real docstring"
    for argument in inspect.signature(spec).parameters:
        assert f":param {argument}:" in doc, f"{name} does not document {argument}"


def test_marker_name_is_the_entry_point_group() -> None:
    from opencode_cli.plugins import ENTRY_POINT_GROUP

    assert hookspecs.PROJECT_NAME == ENTRY_POINT_GROUP == "opencode"
