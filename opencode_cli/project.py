"""``Project(directory)``: the one object that holds a project's config, plugins, registry and agents.

Everything is computed lazily on first use and cached, so ``Project(...)`` itself is free. Tests and
hosts build their own; there are no globals.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import paths
from .config import Config, config_directories, find_worktree
from .config import load as load_config
from .errors import ConfigError

if TYPE_CHECKING:
    from .agents import Agent
    from .contract import ToolResult
    from .flags import Flags
    from .permission import PermissionService, Rule
    from .plugins import Plugins
    from .registry import ModelRef, Registry, ToolDefinition
    from .session import Prompt, Session
    from .skills import Skills
    from .store import Store
    from .truncate import Truncator
    from .watch import Watcher


def _stderr_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


class Project:
    """A project rooted at ``directory`` (default: the current directory)."""

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        plugins: Iterable[tuple[str, object]] = (),
        autoload_plugins: bool | None = None,
        warn: Any = None,
    ) -> None:
        self.directory = Path(os.path.abspath(directory or os.getcwd()))
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.worktree: Path | None = find_worktree(self.directory)
        self._extra_plugins = list(plugins)
        self._autoload = autoload_plugins
        self._warn = warn or _stderr_warning
        self._warned: set[str] = set()
        self._remembering: set[str] = set()

    def __repr__(self) -> str:
        return f"Project({str(self.directory)!r})"

    def warn(self, message: str) -> None:
        """Report a problem once per project."""
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)

    @property
    def root(self) -> Path:
        """The git worktree root, or the directory itself outside git."""
        return self.worktree or self.directory

    @cached_property
    def flags(self) -> Flags:
        """The ``OPENCODE_*`` flags of this project's environment."""
        from .flags import Flags

        return Flags.from_env(self.env)

    @cached_property
    def config(self) -> Config:
        """The merged configuration; unknown keys are warned about once."""
        config = load_config(self.directory, self.worktree, self.env)
        for warning in config.warnings:
            self.warn(warning)
        return config

    @cached_property
    def config_dirs(self) -> list[Path]:
        """Config directories in OpenCode's order (core spec §9.1)."""
        return config_directories(self.directory, self.worktree, self.env)

    @cached_property
    def plugins(self) -> Plugins:
        """The plugin manager, with built-ins, entry-point plugins and records of each."""
        from .plugins import Plugins

        disabled = self.config.get("plugins.disabled", [])
        if not isinstance(disabled, list) or not all(isinstance(name, str) for name in disabled):
            raise ConfigError("plugins.disabled must be a list of plugin names")
        autoload = self._autoload
        if autoload is None:
            autoload = not (self.flags.disable_plugin_autoload or self.flags.pure)
        cache = None if self.env.get("OPENCODE_DISABLE_ENTRY_POINT_CACHE") else paths.cache_dir(self.env)
        return Plugins(
            autoload=autoload, disabled=disabled, extra=self._extra_plugins, warn=self.warn, cache_dir=cache
        )

    @cached_property
    def registry(self) -> Registry:
        """Every tool of the project, in OpenCode's order."""
        from .registry import Registry

        return Registry(self.plugins, self.flags, self.config_dirs, project=self)

    @cached_property
    def truncator(self) -> Truncator:
        """Output limits from ``[tool_output]`` and the spill directory."""
        from .truncate import MAX_BYTES, MAX_LINES, Truncator

        return Truncator(
            paths.tool_output_dir(self.env),
            self.config.positive_int("tool_output.max_lines") or MAX_LINES,
            self.config.positive_int("tool_output.max_bytes") or MAX_BYTES,
        )

    @cached_property
    def store(self) -> Store:
        """The sqlite store under the data directory (``<data>/opencode.db``)."""
        from .store import Store

        return Store(paths.data_dir(self.env) / "opencode.db")

    @cached_property
    def permissions(self) -> PermissionService:
        """Pending permission requests and "always" approvals of this project."""
        from .permission import PermissionService

        return PermissionService(on_always=self._keep_approvals)

    def _keep_approvals(self, session_id: str, rules: list[Rule]) -> None:
        if session_id in self._remembering:
            self.store.add_approvals(session_id, [(rule.permission, rule.pattern) for rule in rules])

    def close(self) -> None:
        """Reject every pending permission request (the project is going away or reloading)."""
        if "permissions" in self.__dict__:
            self.permissions.dispose()

    def remember_session(self, session_id: str) -> None:
        """Keep "always" approvals given in ``session_id`` in the store (see :class:`Session`)."""
        self._remembering.add(session_id)

    @cached_property
    def agents(self) -> dict[str, Agent]:
        """Built-in and configured agents by name."""
        from .agents import build_agents

        return build_agents(
            self.config.data,
            home=str(paths.home_dir(self.env)),
            truncate_glob=self.truncator.glob,
            data_dir=paths.data_dir(self.env),
            extra_allowed_dirs=[
                os.path.join(str(paths.tmp_dir()), "*"),
                *(os.path.join(folder, "*") for folder in self.skills.directories()),
            ],
        )

    @cached_property
    def skills(self) -> Skills:
        """The skills found for this project (``SKILL.md`` files; problems are warned about once)."""
        from .skills import discover

        found = discover(self.directory, self.worktree, self.env, self.config_dirs, self.config.data)
        for problem in found.problems:
            self.warn(problem)
        return found

    def agent(self, name: str | None = None) -> Agent:
        """An agent by name (default ``build``); unknown names raise :class:`ConfigError`."""
        name = name or "build"
        try:
            return self.agents[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self.agents), n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(f"no agent named '{name}'{hint}; agents: {', '.join(self.agents)}") from None

    def default_model(self) -> ModelRef | None:
        """The ``model`` config key as a :class:`ModelRef`, if set."""
        from .registry import ModelRef

        value = self.config.get("model")
        return ModelRef.parse(value) if isinstance(value, str) and value else None

    def tools(self, model: ModelRef | None = None, agent: str | None = None) -> list[ToolDefinition]:
        """What ``model`` is offered when talking to ``agent`` (minus tools the agent denies wholly)."""
        from .permission import disabled

        chosen = self.agent(agent)
        ids = [entry.id for entry in self.registry.all()]
        return self.registry.tools(model, disabled(ids, chosen.permission))

    def session(self, agent: str | None = None, *, prompt: Prompt | None = None, **options: Any) -> Session:
        """A new :class:`Session` for ``agent``."""
        from .session import Session, refuse_without_terminal

        return Session(self, self.agent(agent), prompt=prompt or refuse_without_terminal, **options)

    def watch(self, **options: Any) -> Watcher:
        """Hot reload: a :class:`~opencode_cli.watch.Watcher` that rebuilds this project's tools when tool
        files or ``opencode.toml`` change and swaps them in between calls (``async with`` it, iterate it
        for change reports, and hold it around each call; see :mod:`opencode_cli.watch`)."""
        from .watch import Watcher

        return Watcher(self, **options)

    def run_tool(
        self, tool_id: str, args: dict[str, Any], *, agent: str | None = None, **options: Any
    ) -> ToolResult:
        """Run one tool call synchronously in a fresh session (handy in scripts and tests)."""
        import asyncio

        session = self.session(agent, **options)
        return asyncio.run(session.execute(tool_id, dict(args)))
