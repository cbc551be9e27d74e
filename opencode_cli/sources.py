"""Sources of tools: built-ins, tool files, entry-point plugins (and, later, MCP servers).

A registry generation is assembled from the :class:`Contribution` of each source, in order. A source is
rebuilt on its own — a saved tool file rebuilds that file's source and nothing else — and any source can
say that its tools changed (:meth:`Source.report_change`); the project passes that on to whoever listens
(the watcher, a server that advertises the tools).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .contract import AnyTool, LazyTool, Tool
from .loops import running_loop
from .record import Record
from .steps import Steps, call_each, drive, nothing
from .toolspec import ToolSource

if TYPE_CHECKING:
    from .flags import Flags
    from .generation import Generation
    from .plugins import PluginRecord, Plugins
    from .project import Project

SourceKind = Literal["builtin", "plugin", "file", "mcp"]


class Contribution(Record):
    """What one source gave the registry in one build: its tools (stamped with the source) and gates.

    ``record``: the record ``opencode plugins list`` shows for the source (a tool file's is made per
    build). ``kept``: ids kept from the last good build because this build failed (a tool file that
    stopped importing). ``renamed``: why an id is not the name its tool came with (an MCP tool id
    shortened, or given another prefix).
    """

    __slots__ = ("kept", "record", "renamed", "source", "tools")

    def __init__(
        self,
        source: Source,
        tools: list[tuple[AnyTool, str | None]] | None = None,
        record: PluginRecord | None = None,
        kept: list[str] | None = None,
        renamed: dict[str, str] | None = None,
    ) -> None:
        self.source = source
        self.tools: list[tuple[AnyTool, str | None]] = [] if tools is None else tools
        self.record = record
        self.kept: list[str] = [] if kept is None else kept
        self.renamed: dict[str, str] = {} if renamed is None else renamed


class Source:
    """A source of tools. Subclasses give ``key`` (unique in a project), ``kind`` and :meth:`build`."""

    key: str
    kind: SourceKind
    on_change: Callable[[Source], None] | None = None
    """Set by the project: told when the source reports a change."""

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        """The source's tools now. ``previous`` is this source's last contribution (to fall back on);
        problems are reported to ``warn`` (one line each) and recorded on the contribution's record."""
        raise NotImplementedError

    def steps(self, previous: Contribution | None, warn: Callable[[str], None]) -> Steps[Contribution]:
        """:meth:`build` as steps (:mod:`opencode_cli.steps`): a source that calls hooks gives them here,
        so that one implementation serves sync and async callers; most sources call none."""
        return (yield from nothing(self.build(previous, warn)))

    def report_change(self) -> None:
        """Say that this source's tools changed: the project rebuilds it (and only it) into a generation."""
        if self.on_change is not None:
            self.on_change(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key}>"


def _declared(value: Any) -> list[AnyTool]:
    """The tools ``register(value)`` registers: a tool, or a toolbox's tools (:func:`~.toolbox.tools_of`)."""
    if isinstance(value, Tool | LazyTool):
        return [value]
    from .toolbox import tools_of  # the toolbox module (and the services) only for a toolbox

    return tools_of(value)


class PluginSource(Source):
    """The tools a plugin registers through its ``register_tools`` hook (built-ins are one)."""

    def __init__(self, plugins: Plugins, record: PluginRecord, flags: Flags, project: Project | None):
        self.plugins = plugins
        self.record = record
        self.flags = flags
        self.project = project
        builtin = record.kind == "builtin"
        self.kind = "builtin" if builtin else "plugin"
        self.key = f"{self.kind}:{record.name}"
        self.stamp = ToolSource("builtin") if builtin else ToolSource("plugin", record.name, record.version)

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        """Call the plugin's ``register_tools`` (a failure is recorded on the plugin; tools so far stay)."""
        return drive(self.steps(previous, warn))

    def steps(self, previous: Contribution | None, warn: Callable[[str], None]) -> Steps[Contribution]:
        """:meth:`build`'s one implementation: the plugin's ``register_tools`` is the step."""
        contribution = Contribution(self, record=self.record)
        self.record.tools = []

        def register(tool: Any, *, gate: str | None = None) -> None:
            for each in _declared(tool):
                bridged = self.kind == "builtin" and each.source.kind == "bridge"  # says where it came from
                contribution.tools.append((each if bridged else each.copy(source=self.stamp), gate))
                self.record.tools.append(each.id)

        yield from call_each(
            self.plugins,
            "register_tools",
            only=self.record.name,
            register=register,
            flags=self.flags,
            project=self.project,
        )
        if self.kind == "plugin":
            self.record.warnings = _lint(contribution, warn)
        self.plugins.remember_tools(self.record.name, self.record.tools)
        return contribution


