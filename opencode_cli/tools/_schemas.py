"""The built-in tools' parameter schemas, recorded ahead of time so that listing, describing and sending a
built-in's schema imports neither its module nor pydantic.

``schemas.json`` beside this module holds, per built-in, its JSON Schema (as :meth:`Tool.schema` makes
it), the facts of its parameters model (:mod:`opencode_cli.plain_args`: a plainly valid call is checked
without pydantic) and the SHA-256 of the module's source they were made from. They are used only while
that source is unchanged: an edited tool module is read live until the file is written again with::

    python -m opencode_cli.tools._record

A test checks that every recorded schema equals the live one.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..builtin import TOOL_ORDER

HERE = Path(__file__).parent
FILE = HERE / "schemas.json"

#: The recorded built-ins: every built-in tool (:data:`opencode_cli.builtin.TOOL_ORDER`). ``task``'s
#: parameters depend on the background-subagents flag: it is recorded twice, as ``task`` (flag off) and
#: ``task@background`` (flag on).
RECORDED = (*TOOL_ORDER, "task@background")

_lock = threading.Lock()
_table: dict[str, Any] | None = None
_fresh: dict[str, bool] = {}


def module_of(tool_id: str) -> str:
    """The module a recorded entry is made from (``task@background``: ``task``)."""
    return tool_id.partition("@")[0]


def source_digest(tool_id: str) -> str:
    """A fingerprint of what the schema is made from: the tool module's source and the schema normaliser's
    (the CRC-32 and length of each). It only tells an edited source from the one recorded, so a cheap
    checksum does: :mod:`zlib` is loaded already, where :mod:`hashlib` would add its import to every call."""
    return f"crc32:{_checksum(HERE / f'{module_of(tool_id)}.py')}:{_normaliser_checksum()}"


def _checksum(path: Path) -> str:
    import zlib

    data = path.read_bytes()
    return f"{zlib.crc32(data):08x}-{len(data)}"


@functools.cache
def _normaliser_checksum() -> str:
    """The schema normaliser's part of every digest: read once, not once per tool."""
    return _checksum(HERE.parent / "schema.py")


def _recorded_table() -> dict[str, Any]:
    global _table
    with _lock:
        if _table is None:
            try:
                _table = json.loads(FILE.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                _table = {}
        return _table


def _fresh_entry(tool_id: str) -> dict[str, Any] | None:
    """The recorded entry while its module's source is the one it was recorded from, else ``None``."""
    entry = _recorded_table().get(tool_id)
    if entry is None:
        return None
    fresh = _fresh.get(tool_id)
    if fresh is None:
        try:
            fresh = _fresh[tool_id] = entry.get("source") == source_digest(tool_id)
        except OSError:
            fresh = _fresh[tool_id] = False
    return entry if fresh else None


def recorded(tool_id: str) -> Callable[[], dict[str, Any] | None]:
    """The schema loader :func:`~opencode_cli.contract.define` takes for a built-in: the recorded schema
    while its module's source is the one it was recorded from, else ``None`` (the tool is built)."""

    def schema() -> dict[str, Any] | None:
        entry = _fresh_entry(tool_id)
        return copy.deepcopy(entry["schema"]) if entry is not None else None

    return schema


def plain(tool_id: str) -> Callable[[], dict[str, Any] | None]:
    """The facts loader :func:`~opencode_cli.contract.define` takes for a built-in (see
    :mod:`opencode_cli.plain_args`): the recorded facts of its parameters model while its module's source
    is the one they were recorded from, else ``None`` (every call is validated by the model)."""

    def facts() -> dict[str, Any] | None:
        entry = _fresh_entry(tool_id)
        return entry.get("plain") if entry is not None else None

    return facts
