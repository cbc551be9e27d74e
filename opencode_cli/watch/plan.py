"""What hot reload watches: config directories' tool folders, every ``opencode.toml`` read, and the user's
trust record (``opencode trust`` or ``untrust`` in another terminal reaches a running server)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import config_directories, config_files

if TYPE_CHECKING:
    from ..project import Project

#: Config-file labels that name a config directory's ``opencode.toml`` (its folder may hold tool files).
_DIRECTORY_LABELS = frozenset({"global", "~/.opencode", ".opencode", "OPENCODE_CONFIG_DIR"})


@dataclass(frozen=True)
class WatchPlan:
    """The folders handed to watchfiles and the paths that matter in them."""

    roots: tuple[str, ...]
    """Existing folders, watched without recursion."""
    files: frozenset[str]
    """Config files (``opencode.toml``), existing or not."""
    folders: frozenset[str]
    """Config directories (possible ones included) and their ``tool``/``tools`` folders."""
    tool_folders: frozenset[str]

    def relevant(self, change: Any, path: str) -> bool:
        """Whether a change to ``path`` can change the tools or the config (a watchfiles filter)."""
        if path in self.files or path in self.folders:
            return True
        parent, _, name = path.rpartition(os.sep)
        if parent in self.tool_folders and name.endswith(".py") and not name.startswith("."):
            return True
        prefix = path + os.sep  # a folder on the way to one we care about (``.opencode`` created…)
        return any(folder.startswith(prefix) for folder in self.folders)


def watch_plan(project: Project) -> WatchPlan:
    """What to watch for ``project`` now (folders that do not exist are watched through a parent)."""
    files = config_files(project.directory, project.worktree, project.env)
    directories = [path.parent for label, path in files if label in _DIRECTORY_LABELS]
    directories += config_directories(project.directory, project.worktree, project.env)
    tool_folders = {str(d / sub) for d in directories for sub in ("tool", "tools")}
    watched = [path for _, path in files]
    if project.trusted is None:  # the record decides (not the host): a change to it is a change of trust
        from ..trust import record_path

        watched.append(record_path(project.env))
    folders = {str(d) for d in directories} | tool_folders | {str(path.parent) for path in watched}
    roots = sorted({str(_existing(Path(folder))) for folder in folders})
    return WatchPlan(
        tuple(roots), frozenset(str(p) for p in watched), frozenset(folders), frozenset(tool_folders)
    )


def _existing(path: Path) -> Path:
    while not path.is_dir() and path.parent != path:
        path = path.parent
    return path