class ToolFileSource(Source):
    """A ``tool/*.py`` or ``tools/*.py`` file of a config directory.

    A module-level tool named ``default`` gets the file's name as id, any other ``NAME`` gets
    ``<file>_<NAME>`` (core spec §3.3). A file that fails to import keeps the tools of its last good
    build (hot reload), and the failure is recorded as ``file:line: Type: message``.
    """

    kind: SourceKind = "file"

    def __init__(self, path: Path):
        self.path = path
        self.key = f"file:{path}"
        self.stamp = ToolSource("file", name=path.stem, path=str(path))

    def build(self, previous: Contribution | None, warn: Callable[[str], None]) -> Contribution:
        """Import the file anew and collect its tools."""
        from .plugins import PluginRecord, describe_exception

        record = PluginRecord(name=self.path.stem, kind="file", location=str(self.path))
        contribution = Contribution(self, record=record)
        try:
            module = _import_file(self.path)
        except BaseException as error:  # SystemExit at import too; only Ctrl-C goes through
            if isinstance(error, KeyboardInterrupt):
                raise
            record.fail(describe_exception(error, str(self.path)))
            warn(f"tool file {self.path} failed to load: {record.error}")
            if previous is not None:
                contribution.tools = list(previous.tools)
                contribution.kept = [tool.id for tool, _ in previous.tools]
                record.tools = list(contribution.kept)
            return contribution
        for name, value in vars(module).items():
            for suffix, found in _as_tools(name, value, module.__name__):
                tool_id = self.path.stem if suffix == "default" else f"{self.path.stem}_{suffix}"
                contribution.tools.append((found.copy(id=tool_id, source=self.stamp), None))
                record.tools.append(tool_id)
        record.warnings = _lint(contribution, warn)
        return contribution


def _lint(contribution: Contribution, warn: Callable[[str], None]) -> list[str]:
    """Warn about each problem :func:`~opencode_cli.contract.lint` finds in a contribution's tools (those
    built already: a lazy tool is not imported for it); the problems, for the source's record."""
    from .contract import lint

    found = [problem for tool, _ in contribution.tools if isinstance(tool, Tool) for problem in lint(tool)]
    for problem in found:
        warn(problem)
    return found


def tool_files(folders: list[Path]) -> list[Path]:
    """The tool files of config directories, in directory order (``tool/`` then ``tools/``, sorted)."""
    files: list[Path] = []
    for folder in folders:
        for sub in ("tool", "tools"):
            directory = folder / sub
            if directory.is_dir():
                files.extend(sorted(p for p in directory.glob("*.py") if p.is_file()))
    return files


class _SourceOnly(importlib.machinery.SourceFileLoader):
    """Compiles the tool file from its source every time: no ``__pycache__`` is read or written beside
    it (the project is a place commands may write; the host must not write or trust files there by a
    name a command could turn into a link)."""

    def path_stats(self, path: str) -> Any:
        raise OSError("bytecode is not cached for tool files")


