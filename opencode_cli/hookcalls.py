"""How a project's hooks are called: through pluggy's public API, on the caller's loop.

Pluggy's objects are never changed, so ``wrapper`` and ``hookwrapper`` implementations,
``tryfirst``/``trylast`` and ``firstresult`` behave as plugin authors know them from pytest. ``async def``
implementations are awaited on the caller's loop:

- a hook none of whose implementations is ``async def`` is one pluggy call;
- a hook with ``async def`` implementations is called plugin by plugin, in pluggy's order (one pluggy call
  each, through a pluggy manager holding that plugin alone), each one's awaitable awaited before the next
  plugin is called: the order ``tryfirst``/``trylast`` give holds across sync and async implementations.
  (With a ``wrapper`` implementation among them, it is one pluggy call and the awaitables are awaited after
  it, in pluggy's order: a wrapper sees them as awaitables.)
- hooks whose failure must not spread (``register_tools``, ``tool_definition``) are called plugin by
  plugin always (:meth:`HookCalls.call_each`): a plugin that raises loses its own contribution, nobody
  else's.

From sync code (:meth:`HookCalls.call`, :meth:`HookCalls.call_each`) with no loop running, a hook with
``async def`` implementations is called on the project's own loop (the sync façade's portal), the thread
waiting.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .loops import running_loop

if TYPE_CHECKING:
    import asyncio

    import pluggy


class HookCalls:
    """The calling side of :class:`~opencode_cli.plugins.Plugins` (see the module docstring)."""

    manager: pluggy.PluginManager
    """The project's pluggy manager, every plugin registered."""
    _alone: dict[str, pluggy.PluginManager]
    """Per plugin, a manager holding that plugin alone (its hooks called plugin by plugin)."""
    _async_hooks: set[str]
    """The hooks with an ``async def`` implementation."""
    _loop: Callable[[], asyncio.AbstractEventLoop]
    """The project's own loop, for sync callers of a hook with ``async def`` implementations."""

    if TYPE_CHECKING:  # the manager's own (Plugins)

        def warn(self, message: str) -> None: ...

        def plugin_failed(self, plugin_name: str, hook_name: str, error: BaseException) -> None: ...

    #: How many implementations each hook asked about has, and the manager's ``changes`` they are of
    #: (every call asks about four hooks: counted once, not four lists copied a call).
    _counts: dict[str, int] = {}  # noqa: RUF012 - replaced, never changed in place, on the class
    _counted: object = None

    def _count(self, hook_name: str) -> int:
        """How many implementations ``hook_name`` has now."""
        changes = getattr(self.manager, "changes", None)
        counts = self._counts
        if changes is None or self._counted != changes:  # a plugin came or went: count again
            counts = {}
        count = counts.get(hook_name)
        if count is None:
            count = len(getattr(self.manager.hook, hook_name).get_hookimpls())
            if changes is not None:
                counts = {**counts, hook_name: count}
                self._counts, self._counted = counts, changes
        return count

    def has_hook(self, hook_name: str) -> bool:
        """Whether any loaded plugin implements ``hook_name``."""
        return self._count(hook_name) > 0

    def implementers(self, hook_name: str) -> list[str]:
        """The names of the plugins implementing ``hook_name``, in registration order."""
        names: list[str] = []
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
            if impl.plugin_name not in names:
                names.append(impl.plugin_name)
        return names

    def is_async(self, hook_name: str) -> bool:
        """Whether an implementation of ``hook_name`` is ``async def`` (a call must await it)."""
        return hook_name in self._async_hooks

    def order(self, hook_name: str) -> list[str]:
        """The plugins implementing ``hook_name`` in the order pluggy calls them (``tryfirst`` first,
        then the last registered, …, ``trylast`` last)."""
        names: list[str] = []
        for impl in reversed(getattr(self.manager.hook, hook_name).get_hookimpls()):
            if impl.plugin_name not in names:
                names.append(impl.plugin_name)
        return names

    def _caller_for(self, hook_name: str, plugin_name: str) -> Any:
        """Pluggy's caller of ``hook_name`` with only ``plugin_name``'s implementations."""
        return getattr(self._alone[plugin_name].hook, hook_name)

    def has_several(self, hook_name: str) -> bool:
        """Whether ``hook_name`` has more than one implementation: a wrapping hook whose only one is the
        built-in innermost (``core``'s ``tool_call``, which does what its caller would) need not be called."""
        return self._count(hook_name) > 1

    def _has_wrappers(self, hook_name: str) -> bool:
        return any(i.wrapper or i.hookwrapper for i in getattr(self.manager.hook, hook_name).get_hookimpls())

    def _steps(self, hook_name: str, only: str | None) -> list[tuple[str, Any]]:
        """Each plugin implementing ``hook_name`` (``only``: that one) with what calls its implementations
        alone, in pluggy's order. A plugin with one plain implementation (no wrapper: nearly every plugin)
        is called as pluggy calls an implementation (:func:`_call_one`); one with more goes through its
        manager-alone, pluggy's own call path."""
        hook = getattr(self.manager.hook, hook_name)
        first = bool(hook.spec is not None and hook.spec.opts.get("firstresult"))
        by_plugin: dict[str, list[Any]] = {}
        for impl in reversed(hook.get_hookimpls()):
            if only is None or impl.plugin_name == only:
                by_plugin.setdefault(impl.plugin_name, []).append(impl)
        steps: list[tuple[str, Any]] = []
        for name, impls in by_plugin.items():
            [impl, *more] = impls
            if more or impl.wrapper or impl.hookwrapper:
                steps.append((name, self._caller_for(hook_name, name)))
            else:
                steps.append((name, functools.partial(_call_one, impl, first)))
        return steps

    def call(self, hook_name: str, /, **kwargs: Any) -> Any:
        """Call a hook through pluggy from sync code and return pluggy's result; exceptions propagate.

        A hook with ``async def`` implementations is called as :meth:`acall` does, on the project's own
        loop (this thread waits); from code running on a loop, use :meth:`acall`.
        """
        if hook_name not in self._async_hooks:
            return getattr(self.manager.hook, hook_name)(**kwargs)
        return self._from_sync(hook_name, self.acall(hook_name, **kwargs))

    async def acall(self, hook_name: str, /, **kwargs: Any) -> Any:
        """Call a hook through pluggy on the caller's loop (see the class docstring); the first exception
        propagates. No thread is taken: a sync implementation runs inline on the loop (one that blocks,
        blocks the loop), and cancelling the caller cancels the implementation being awaited."""
        hook = getattr(self.manager.hook, hook_name)
        first = bool(hook.spec is not None and hook.spec.opts.get("firstresult"))
        if not hook.get_hookimpls():  # what pluggy's call gives, without its cost
            return None if first else []
        if hook_name not in self._async_hooks:
            return hook(**kwargs)
        if self._has_wrappers(hook_name):
            return await _settle(hook(**kwargs))
        results: list[Any] = []
        for _, caller in self._steps(hook_name, None):
            result = await _settle(caller(**kwargs))
            if first:
                if result is not None:
                    return result
            else:
                results.extend(result)
        return None if first else results

    def call_each(
        self,
        hook_name: str,
        /,
        *,
        only: str | None = None,
        checkpoint: Callable[[], Callable[[], None]] | None = None,
        **kwargs: Any,
    ) -> list[Any]:
        """Call an isolated hook plugin by plugin, in pluggy's order (``only``: that plugin alone), from
        sync code: a plugin that raises is recorded failed and reported, what it changed undone
        (``checkpoint()`` is taken before each plugin and returns the undo), and the others still run.
        Returns every result, in order. An ``async def`` implementation needs a loop: with none running in
        this thread the whole call runs as :meth:`acall_each` on the project's own loop; on a running loop
        it cannot be awaited here, and its plugin is reported failed for this call (use
        :meth:`acall_each`)."""
        if hook_name in self._async_hooks and running_loop() is None:
            return self._from_sync(
                hook_name, self.acall_each(hook_name, only=only, checkpoint=checkpoint, **kwargs)
            )
        results: list[Any] = []
        for name, caller in self._steps(hook_name, only):
            undo = checkpoint() if checkpoint is not None else None
            try:
                result = caller(**kwargs)
            except Exception as error:
                if undo is not None:
                    undo()
                self.plugin_failed(name, hook_name, error)
                continue
            if _has_awaitables(result):
                _close_awaitables(result)
                if undo is not None:
                    undo()
                self.warn(
                    f"plugin {name}: its async {hook_name} was called from sync code running on a loop, "
                    "where it cannot be awaited (the host should call it from async code); left out"
                )
                continue
            results.extend(result if isinstance(result, list) else [result])
        return results

    async def acall_each(
        self,
        hook_name: str,
        /,
        *,
        only: str | None = None,
        checkpoint: Callable[[], Callable[[], None]] | None = None,
        **kwargs: Any,
    ) -> list[Any]:
        """:meth:`call_each` on the caller's loop: each plugin's ``async def`` implementation is awaited
        before the next plugin is called."""
        results: list[Any] = []
        for name, caller in self._steps(hook_name, only):
            undo = checkpoint() if checkpoint is not None else None
            try:
                result = await _settle(caller(**kwargs))
            except Exception as error:
                if undo is not None:
                    undo()
                self.plugin_failed(name, hook_name, error)
                continue
            results.extend(result if isinstance(result, list) else [result])
        return results

    def _from_sync(self, hook_name: str, work: Any) -> Any:
        """Run ``work`` (a coroutine calling a hook) for sync code: on the project's own loop."""
        import asyncio

        loop = self._loop()
        if running_loop() is not None:
            work.close()
            raise RuntimeError(
                f"a {hook_name} hook with async implementations was called from sync code running on a "
                "loop; call it from async code (Plugins.acall)"
            )
        return asyncio.run_coroutine_threadsafe(work, loop).result()


