"""A generation: the parts of a project built from its files at one time.

``config`` (the merged ``opencode.toml`` files), ``config_dirs``, ``truncator`` (``[tool_output]``),
``skills``, ``agents`` and ``registry`` (the tools of every source). The project keeps one current
generation; a reload prepares the next one beside it and the project swaps it in between calls
(:meth:`opencode_cli.project.Project.hold`). What is not built from files — the plugin manager, the
permission service, the store, the services — belongs to the project and lives on across generations,
so a reload never restarts a service. The next generation's registry rebuilds only the sources that
changed (a saved tool file, a source that reported a change) and reuses every other source's tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from . import paths
from .config import Config, config_directories
from .config import load as load_config

if TYPE_CHECKING:
    from .agents import Agent
    from .mcp.config import ServerConfig
    from .models.config import ProviderConfig
    from .project import Project
    from .registry import Registry
    from .skills import Skills
    from .truncate import Truncator


class Generation:
    """One generation of ``project`` (number 1 is the first; a prepared one gets its number when
    installed). ``warn`` receives the problems found while building it."""

    def __init__(
        self,
        project: Project,
        warn: Callable[[str], None],
        *,
        previous: Generation | None = None,
        changed: Iterable[str] = (),
    ) -> None:
        self.project = project
        self.number = 1 if previous is None else 0
        self.warn = warn
        self._previous = previous
        self.changed = frozenset(changed)
        """Keys of the registry sources to rebuild (``file:<path>`` for a saved tool file…)."""

    def __repr__(self) -> str:
        return f"<Generation {self.number} of {self.project!r}>"

    @cached_property
    def config(self) -> Config:
        """The merged configuration; unknown keys are warned about."""
        project = self.project
        config = load_config(project.directory, project.worktree, project.env)
        for warning in config.warnings:
            self.warn(warning)
        return config

    @cached_property
    def config_dirs(self) -> list[Path]:
        """Config directories in OpenCode's order (core spec §9.1)."""
        project = self.project
        return config_directories(project.directory, project.worktree, project.env)

    @cached_property
    def truncator(self) -> Truncator:
        """Output limits from ``[tool_output]`` and the spill directory."""
        from .truncate import MAX_BYTES, MAX_LINES, Truncator

        return Truncator(
            paths.tool_output_dir(self.project.env),
            self.config.positive_int("tool_output.max_lines") or MAX_LINES,
            self.config.positive_int("tool_output.max_bytes") or MAX_BYTES,
        )

    @cached_property
    def skills(self) -> Skills:
        """The skills found for the project (``SKILL.md`` files; problems are warned about)."""
        from .skills import discover

        project = self.project
        found = discover(project.directory, project.worktree, project.env, self.config_dirs, self.config.data)
        for problem in found.problems:
            self.warn(problem)
        return found

    @cached_property
    def agents(self) -> dict[str, Agent]:
        """Built-in and configured agents by name."""
        from .agents import build_agents

        env = self.project.env
        return build_agents(
            self.config.data,
            home=str(paths.home_dir(env)),
            truncate_glob=paths.within(paths.tool_output_dir(env)),  # the truncator's spill directory
            data_dir=paths.data_dir(env),
            root=self.project.root,
            extra_allowed_dirs=[
                paths.within(paths.tmp_dir()),
                *(paths.within(folder) for folder in self.skills.directories()),
            ],
        )

    @cached_property
    def mcp_servers(self) -> dict[str, ServerConfig]:
        """The ``[mcp.NAME]`` servers of the config (disabled ones too), by name; misspelt keys warned."""
        if "mcp" not in self.config.data:
            return {}
        from .mcp.config import servers

        found, warnings = servers(self.config.data)
        for warning in warnings:
            self.warn(warning)
        return found

    @cached_property
    def providers(self) -> dict[str, ProviderConfig]:
        """The ``[provider.NAME]`` tables of the config by name (``{env:VAR}`` filled in from the project's
        environment; built-in providers are not here); misspelt keys warned."""
        if "provider" not in self.config.data:
            return {}
        from .models.config import providers

        found, warnings = providers(self.config.data, self.project.env)
        for warning in warnings:
            self.warn(warning)
        return found

    @cached_property
    def registry(self) -> Registry:
        """Every tool, in OpenCode's order: unchanged sources keep the previous generation's tools."""
        from .registry import Registry

        sources = self.project.sources(self)
        plugins = self.project.plugins
        if self._previous is None:
            return Registry.build(sources, plugins, warn=self.warn)
        return self._previous.registry.rebuild(sources, self.changed, warn=self.warn)

    def build(self) -> Generation:
        """Build every part now (a broken config raises :class:`~opencode_cli.errors.ConfigError` here)."""
        parts = (
            "config",
            "config_dirs",
            "truncator",
            "skills",
            "agents",
            "mcp_servers",
            "providers",
            "registry",
        )
        for part in parts:
            getattr(self, part)
        self._previous = None  # the previous generation may go once this one is built
        return self

    def is_built(self, part: str) -> bool:
        """Whether ``part`` was built already (for hosts that only look at what exists)."""
        return part in self.__dict__