def _import_file(path: Path) -> Any:
    """Import a tool file under a private module name (its stem, and a checksum of its path that keeps two
    files of the same name apart)."""
    import zlib

    digest = zlib.crc32(str(path).encode("utf-8", "surrogateescape"))
    module_name = f"opencode_user_tools.m{digest:08x}_{path.stem}"
    loader = _SourceOnly(module_name, str(path))
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _as_tools(name: str, value: Any, module_name: str) -> list[tuple[str, AnyTool]]:
    """The tools a tool file's module-level ``name = value`` gives, each with what its id is made of (the
    file's name and this): a tool, a ``Tool`` subclass defined in the file, or a toolbox (an instance, or
    a ``Toolbox`` subclass defined in the file), whose tools are named after its methods."""
    if isinstance(value, Tool | LazyTool):
        return [(name, value)]
    defined_here = isinstance(value, type) and value.__module__ == module_name
    if defined_here and issubclass(value, Tool) and value is not Tool:
        return [(name, value())]
    toolbox = sys.modules.get("opencode_cli.toolbox")  # a file that made a toolbox imported it
    if toolbox is None:
        return []
    if isinstance(value, toolbox.Toolbox) or (defined_here and issubclass(value, toolbox.Toolbox)):
        return [(found.method, found) for found in toolbox.tools_of(value)]
    return []


class Sources:
    """The sources of a project's registry, kept across generations (a tool file's source is made once and
    keeps reporting its changes): ``project.sources``.

    Each source's :meth:`Source.report_change` goes to :meth:`changed`, a request to the project's builder.
    """

    def __init__(self, project: Project) -> None:
        self.project = project
        self._files: dict[Path, ToolFileSource] = {}
        self._added: list[Source] = []
        self._plugins: list[PluginSource] | None = None
        self._revision = 0

    def of(self, generation: Generation) -> list[Source]:
        """The registry's sources in order: built-in plugins, the tool files of the generation's config
        directories, entry-point plugins, its MCP servers, then sources added with :meth:`add`."""
        files: list[Source] = []
        for path in tool_files(generation.config_dirs):
            source = self._files.get(path)
            if source is None:
                source = self._files[path] = ToolFileSource(path)
                source.on_change = self.changed
            files.append(source)
        plugin_sources = self._plugin_sources()
        builtin = [source for source in plugin_sources if source.kind == "builtin"]
        others = [source for source in plugin_sources if source.kind != "builtin"]
        servers = generation.mcp_servers
        mcp = self.project.mcp.sources(servers) if servers else []
        return [*builtin, *files, *others, *mcp, *self._added]

    def _plugin_sources(self) -> list[PluginSource]:
        """One source per plugin implementing ``register_tools``, in load order."""
        project = self.project
        plugins = project.plugins
        if self._plugins is None or self._revision != plugins.revision:
            self._revision = plugins.revision
            known = {source.record.name: source for source in self._plugins or []}
            implementers = set(plugins.implementers("register_tools"))
            self._plugins = [
                known[record.name]
                if record.name in known and known[record.name].record is record
                else PluginSource(plugins, record, project.flags, project)
                for record in plugins.records
                if record.name in implementers and plugins.record_for(record.name) is record
            ]
        return self._plugins

    def add(self, source: Source) -> None:
        """Add a source of tools (after the plugins, in the order added). Its tools join the registry
        through a new generation when the current one was built already: at once from a thread with no
        loop, from a loop once the builder's thread built it (:meth:`changed`)."""
        source.on_change = self.changed
        self._added.append(source)
        self.changed(source)

    def changed(self, source: Source) -> None:
        """What a source's :meth:`Source.report_change` calls: a request to the project's builder to
        rebuild that source (nothing to do while no registry was built or is being built: the first build
        reads every source as it is). A thread with no loop waits until a build carries it; code on a loop
        (an MCP server that connected) never waits: the builder works on its own thread."""
        generation = self.project.generations.made
        if generation is not None and generation.registry_started:
            self.project.builder.request({source.key}, wait=running_loop() is None)

    @staticmethod
    def keys(paths: Iterable[str | Path]) -> set[str]:
        """The keys of the sources that files at ``paths`` are (a saved tool file: ``file:<path>``)."""
        return {f"file:{path}" for path in paths}
