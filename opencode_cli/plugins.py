"""The plugin manager: built-in plugins, entry-point plugins, tool files, and their load status.

Built-in plugins (:mod:`opencode_cli.builtin`) and installed ones are loaded by one function,
:meth:`Plugins.load`, from an entry point; any of them can be disabled by name (``[plugins] disabled``
in config, ``-p no:NAME`` on the command line), except the essential ``core``.

Nothing here ever lets a broken plugin take a command down: an import error, a hook that raises, or a
tool file with a syntax error is recorded (``status = "failed"`` with the error) and reported as one
warning line; everything else keeps working.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import traceback
import types
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pluggy

from . import hookspecs
from .builtin import ESSENTIAL
from .builtin import PLUGINS as BUILTIN_PLUGINS
from .hookcalls import HookCalls, no_loop
from .introspection import source_line
from .record import Record

if TYPE_CHECKING:
    import asyncio

    from .entrypoints import EntryPoint

ENTRY_POINT_GROUP = "opencode"

Status = Literal["loaded", "blocked", "failed", "not trusted"]
"""``not trusted``: a tool file or MCP server of an untrusted project, listed, never loaded
(:mod:`opencode_cli.trust`; the reason is the record's ``error``)."""

#: The config key that turns plugins off, as messages name it.
DISABLED_KEY = "[plugins] disabled"
#: How a plugin disabled by that key is said to be disabled (the default of ``Plugins(disabled=...)``).
IN_CONFIG = f"{DISABLED_KEY} in config"
Warn = Callable[[str], None]


class PluginRecord(Record):
    """What ``opencode plugins list`` shows for one plugin or tool file (``warnings``: problems that do not
    stop it from loading, a tool with no description, an untyped parameter)."""

    __slots__ = ("error", "hooks", "kind", "location", "name", "status", "tools", "version", "warnings")

    def __init__(
        self,
        name: str,
        kind: Literal["builtin", "entrypoint", "file", "mcp"],
        version: str | None = None,
        location: str | None = None,
        hooks: list[str] | None = None,
        tools: list[str] | None = None,
        status: Status = "loaded",
        error: str | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.version = version
        self.location = location
        self.hooks: list[str] = [] if hooks is None else hooks
        self.tools: list[str] = [] if tools is None else tools
        self.status: Status = status
        self.error = error
        self.warnings: list[str] = [] if warnings is None else warnings

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of ``opencode plugins list --json``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "version": self.version,
            "location": self.location,
            "hooks": self.hooks,
            "tools": self.tools,
            "status": self.status,
            "error": self.error,
            "warnings": self.warnings,
        }

    def fail(self, error: str) -> None:
        """Mark the plugin failed; the first error is kept."""
        self.status = "failed"
        self.error = self.error or error


def describe_exception(error: BaseException, path: str | None = None) -> str:
    """``file:line: Type: message`` for the innermost frame in ``path`` (or the error's own location)."""
    where = ""
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename}:{error.lineno}: "
        return f"{where}SyntaxError: {error.msg}"
    frames: list[traceback.FrameSummary] = traceback.extract_tb(error.__traceback__)
    if path is not None:
        frames = [f for f in frames if f.filename == path] or frames
    else:
        stdlib = os.path.dirname(os.__file__)
        frames = [f for f in frames if not f.filename.startswith(stdlib)] or frames
    if frames:
        where = f"{frames[-1].filename}:{frames[-1].lineno}: "
    message = str(error)
    return f"{where}{type(error).__name__}" + (f": {message}" if message else "")


#: Hooks whose result is an awaitable by contract (an ``async def`` implementation returns one by being
#: called): their calls are one pluggy call, whatever the implementations.
AWAITABLE_RESULT_HOOKS = frozenset({"tool_call", "tool_execute"})


