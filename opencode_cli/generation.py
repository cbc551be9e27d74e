"""A generation: the parts of a project built from its files at one time.

``config`` (the merged ``opencode.toml`` files), ``config_dirs``, ``truncator`` (``[tool_output]``),
``skills``, ``agents`` and ``registry`` (the tools of every source). The project keeps one current
generation; a reload prepares the next one beside it and the project swaps it in between calls
(:meth:`opencode_cli.generations.Generations.hold`). What is not built from files — the plugin manager, the
permission service, the store, the services — belongs to the project and lives on across generations,
so a reload never restarts a service. The next generation's registry rebuilds only the sources that
changed (a saved tool file, a source that reported a change) and reuses every other source's tools.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import paths
from .building import BUILDING
from .config import Config
from .errors import ConfigError
from .steps import Steps, adrive, drive

if TYPE_CHECKING:
    from .agents import Agent
    from .mcp.config import ServerConfig
    from .modelref import ModelRef
    from .models.config import ProviderConfig
    from .permission import Ruleset
    from .plugins import PluginRecord
    from .policy import Offer, Situation
    from .project import Project
    from .registry import Registry
    from .skills import Skills
    from .truncate import Truncator
    from .trust import View


class Offers:
    """What a generation offers, per (agent, session rules, model, profile, host): each made once, on
    the first request that needs it, and kept as long as the generation (at most :attr:`MAX`; the oldest
    goes first). The ``tool_definition`` hooks therefore run once per generation and offer; a reload
    makes a new generation, and the offers are made again."""

    MAX = 64

    def __init__(self) -> None:
        self._made: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Any:
        """The offer made for ``key``, or ``None``."""
        return self._made.get(key)

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        """Keep ``value`` as the offer for ``key``."""
        with self._lock:
            while len(self._made) >= self.MAX:
                self._made.pop(next(iter(self._made)))
            self._made[key] = value


def _code_mode_catalogue(scripted: list[Any], builtins: list[Any]) -> str:
    """Code mode's catalogue of what a script may call (what the policy appends to ``execute``)."""
    from .codemode.catalog import bindings_of, catalogue

    return catalogue(bindings_of(scripted, builtins))


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
        self.registry_started = False
        """Whether building the registry began (a source that reports a change then needs a rebuild)."""
        self.offers = Offers()
        """What this generation offers, per agent, model and host (made on first request)."""

    def __repr__(self) -> str:
        return f"<Generation {self.number} of {self.project!r}>"

    @cached_property
    def trusted_view(self) -> View:
        """What the project's files supply and whether it is trusted (:mod:`opencode_cli.trust`, the one
        place that decides): :attr:`config` and :attr:`config_dirs` are built from it. What an untrusted
        project supplies is held back and said once (one warning)."""
        from .trust import view

        project = self.project
        found = view(project.directory, project.worktree, project.env, trusted=project.trusted)
        note = found.note()
        if note is not None:
            self.warn(note)
        return found

    @cached_property
    def config(self) -> Config:
        """The merged configuration of the trusted view (an untrusted project's code, secret destinations
        and widening rules left out); unknown keys are warned about."""
        config = self.trusted_view.config
        for warning in config.warnings:
            self.warn(warning)
        return config

    @cached_property
    def config_dirs(self) -> list[Path]:
        """Config directories in OpenCode's order (core spec §9.1) that tool files are loaded from: a
        project's own ``.opencode`` directories only when it is trusted."""
        return self.trusted_view.config_dirs

    @property
    def held_back(self) -> list[PluginRecord]:
        """The tool files and MCP servers of an untrusted project, as records with status ``not trusted``
        and the reason (never imported, never started)."""
        return self.trusted_view.records()

    @cached_property
    def disabled_plugins(self) -> dict[str, str]:
        """The plugins not to load, each with how it was disabled: ``[plugins] disabled`` and the host's
        (``Project(disabled_plugins=...)``). The project's plugin manager follows it on a reload
        (:meth:`Plugins.follow <opencode_cli.plugins.Plugins.follow>`)."""
        from .plugins import IN_CONFIG

        listed = self.config.get("plugins.disabled", [])
        if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            raise ConfigError("plugins.disabled must be a list of plugin names")
        given = self.project.disabled_plugins
        return {
            **dict.fromkeys(listed, IN_CONFIG),
            **(dict(given) if isinstance(given, Mapping) else dict.fromkeys(given, "the host")),
        }

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
    def transcript_bytes(self) -> int:
        """``transcript.max_bytes``: the characters of parts a session's transcript holds in memory (a value
        that is not a positive whole number is warned about, once for the config, and the default used)."""
        from .limits import TRANSCRIPT_BYTES

        value = self.config.get("transcript.max_bytes", TRANSCRIPT_BYTES)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            self.warn(
                f"transcript.max_bytes: {value!r} is not a positive whole number; {TRANSCRIPT_BYTES} used"
            )
            return TRANSCRIPT_BYTES
        return value

    @cached_property
    def skills(self) -> Skills:
        """The skills found for the project (``SKILL.md`` files; problems are warned about)."""
        from .skills import discover

        project = self.project
        dirs = self.trusted_view.skill_dirs  # skills are instructions: data, whatever the trust
        found = discover(project.directory, project.worktree, project.env, dirs, self.config.data)
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

    @property
    def registry(self) -> Registry:
        """Every tool, in OpenCode's order: unchanged sources keep the previous generation's tools.

        Built once (:meth:`registry_steps`), here from sync code: a plugin's ``async def
        register_tools`` is awaited on the project's portal (with a loop running in this thread it
        cannot be, and is reported: use :meth:`aregistry` there)."""
        made = self.__dict__.get("registry")
        return made if made is not None else drive(self.registry_steps())

    def built(self) -> bool:
        """Whether :attr:`registry` is built already (a call in this generation need not wait)."""
        return "registry" in self.__dict__

    async def aregistry(self) -> Registry:
        """:attr:`registry`, built on the caller's loop: ``async def register_tools`` implementations are
        awaited there."""
        made = self.__dict__.get("registry")
        return made if made is not None else await adrive(self.registry_steps())

    def registry_steps(self) -> Steps[Registry]:
        """:attr:`registry`'s one implementation (:mod:`opencode_cli.steps`): the previous generation's
        registry, then the sources that changed (the ``register_tools`` hooks are the steps)."""
        from .registry import Registry

        made = self.__dict__.get("registry")
        if made is not None:
            return made
        self.registry_started = True
        project = self.project
        if self._previous is not None:  # a reload: the plugins disabled are this config's
            project.plugins.follow(self.disabled_plugins)
        sources = project.sources.of(self)
        previous = None
        if self._previous is not None:
            previous = yield from self._previous.registry_steps()
        token = BUILDING.set(self)  # the bridges read this generation's config while its hooks run
        try:
            changed = (
                self.changed | self._mcp_changes() | self._bridge_changes() if previous is not None else ()
            )
            registry = yield from Registry.steps(
                sources, project.plugins, previous=previous, changed=changed, warn=self.warn
            )
        finally:
            BUILDING.reset(token)
        return self.__dict__.setdefault("registry", self._explained(registry))

    def _bridge_changes(self) -> set[str]:
        """The keys of the bridge plugins whose config table changed (``[llm]``, ``[langchain]``,
        ``[pydantic_ai]``: each table is read by the plugin of its name)."""
        from .builtin import BRIDGES

        previous = self._previous
        if previous is None:
            return set()
        return {f"builtin:{name}" for name in BRIDGES if previous.config.get(name) != self.config.get(name)}

    def _mcp_changes(self) -> set[str]:
        """The keys of the MCP sources a config change makes stale: the servers whose table changed, and
        the resource tools (which servers have resources) when any did."""
        previous = self._previous
        if previous is None:
            return set()
        before, after = previous.mcp_servers, self.mcp_servers
        stale = {server.key for name, server in after.items() if before.get(name) != server}
        stale |= {server.key for name, server in before.items() if name not in after}
        return stale | {"mcp:resources"} if stale else stale

    def _explained(self, registry: Registry) -> Registry:
        """``registry``, told how to explain a missing tool of an MCP server or of a tool file held back
        (an untrusted project's)."""
        servers = self.project.mcp.missing if self.mcp_servers else None
        held = [record for record in self.held_back if record.kind == "file"]
        if servers is None and not held:
            return registry

        def explain(tool_id: str) -> str | None:
            for record in held:
                if tool_id == record.name or tool_id.startswith(f"{record.name}_"):
                    return (
                        f"Tool '{tool_id}' would come from the tool file {record.location}, which is not "
                        f"loaded: {record.error}."
                    )
            return servers(tool_id) if servers is not None else None

        registry.explain = explain
        return registry

    # -- agents, models and what is offered --------------------------------------------------------------

    def agent(self, name: str | None = None) -> Agent:
        """An agent by name (default ``build``); unknown names raise :class:`ConfigError`."""
        name = name or "build"
        agents = self.agents
        try:
            return agents[name]
        except KeyError:
            import difflib

            close = difflib.get_close_matches(name, list(agents), n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(f"no agent named '{name}'{hint}; agents: {', '.join(agents)}") from None

    def model(self, value: ModelRef | str | None = None) -> ModelRef | None:
        """``value`` as a :class:`ModelRef` (``provider/model`` or a bare id), else the config's ``model``
        key, else ``None``."""
        from .modelref import ModelRef

        chosen = ModelRef.coerce(value)
        if chosen is not None:
            return chosen
        configured = self.config.get("model")
        return ModelRef.coerce(configured) if isinstance(configured, str) else None

    def _situation(
        self, model: ModelRef | str | None, agent: Agent | str | None, rules: Ruleset, switches: Any
    ) -> tuple[Situation, Ruleset, dict[str, Any]]:
        from .modelref import ModelRef
        from .permission import merge
        from .policy import Situation, describe_task

        project = self.project
        chosen = self.agent(agent) if agent is None or isinstance(agent, str) else agent
        flags = project.flags
        config_switches = self.config.get("tools")
        situation = Situation(
            ModelRef.coerce(model),
            flags,
            task_agents=describe_task(chosen, self.agents),
            code_mode_builtins=flags.experimental_code_mode
            and self.config.boolean("experimental.code_mode_builtins"),
            catalogue=_code_mode_catalogue if flags.experimental_code_mode else None,
        )
        options = {
            "config_switches": config_switches if isinstance(config_switches, Mapping) else None,
            "request_switches": switches,
        }
        return situation, merge(chosen.permission, list(rules)), options

    def offer(
        self,
        model: ModelRef | str | None = None,
        agent: Agent | str | None = None,
        *,
        rules: Ruleset = (),  # type: ignore[assignment]
        switches: Mapping[str, bool] | None = None,
        schemas: bool = False,
    ) -> Offer:
        """:meth:`offer_steps` from sync code."""
        return drive(self.offer_steps(model, agent, rules=rules, switches=switches, schemas=schemas))

    async def aoffer(
        self,
        model: ModelRef | str | None = None,
        agent: Agent | str | None = None,
        *,
        rules: Ruleset = (),  # type: ignore[assignment]
        switches: Mapping[str, bool] | None = None,
        schemas: bool = False,
    ) -> Offer:
        """:meth:`offer_steps` on the caller's loop: ``async def`` hooks (``register_tools``,
        ``tool_definition``) are awaited there."""
        return await adrive(self.offer_steps(model, agent, rules=rules, switches=switches, schemas=schemas))

    def offer_steps(
        self,
        model: ModelRef | str | None = None,
        agent: Agent | str | None = None,
        *,
        rules: Ruleset = (),  # type: ignore[assignment]
        switches: Mapping[str, bool] | None = None,
        schemas: bool = False,
    ) -> Steps[Offer]:
        """What ``model`` is offered when talking to ``agent`` in this generation (with the session's
        ``rules`` and the request's ``switches``), and what is hidden and why (:mod:`opencode_cli.policy`);
        ``schemas=True`` makes every schema now, a broken one hidden as failed."""
        from .policy import offer_steps

        registry = yield from self.registry_steps()
        situation, ruleset, options = self._situation(model, agent, rules, switches)
        return (yield from offer_steps(registry, situation, ruleset, **options, schemas=schemas))

    def build(self) -> Generation:
        """Build every part now (a broken config raises :class:`~opencode_cli.errors.ConfigError` here)."""
        parts = (
            "trusted_view",
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

    def plugin_records(self) -> list[PluginRecord]:
        """Every plugin, tool file and MCP server with its status (what ``opencode plugins list`` shows)."""
        registry = self.registry
        return [
            *self.project.plugins.records,
            *registry.records("file"),
            *registry.records("mcp"),
            *self.held_back,
        ]

    def is_built(self, part: str) -> bool:
        """Whether ``part`` was built already (for hosts that only look at what exists)."""
        return part in self.__dict__
