"""The built-in tools: one module and one ``.txt`` description each (private helpers prefixed ``_``).

The tools are registered by the built-in plugins of :mod:`opencode_cli.builtin` (files, shell, web…),
each declaring its tools with :func:`builtin`: listing a tool reads its description file and its recorded
schema (:mod:`._schemas`) and imports no tool module. Which of them a model is offered (``question``
only for some clients, ``plan_exit`` only in plan mode…) is decided by the rules of
:mod:`opencode_cli.policy`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contract import LazyTool

HERE = Path(__file__).parent


def builtin(
    tool_id: str,
    init: Callable[[], Any] | str | None = None,
    *,
    description: str | Path | Callable[[], str] | None = None,
    recorded: str | None = None,
    plain: bool = True,
) -> LazyTool:
    """Declare the built-in ``tool_id``: built by ``init`` (default: its module's ``init``) on first use,
    described by ``description`` (default: its ``.txt`` file), with the schema recorded under
    ``recorded`` (default: its id) and, when ``plain``, the recorded facts of its parameters model."""
    from ..contract import define
    from . import _schemas

    variant = recorded or tool_id
    return define(
        tool_id,
        init or f"opencode_cli.tools.{tool_id}:init",
        description=description if description is not None else HERE / f"{tool_id}.txt",
        schema=_schemas.recorded(variant),
        plain=_schemas.plain(variant) if plain else None,
    )