class Plugins(HookCalls):
    """A pluggy manager for one project, with a record per plugin: which plugins are loaded (the built-in
    ones and installed ones, by :meth:`load`), which failed and which are disabled, and why a disabled
    plugin's tool is missing. How its hooks are called is :class:`~opencode_cli.hookcalls.HookCalls`'s job.

    ``loop``: the project's own loop, on which sync code calls a hook with ``async def`` implementations
    (the sync façade, its portal). ``search_path`` narrows where entry points are looked for
    (``OPENCODE_PLUGIN_PATH``, see :mod:`opencode_cli.entrypoints`).
    """

    def __init__(
        self,
        *,
        autoload: bool = True,
        disabled: Iterable[str] | Mapping[str, str] = (),
        builtin: Iterable[EntryPoint] = BUILTIN_PLUGINS,
        extra: Iterable[tuple[str, object]] = (),
        warn: Warn | None = None,
        cache_dir: Path | None = None,
        loop: Callable[[], asyncio.AbstractEventLoop] | None = None,
        search_path: Sequence[str] | None = None,
    ) -> None:
        self.manager: pluggy.PluginManager = _Manager(hookspecs.PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self._by_plugin: dict[str, PluginRecord] = {}
        self._warn = warn or (lambda message: None)
        self._disabled: dict[str, str] = (
            dict(disabled) if isinstance(disabled, Mapping) else dict.fromkeys(disabled, IN_CONFIG)
        )
        """The names of the plugins not to register, each with how it was disabled (for messages)."""
        self._cache_dir = cache_dir
        self._search_path = search_path
        self._loop = loop or no_loop
        self._async_hooks: set[str] = set()
        self._alone: dict[str, pluggy.PluginManager] = _Alone(self.manager)
        """Per plugin, a pluggy manager holding that plugin alone: its hooks are called through it when a
        hook is called plugin by plugin (pluggy's own call path, its wrappers included). Each is made the
        first time it is asked for: registering a plugin twice at every start costs."""
        self._resting: dict[str, tuple[object | None, EntryPoint | None]] = {}
        """The plugins disabled now, by name: the object (once registered) or the entry point that
        gives it, for a reload that enables it again (:meth:`follow`)."""
        self.revision = 0
        """Counts the changes :meth:`follow` made to which plugins are disabled."""
        self._known: tuple[tuple[int, int, int], dict[str, list[str]]] | None = None
        """The remembered tools file as last read: its stamp and its content (:meth:`_remembered`)."""
        for entry in builtin:
            self.load(entry, kind="builtin")
        for name, plugin in extra:
            self.register(plugin, name=name, kind="entrypoint")
        if autoload:
            self._load_entry_points()
        self._warn_unknown_disabled()

    # -- loading ---------------------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        """Report one problem (one line)."""
        self._warn(message)

    def register(
        self,
        plugin: object,
        *,
        name: str,
        kind: Literal["builtin", "entrypoint", "file"] = "entrypoint",
        version: str | None = None,
        location: str | None = None,
    ) -> PluginRecord:
        """Register a plugin object (module or instance) and record it."""
        record = PluginRecord(name=name, kind=kind, version=version, location=location)
        self.records.append(record)
        if self._blocked(name):
            record.status = "blocked"
            record.error = f"disabled by {self._disabled[name]}"
            self._resting.setdefault(name, (plugin, None))
            return record
        try:
            with warnings.catch_warnings(record=True) as said:  # pluggy's warn_on_impl: deprecations
                warnings.simplefilter("always")
                self.manager.register(plugin, name=name)
            self._report_warnings(record, said)
            callers = self.manager.get_hookcallers(plugin) or []
            record.hooks = sorted(caller.name for caller in callers)
            try:
                self.manager.check_pending()
                for caller in callers:
                    self._adapt(caller, plugin, name)
            except (pluggy.PluginValidationError, TypeError):
                self.manager.unregister(plugin)
                raise
        except Exception as error:
            if isinstance(error, pluggy.PluginValidationError):
                record.hooks = []
                record.fail(self._explain_invalid(plugin, error))
            else:
                record.fail(describe_exception(error))
            self.warn(f"plugin {name} failed to load: {record.error}")
            return record
        self._alone.pop(name, None)  # made when first needed (most plugins' hooks are never called alone)
        self._by_plugin[name] = record
        return record

    def _report_warnings(self, record: PluginRecord, said: list[warnings.WarningMessage]) -> None:
        """Keep and report what pluggy warned about while registering the plugin (a deprecated hook it
        implements, with the replacement), as ``file:line: plugin NAME: message``: the file named, a
        command shows it once per change of that file."""
        for warning in said:
            where = f"{warning.filename}:{warning.lineno}: " if warning.filename else ""
            text = f"{where}{warning.message}"
            if text not in record.warnings:
                record.warnings.append(text)
                self.warn(f"{where}plugin {record.name}: {warning.message}")

    def _explain_invalid(self, plugin: object, error: pluggy.PluginValidationError) -> str:
        """A hook implementation pluggy refused, as ``file:line: reason`` in the plugin's own file: a hook
        that does not exist (with the close matches), or arguments the hook does not pass."""
        import difflib

        specs = {
            name: caller.spec.argnames
            for name, caller in vars(self.manager.hook).items()
            if getattr(caller, "spec", None) is not None
        }
        for attribute in dir(plugin):
            options = self.manager.parse_hookimpl_opts(plugin, attribute)
            if options is None:
                continue
            function = getattr(plugin, attribute)
            hook = options.get("specname") or attribute
            where = source_line(function)
            if hook not in specs:
                close = difflib.get_close_matches(hook, list(specs), n=2, cutoff=0.6)
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                return f"{where}: {hook} is not a hook of opencode-tools.{hint}"
            try:
                taken = [
                    p.name
                    for p in inspect.signature(function).parameters.values()
                    if p.default is inspect.Parameter.empty
                ]
            except (TypeError, ValueError):
                continue
            extra = [arg for arg in taken if arg not in specs[hook]]
            if extra:
                return (
                    f"{where}: {hook}() takes {', '.join(extra)}, which the hook does not pass "
                    f"(it passes {', '.join(specs[hook])})"
                )
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        reason = lines[-1] if lines else "invalid hook implementation"
        for attribute in dir(plugin):
            options = self.manager.parse_hookimpl_opts(plugin, attribute)
            if options is None:
                continue
            hook = options.get("specname") or attribute
            if f"'{hook}'" in str(error):
                return f"{source_line(getattr(plugin, attribute))}: {hook}: {reason}"
        return f"PluginValidationError: {reason}"

    def _adapt(self, caller: Any, plugin: object, plugin_name: str) -> None:
        """Check ``plugin``'s implementations of one hook (a wrapper must be a generator) and note the hooks
        with ``async def`` ones (their calls await what they return). Pluggy's objects are left as they
        are."""
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin or not inspect.iscoroutinefunction(impl.function):
                continue
            if impl.wrapper or impl.hookwrapper:
                raise TypeError(
                    f"{source_line(impl.function)}: {caller.name}: a wrapper implementation must be a "
                    "generator, not async"
                )
            if caller.name not in AWAITABLE_RESULT_HOOKS:
                self._async_hooks.add(caller.name)

    def _warn_unknown_disabled(self) -> None:
        """Warn about a name the host disabled (``-p no:NAME``) that no plugin has: a typo, most likely.
        Names in config are not warned about: a config may serve environments with other plugins."""
        import difflib

        names = [record.name for record in self.records]
        for name, how in self._disabled.items():
            if how != IN_CONFIG and name not in names:
                close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                self.warn(f"no plugin named {name} ({how}){hint}; plugins: {', '.join(names)}")

    def _blocked(self, name: str) -> bool:
        """Whether the plugin ``name`` is disabled (an essential one is loaded anyway, with a warning)."""
        if name not in self._disabled:
            return False
        if name in ESSENTIAL:
            self.warn(
                f"plugin {name} cannot be disabled ({self._disabled[name]}): every tool call runs through it"
            )
            return False
        return True

    def load(self, entry: EntryPoint, kind: Literal["builtin", "entrypoint"] = "entrypoint") -> PluginRecord:
        """Load the plugin an entry point names and register it under the entry point's name: the one way
        both the built-in plugins and installed ones are loaded. A disabled plugin is recorded as
        ``blocked`` without being imported; one that fails to import, as ``failed``; a second plugin of a
        name already taken, as ``failed`` too."""
        if any(record.name == entry.name for record in self.records):
            record = PluginRecord(entry.name, kind, entry.version, entry.value)
            record.fail(f"a plugin named {entry.name} is loaded already; this one is not")
            self.records.append(record)
            self.warn(f"plugin {entry.name} ({entry.value}) was not loaded: {record.error}")
            return record
        if self._blocked(entry.name):
            self._resting[entry.name] = (None, entry)  # not imported: a reload that enables it loads it
            return self.register(
                object(), name=entry.name, kind=kind, version=entry.version, location=entry.value
            )
        if entry.requires:
            from .compat import mismatch

            reason = mismatch(entry.requires)
            if reason is not None:  # refused before its module is imported: never half-loaded
                record = PluginRecord(entry.name, kind, entry.version, entry.value)
                record.fail(
                    f"{entry.distribution or entry.name} {entry.version or ''}".rstrip() + f": {reason}"
                )
                self.records.append(record)
                self.warn(f"plugin {entry.name} was not loaded: {record.error}")
                return record
        try:
            plugin = entry.load()
        except Exception as error:
            record = PluginRecord(entry.name, kind, entry.version, entry.value)
            record.fail(describe_exception(error))
            self.records.append(record)
            self.warn(f"plugin {entry.name} failed to load: {record.error}")
            return record
        return self.register(plugin, name=entry.name, kind=kind, version=entry.version, location=entry.value)

    def follow(self, disabled: Mapping[str, str]) -> bool:
        """Make the disabled plugins those of ``disabled`` (name: how it was disabled), as a fresh process
        would load them: what a reload of ``[plugins] disabled`` does. A plugin disabled now is
        unregistered from pluggy (none of its hooks is called, none of its tools offered) and kept, to be
        registered again, unchanged, when enabled; one disabled since the start is loaded (imported) when
        first enabled. Its record keeps its place. Returns whether anything changed."""
        changed = False
        for index, record in enumerate(list(self.records)):
            name = record.name
            off = name in disabled and name not in ESSENTIAL
            if off and record.status != "blocked" and name in self._by_plugin:
                plugin = self.manager.get_plugin(name)
                self.manager.unregister(name=name)
                self._alone.pop(name, None)
                del self._by_plugin[name]
                self._resting[name] = (plugin, None)
                record.status, record.error = "blocked", f"disabled by {disabled[name]}"
                record.hooks, record.tools, record.warnings = [], [], []  # as a plugin never loaded
                changed = True
            elif not off and record.status == "blocked" and name in self._resting:
                plugin, entry = self._resting.pop(name)
                self._disabled = dict(disabled)
                self.records.remove(record)
                kind: Literal["builtin", "entrypoint"] = (
                    "builtin" if record.kind == "builtin" else "entrypoint"
                )
                if plugin is not None:
                    again = self.register(
                        plugin, name=name, kind=kind, version=record.version, location=record.location
                    )
                else:
                    assert entry is not None
                    again = self.load(entry, kind=kind)
                self.records.remove(again)
                self.records.insert(index, again)
                self._register_again_after(index)
                changed = True
        self._disabled = dict(disabled)
        if changed:
            self.revision += 1
        return changed

    def _register_again_after(self, index: int) -> None:
        """Register again, in load order, every plugin loaded after the record at ``index``: pluggy calls
        the last registered first, so a plugin enabled again by :meth:`follow` takes the place in the call
        order that a fresh process would give it, not the first."""
        for later in self.records[index + 1 :]:
            if later.name in self._by_plugin:
                plugin = self.manager.get_plugin(later.name)
                self.manager.unregister(name=later.name)
                self.manager.register(plugin, name=later.name)

    def _load_entry_points(self) -> None:
        from .entrypoints import discover

        for entry in discover(ENTRY_POINT_GROUP, self._cache_dir, self._search_path):
            self.load(entry)

    def plugin_failed(self, plugin_name: str, hook_name: str, error: BaseException) -> None:
        """Record and report a hook that raised."""
        text = describe_exception(error)
        record = self._by_plugin.get(plugin_name)
        if record is not None:
            record.fail(f"{hook_name}: {text}")
        self.warn(f"plugin {plugin_name} failed in {hook_name}: {text}")

    def remember_tools(self, plugin_name: str, tool_ids: list[str]) -> None:
        """Keep the ids a plugin registered (in the cache directory), so that, once the plugin is
        disabled, a call of one of them can say so (:meth:`disabled_note`)."""
        if self._cache_dir is None:
            return
        known = self._remembered()
        if known.get(plugin_name) == tool_ids:
            return
        known[plugin_name] = list(tool_ids)
        _write_json(self._cache_dir / TOOLS_CACHE, known)

    def disabled_note(self, tool_id: str) -> str | None:
        """Why ``tool_id`` may be missing: the plugin that registered it is disabled (by which key), or
        plugins are disabled that may provide it; ``None`` when no plugin is disabled."""
        blocked = [r.name for r in self.records if r.status == "blocked"]
        if not blocked:
            return None
        known = self._remembered()
        owner = next((name for name in blocked if tool_id in known.get(name, [])), None)
        if owner is not None:
            return f"It comes from plugin '{owner}', which is disabled by {self._disabled[owner]}."
        by_how: dict[str, list[str]] = {}
        for name in blocked:
            by_how.setdefault(self._disabled[name], []).append(name)
        return " ".join(
            f"Plugins disabled by {how} (one may provide it): {', '.join(names)}."
            for how, names in by_how.items()
        )

    def failed_note(self, tool_id: str) -> str | None:
        """Why ``tool_id`` may be missing: an installed plugin that registered it before (or, when none
        is known to, any installed plugin) failed to load, with its error; ``None`` when none failed."""
        failed = [r for r in self.records if r.status == "failed" and r.kind == "entrypoint"]
        if not failed:
            return None
        known = self._remembered()
        owner = next((r for r in failed if tool_id in known.get(r.name, [])), None)
        if owner is not None:
            return f"It comes from plugin '{owner.name}', which failed to load: {owner.error}"
        listed = "; ".join(f"'{r.name}': {r.error}" for r in failed)
        return f"Plugins that failed to load (one may provide it): {listed}"

    def _remembered(self) -> dict[str, list[str]]:
        """The remembered tool ids by plugin (a copy the caller may change). The file is read again only
        when its stamp (inode, size, modification time) moved: each plugin's source asks at every build."""
        import json

        if self._cache_dir is None:
            return {}
        path = self._cache_dir / TOOLS_CACHE
        try:
            status = os.stat(path)
            stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
            if self._known is None or self._known[0] != stamp:
                data = json.loads(path.read_text(encoding="utf-8"))
                self._known = (stamp, data if isinstance(data, dict) else {})
        except (OSError, ValueError):
            return {}
        return dict(self._known[1])

    def record_for(self, plugin_name: str) -> PluginRecord | None:
        """The record of a registered plugin."""
        return self._by_plugin.get(plugin_name)


#: The cache file of the tools each plugin registered when it last loaded.
TOOLS_CACHE = "plugin-tools.json"


def _write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON atomically (a cache: a failure is ignored)."""
    import json

    from .nofollow import replace

    with contextlib.suppress(OSError):
        replace(path, json.dumps(value).encode("utf-8"))


class _Manager(pluggy.PluginManager):
    """Pluggy's manager, which finds a plugin's hook implementations as pluggy does, faster: an attribute
    that plainly is no hook implementation in any pluggy version (:func:`_plainly_no_hook`) is skipped
    without pluggy's static lookup (``inspect.getattr_static``, the most of what registering a plugin
    costs). Every other attribute is pluggy's to judge. ``changes`` counts what could change a hook's
    implementations (a plugin registered or unregistered, specifications added): what
    :class:`~opencode_cli.hookcalls.HookCalls` counts them by is made again when it moves."""

    changes = 0

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Pluggy's ``register``, counted in :attr:`changes`."""
        try:
            return super().register(plugin, name)
        finally:
            self.changes += 1

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        """Pluggy's ``unregister``, counted in :attr:`changes`."""
        try:
            return super().unregister(plugin, name)
        finally:
            self.changes += 1

    def add_hookspecs(self, module_or_class: types.ModuleType | type) -> None:
        """Pluggy's ``add_hookspecs``, counted in :attr:`changes`."""
        try:
            super().add_hookspecs(module_or_class)
        finally:
            self.changes += 1

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        """Pluggy's answer, or ``None`` at once for an attribute that plainly is no hook implementation."""
        if _plainly_no_hook(plugin, name, self.project_name + "_impl"):
            return None
        return super().parse_hookimpl_opts(plugin, name)

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> pluggy.HookspecOpts | None:
        """Pluggy's answer, or ``None`` at once for an attribute that plainly is no hook specification."""
        if _plainly_no_hook(module_or_class, name, self.project_name + "_spec"):
            return None
        return super().parse_hookspec_opts(module_or_class, name)


