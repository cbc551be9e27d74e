"""Instruction files near a file being read (``AGENTS.md``, ``CLAUDE.md``, ``CONTEXT.md``).

When the read tool opens a file in a subdirectory of the project, instruction files found on the way up
(the project directory itself excluded) are handed to the model once, inside a ``<system-reminder>`` block.
A file is skipped when it is the file being read, when the system prompt already carries it, when an
earlier tool result of the conversation listed it in ``metadata.loaded``, or when another read of the
same assistant message already claimed it.

In a remembered session (``ctx.session.remember``: a named session kept in the project's store) what was
shown is also kept in the store, by session id and path: a later process of the same session, or another
process working in it at the same time, whose transcript does not (yet) hold that result, does not show
it again. The check and the record are one statement, so two processes cannot both show a file.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import files
from ..boundary import is_inside_location
from ..context import ToolContext
from ..files import contains
from ..paths import config_dir, home_dir
from ..record import Value

_TRUTHY = frozenset({"true", "yes", "on", "1", "y"})
_MAX_TRACKED_MESSAGES = 256

_claims: OrderedDict[tuple[str, str], set[str]] = OrderedDict()
_claims_lock = threading.Lock()


class Instruction(Value):
    """One instruction file: where it is and what the model is shown (a frozen value)."""

    __slots__ = ("content", "path")
    _fields = ("path", "content")

    path: str
    content: str

    def __init__(self, path: str, content: str) -> None:
        self._set(path, content)


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in _TRUTHY


def file_names(env: Mapping[str, str] = os.environ) -> list[str]:
    """The names looked for in each directory, in order of preference."""
    claude_disabled = _flag(env, "OPENCODE_DISABLE_CLAUDE_CODE") or _flag(
        env, "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT"
    )
    names = ["AGENTS.md"]
    if not claude_disabled:
        names.append("CLAUDE.md")
    names.append("CONTEXT.md")
    return names


def _first_existing(directory: str, names: Iterable[str]) -> str | None:
    for name in names:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def system_paths(ctx: ToolContext, env: Mapping[str, str] = os.environ) -> set[str]:
    """Instruction files the system prompt already includes (approximated).

    The global ``AGENTS.md`` of the config directory, ``~/.claude/CLAUDE.md``, and the project-level
    files: the first name found walking up from the project directory to the worktree root.
    """
    names = file_names(env)
    found = {str(config_dir(env) / "AGENTS.md")}
    if "CLAUDE.md" in names:
        found.add(str(home_dir(env) / ".claude" / "CLAUDE.md"))
    directory = os.path.normpath(str(ctx.directory))
    top = os.path.normpath(str(ctx.worktree)) if ctx.worktree else directory
    chain = [directory]
    current = directory
    while current != top and contains(top, current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        chain.append(parent)
        current = parent
    for name in names:
        matches = [os.path.join(d, name) for d in chain if os.path.isfile(os.path.join(d, name))]
        if matches:
            found.update(matches)
            break
    return found


def _loaded_in(value: Any, into: set[str], depth: int = 0) -> None:
    """Collect every ``metadata.loaded`` path in a message structure (dicts, lists or objects)."""
    if depth > 6 or value is None or isinstance(value, str | bytes | int | float):
        return
    if isinstance(value, Mapping):
        state = value.get("state")
        if isinstance(state, Mapping):
            time = state.get("time")
            if isinstance(time, Mapping) and time.get("compacted"):
                return
        metadata = value.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("compacted"):
            return  # a pruned tool output: the model no longer sees what it showed
        if isinstance(metadata, Mapping):
            loaded = metadata.get("loaded")
            if isinstance(loaded, list | tuple):
                into.update(str(item) for item in loaded)
        for key in ("parts", "state", "result", "info"):
            if key in value:
                _loaded_in(value[key], into, depth + 1)
        return
    if isinstance(value, list | tuple):
        for item in value:
            _loaded_in(item, into, depth + 1)
        return
    metadata = getattr(value, "metadata", None)
    if isinstance(metadata, Mapping):
        _loaded_in({"metadata": metadata}, into, depth + 1)
    parts = getattr(value, "parts", None)
    if isinstance(parts, list | tuple):
        _loaded_in(parts, into, depth + 1)


def previously_loaded(messages: Iterable[Any]) -> set[str]:
    """Instruction paths an earlier tool result of the conversation already reported, as the model still
    sees it: from the last compaction summary on, pruned tool outputs left out (as OpenCode does)."""
    found: set[str] = set()
    _loaded_in(_since_compaction(list(messages)), found)
    return found


def _since_compaction(messages: list[Any]) -> list[Any]:
    """The messages from the last compaction summary on (all of them when there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        info = message.get("info") if isinstance(message, Mapping) else None
        if getattr(message, "summary", False) or (isinstance(info, Mapping) and info.get("summary")):
            return messages[max(index - 1, 0) :]
    return messages


def _claim(ctx: ToolContext, path: str) -> bool:
    """Reserve ``path`` for this assistant message; ``False`` if another call already did."""
    key = (ctx.session_id, ctx.message_id)
    with _claims_lock:
        claimed = _claims.get(key)
        if claimed is None:
            claimed = _claims[key] = set()
            while len(_claims) > _MAX_TRACKED_MESSAGES:
                _claims.popitem(last=False)
        else:
            _claims.move_to_end(key)
        if path in claimed:
            return False
        claimed.add(path)
        return True


def _store_of(ctx: ToolContext) -> Any:
    """The store keeping what a remembered session was shown, or ``None`` (a session not remembered)."""
    return ctx.project.store if ctx.session.remember else None


def _read_text(ctx: ToolContext, path: str) -> str | None:
    """The instruction file's text, or ``None`` when it cannot be read or the file opened (judged by its
    descriptor, whatever links led there) is not inside the project: no outside file is ever shown."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        location = files.opened_location(fd, path)
        if location is None or not is_inside_location(location, ctx.directory, ctx.worktree):
            return None
        try:
            return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return None


def nearby(ctx: ToolContext, target: str | Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The instruction files from ``target``'s directory up to the project directory (excluded), nearest
    first: in each directory the first name of :func:`file_names` that is a file, ``target`` itself left
    out. Only looked for (a stat per name and directory); nothing is read."""
    if env is None:
        env = ctx.env
    root = os.path.normpath(str(ctx.directory))
    target = os.path.normpath(str(target))
    current = os.path.dirname(target)
    names = file_names(env)
    found: list[str] = []
    while current != root and contains(root, current):
        candidate = _first_existing(current, names)
        if candidate is not None and candidate != target:
            found.append(candidate)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return found


def resolve(
    ctx: ToolContext,
    target: str | Path,
    env: Mapping[str, str] | None = None,
    found: list[str] | None = None,
) -> list[Instruction]:
    """The instruction files near ``target`` (:func:`nearby`, or ``found`` when already looked for) that
    the model is shown now, nearest first: each read, and claimed for this message (and for a remembered
    session, in its store), unless it was shown already.

    ``env`` defaults to the context's environment when it carries one, else the process environment.
    """
    if env is None:
        env = ctx.env
    if found is None:
        found = nearby(ctx, target, env)
    if not found:
        return []
    store = _store_of(ctx)
    skip = system_paths(ctx, env) | previously_loaded(ctx.messages)
    if store is not None:
        skip |= store.instructions_shown(ctx.session_id)
    shown: list[Instruction] = []
    for candidate in found:
        if candidate not in skip and _claim(ctx, candidate):
            content = _read_text(ctx, candidate)
            if content is not None and (store is None or store.claim_instruction(ctx.session_id, candidate)):
                shown.append(Instruction(candidate, f"Instructions from: {candidate}\n{content}"))
    return shown
