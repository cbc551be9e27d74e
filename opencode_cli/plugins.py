"""The plugin manager: built-in plugins, entry-point plugins, tool files, and their load status.

Nothing here ever lets a broken plugin take a command down: an import error, a hook that raises, or a
tool file with a syntax error is recorded (``status = "failed"`` with the error) and reported as one
warning line; everything else keeps working.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pluggy

from . import hookspecs

BUILTIN_PLUGINS = ("opencode_cli.tools",)
ENTRY_POINT_GROUP = "opencode"

Status = Literal["loaded", "blocked", "failed"]
Warn = Callable[[str], None]


@dataclass
class PluginRecord:
    """What ``opencode plugins list`` shows for one plugin or tool file."""

    name: str
    kind: Literal["builtin", "entrypoint", "file"]
    version: str | None = None
    location: str | None = None
    hooks: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    status: Status = "loaded"
    error: str | None = None

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
    frames = traceback.extract_tb(error.__traceback__)
    if path is not None:
        frames = [f for f in frames if f.filename == path] or frames
    else:
        stdlib = os.path.dirname(os.__file__)
        frames = [f for f in frames if not f.filename.startswith(stdlib)] or frames
    if frames:
        where = f"{frames[-1].filename}:{frames[-1].lineno}: "
    message = str(error)
    return f"{where}{type(error).__name__}" + (f": {message}" if message else "")


def run_awaitable(value: Any) -> Any:
    """Finish ``value`` if it is awaitable (hooks may be ``async def``), from sync code."""
    if not inspect.isawaitable(value):
        return value

    import asyncio

    async def finish() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(finish())
    box: dict[str, Any] = {}

    def worker() -> None:
        import asyncio

        try:
            box["value"] = asyncio.run(finish())
        except BaseException as error:  # handed back to the caller below
            box["error"] = error

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


class Plugins:
    """A pluggy manager for one project, with a record per plugin and tool file."""

    def __init__(
        self,
        *,
        autoload: bool = True,
        disabled: Iterable[str] = (),
        builtin: Iterable[str] = BUILTIN_PLUGINS,
        extra: Iterable[tuple[str, object]] = (),
        warn: Warn | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self._by_plugin: dict[str, PluginRecord] = {}
        self._warn = warn or (lambda message: None)
        self._disabled = set(disabled)
        self._cache_dir = cache_dir
        for module_name in builtin:
            self._register_builtin(module_name)
        for name, plugin in extra:
            self.register(plugin, name=name, kind="entrypoint")
        if autoload:
            self._load_entry_points()

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
        if name in self._disabled and kind != "builtin":
            record.status = "blocked"
            record.error = "disabled by [plugins] disabled in config"
            return record
        try:
            self.manager.register(plugin, name=name)
            record.hooks = sorted(caller.name for caller in self.manager.get_hookcallers(plugin) or [])
            try:
                self.manager.check_pending()
            except pluggy.PluginValidationError:
                self.manager.unregister(plugin)
                raise
        except Exception as error:
            record.fail(describe_exception(error))
            self.warn(f"plugin {name} failed to load: {record.error}")
            return record
        self._by_plugin[name] = record
        return record

    def _register_builtin(self, module_name: str) -> None:
        module = importlib.import_module(module_name)
        self.register(module, name=module_name, kind="builtin", location=module_name)

    def _load_entry_points(self) -> None:
        from .entrypoints import discover

        for entry in discover(ENTRY_POINT_GROUP, self._cache_dir):
            version = entry.version
            if self.manager.get_plugin(entry.name) is not None:
                continue
            if entry.name in self._disabled:
                self.register(object(), name=entry.name, version=version, location=entry.value)
                continue
            try:
                plugin = entry.load()
            except Exception as error:
                record = PluginRecord(entry.name, "entrypoint", version, entry.value)
                record.fail(describe_exception(error))
                self.records.append(record)
                self.warn(f"plugin {entry.name} failed to load: {record.error}")
                continue
            self.register(plugin, name=entry.name, version=version, location=entry.value)

    def load_tool_file(self, path: Path) -> tuple[PluginRecord, ModuleType | None]:
        """Import one tool file under a private module name; failures are recorded, never raised."""
        record = PluginRecord(name=path.stem, kind="file", location=str(path))
        self.records.append(record)
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
        module_name = f"opencode_user_tools.m{digest}_{path.stem}"
        try:
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except BaseException as error:
            sys.modules.pop(module_name, None)
            if isinstance(error, KeyboardInterrupt):
                raise
            record.fail(describe_exception(error, str(path)))
            self.warn(f"tool file {path} failed to load: {record.error}")
            return record, None
        return record, module

    # -- calling hooks ---------------------------------------------------------------------------------

    def implementations(self, hook_name: str) -> list[Any]:
        """The hook's implementations in call order (pluggy's: last registered first, tryfirst first)."""
        return list(reversed(getattr(self.manager.hook, hook_name).get_hookimpls()))

    def has_hook(self, hook_name: str) -> bool:
        """Whether any loaded plugin implements ``hook_name``."""
        return bool(getattr(self.manager.hook, hook_name).get_hookimpls())

    def call(self, hook_name: str, /, **kwargs: Any) -> None:
        """Call a hook from sync code; a failing plugin is marked failed and warned about, never raised."""
        for impl in self.implementations(hook_name):
            try:
                run_awaitable(impl.function(**{arg: kwargs[arg] for arg in impl.argnames}))
            except Exception as error:
                self.plugin_failed(impl.plugin_name, hook_name, error)

    async def call_strict(self, hook_name: str, /, **kwargs: Any) -> None:
        """Call a hook from async code; the first exception propagates (it blocks the tool call)."""
        for impl in self.implementations(hook_name):
            result = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            if inspect.isawaitable(result):
                await result

    def plugin_failed(self, plugin_name: str, hook_name: str, error: BaseException) -> None:
        """Record and report a hook that raised."""
        text = describe_exception(error)
        record = self._by_plugin.get(plugin_name)
        if record is not None:
            record.fail(f"{hook_name}: {text}")
        self.warn(f"plugin {plugin_name} failed in {hook_name}: {text}")

    def tool_failed(self, source: Any, tool_id: str, error: BaseException) -> None:
        """Record and report a tool that could not be built (its module failed to import, say)."""
        text = describe_exception(error)
        for record in self.records:
            if tool_id in record.tools and (record.location == source.path or record.name == source.name):
                record.fail(f"tool {tool_id}: {text}")
        self.warn(f"tool {tool_id} ({source.describe()}) failed to load: {text}")

    def record_for(self, plugin_name: str) -> PluginRecord | None:
        """The record of a registered plugin."""
        return self._by_plugin.get(plugin_name)