_ABSENT = object()
_OBJECT_ATTRIBUTES = frozenset(vars(object))


def _plainly_no_hook(plugin: object, name: str, marker: str) -> bool:
    """Whether ``plugin``'s attribute ``name`` cannot be a hook implementation (or, with the ``_spec``
    marker, a hook specification), decided without running any of its code: a module's attribute that is
    a class or is not callable (its imported names, ``__name__``, ``__spec__``…), or is a plain function
    without the ``marker`` attribute ``@hookimpl`` (``@hookspec``) sets; an instance's own attribute that
    is a class or is not callable; or an instance's attribute its classes hold as a string, ``None`` or a
    ``__dict__``/``__weakref__`` descriptor (``__module__``, ``__doc__``…), or that only ``object`` itself
    defines (``__init__``, ``__eq__``…: no function a marker could be set on). A class is pluggy's alone to
    judge."""
    if type(plugin) is types.ModuleType:
        value = plugin.__dict__.get(name, _ABSENT)
        if type(value) is types.FunctionType:
            return getattr(value, marker, None) is None
        return _plainly_not_callable(value)
    if isinstance(plugin, type):
        return False
    held = next((vars(klass)[name] for klass in type(plugin).__mro__ if name in vars(klass)), _ABSENT)
    try:
        own = object.__getattribute__(plugin, "__dict__")
    except AttributeError:
        own = {}
    if not isinstance(own, dict):
        return False
    if name in own:
        return held is _ABSENT and _plainly_not_callable(own[name])
    if name in _OBJECT_ATTRIBUTES and not any(
        name in vars(klass) for klass in type(plugin).__mro__ if klass is not object
    ):
        return True
    return held is None or isinstance(held, (str, types.GetSetDescriptorType))