def _has_awaitables(result: Any) -> bool:
    if isinstance(result, list):
        return any(inspect.isawaitable(item) for item in result)
    return inspect.isawaitable(result)


def _close_awaitables(result: Any) -> None:
    """Close the coroutines that will not be awaited (no "never awaited" warning)."""
    for item in result if isinstance(result, list) else [result]:
        if inspect.iscoroutine(item):
            item.close()


async def _settle(result: Any) -> Any:
    """Pluggy's result with every awaitable in it awaited, in order (a list for most hooks, one value for
    a ``firstresult`` one); when one raises, the rest are closed unawaited and the error propagates."""
    if not isinstance(result, list):
        return await result if inspect.isawaitable(result) else result
    settled: list[Any] = []
    for index, item in enumerate(result):
        if inspect.isawaitable(item):
            try:
                item = await item
            except BaseException:
                _close_awaitables(result[index + 1 :])
                raise
        settled.append(item)
    return settled


def no_loop() -> asyncio.AbstractEventLoop:
    """The loop of a manager given none: there is none, and saying so is the error."""
    raise RuntimeError("an async hook was called from sync code, and no loop was given to run it on")


def _call_one(impl: pluggy.HookImpl, first: bool, /, **kwargs: Any) -> Any:
    """Call one plain implementation (not a wrapper) as pluggy's ``_multicall`` calls each: positional
    arguments by its ``argnames``, keyword-only ones it declares when given; the result as pluggy gives it
    for that hook (``firstresult``: the value; otherwise a list, empty for ``None``)."""
    try:
        args = [kwargs[name] for name in impl.argnames]
    except KeyError as error:
        import pluggy

        raise pluggy.HookCallError(f"hook call must provide argument {error.args[0]!r}") from error
    extra = {name: kwargs[name] for name in impl.kwargnames if name in kwargs} if impl.kwargnames else {}
    result = impl.function(*args, **extra)
    if first:
        return result
    return [] if result is None else [result]