def _plainly_not_callable(value: object) -> bool:
    """Whether ``value`` (found, not :data:`_ABSENT`) is a class or is not callable at all, and is no
    ``staticmethod``/``classmethod`` wrapper (those pluggy unwraps)."""
    return (
        value is not _ABSENT
        and not isinstance(value, (staticmethod, classmethod))
        and (isinstance(value, type) or not callable(value))
    )


class _Alone(dict[str, pluggy.PluginManager]):
    """Per plugin name, a pluggy manager holding that plugin alone, made from the project's manager the
    first time the name is looked up (a name not registered there raises :class:`KeyError`, as a plain
    dict would). Two threads looking one up at once may both make one; the first stored is kept."""

    def __init__(self, manager: pluggy.PluginManager) -> None:
        super().__init__()
        self._manager = manager

    def __missing__(self, name: str) -> pluggy.PluginManager:
        plugin = self._manager.get_plugin(name)
        if plugin is None:
            raise KeyError(name)
        alone = _Manager(hookspecs.PROJECT_NAME)
        callers = self._manager.get_hookcallers(plugin) or []
        hooks = [caller.name for caller in callers if caller.spec is not None]  # not an optionalhook's
        if hooks:  # its own hooks' specs only: parsing them all costs
            alone.add_hookspecs(_specs(self._manager, hooks))
        with warnings.catch_warnings():  # said once already, when it was registered in the project's manager
            warnings.simplefilter("ignore")
            alone.register(plugin, name=name)
        return self.setdefault(name, alone)


def _specs(manager: pluggy.PluginManager, names: Iterable[str]) -> types.ModuleType:
    """The hook specifications ``manager`` has for ``names``, as a module (a namespace pluggy's
    ``add_hookspecs`` takes): a manager holding one plugin needs the specs of that plugin's hooks, not all
    of them."""
    module = types.ModuleType("opencode_cli.plugins._specs")
    for name in names:
        setattr(module, name, getattr(manager.hook, name).spec.function)
    return module
