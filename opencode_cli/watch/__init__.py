"""Hot reload: watch tool files and ``opencode.toml``, build a new generation, swap it in between calls.

What is watched: the ``tool/`` and ``tools/`` folders of every config directory (those that exist, and
the ``.opencode`` folders that could appear), and every ``opencode.toml`` the project reads
(:func:`opencode_cli.config.config_files`). Folders are watched without recursion (tool files are not
searched in sub-folders); a folder that does not exist yet is watched through its nearest existing
parent, so creating ``.opencode/tool/`` is noticed too. watchfiles groups the events of one save
(``step``, 50 ms of quiet) before a reload starts.

Generations
-----------
A :class:`~opencode_cli.project.Project` stays the host's one handle: its plugins, services, sessions,
permission service and store live on across reloads. What a reload replaces is a **generation**
(:mod:`opencode_cli.generation`): the parts built from files — ``config``, ``config_dirs``, ``truncator``,
``skills``, ``agents`` and the ``registry``. The watcher does not build generations: it asks the
project's one builder (:mod:`opencode_cli.builder`) for a new one with the changed files, as every other
source of change does (an MCP server that connects or lists new tools, a plugin's source), and it
observes the builder's stream: each generation installed becomes a :class:`ChangeReport`. The builder
rebuilds only the sources that changed, coalesces what arrives while it works, and installs each
generation in one swap, so a reader sees the old generation or the new, never a mix, and no change is
lost. No service is restarted by a reload.

**Between calls, never during one.** A host marks each call, or each turn (``session.resolve()`` then
``session.dispatch(call)``), with ``with watcher.hold():`` (the project's
:meth:`~opencode_cli.generations.Generations.hold`). While any hold is open a finished generation waits as
*pending*; the last hold to close installs it (a newer build replaces a pending one). So the tools a
model was offered are the tools its calls find, and a call in flight keeps the generation it started
with. (A call that is not held still finishes with the tool object it looked up, but the swap may land
between a turn's ``resolve`` and its ``dispatch``: that is OpenCode#40825's "Unknown tool".) Holds never
wait; a swap waits for a moment with no call in flight. A session keeps the agent (and so the permission
rules) it was opened with; open a new session to apply rules changed in ``opencode.toml``.

**Failures keep the last good version.** A tool file that fails to import keeps, in the new generation,
the tools it had in the current one (taken from the module that imported fine), and the error is
reported as ``file:line: Type: message``. A config file that does not parse (or anything else that
stops a generation from being built) keeps the whole current generation and reports the error. An error
is reported again only when its text changes or its file is saved again.

**Entry-point plugins are not reloaded**: a new generation keeps the tools they registered (their code is
not run again), so a change to an installed package needs a restart. :attr:`Watcher.notice`
says so; ``opencode tools watch`` prints it once at start.

For hosts (:meth:`Project.watch() <opencode_cli.project.Project.watch>` returns a :class:`Watcher`)::

    async with project.watch(model="gpt-5") as watcher:     # starts watching, stops on exit
        async for report in watcher:                        # one ChangeReport per reload
            print(report.summary())

    # elsewhere, in the agent loop (same event loop or another thread):
    with watcher.hold():
        tools = session.resolve()
        ...
        part = await session.dispatch(call)

or pass ``on_change=callback`` (called with each :class:`ChangeReport`, in the thread that installed
it) and just ``await watcher.start()``. :meth:`Watcher.reload` rebuilds at once, without watchfiles.
"""

from __future__ import annotations

from .plan import WatchPlan, watch_plan
from .reports import ChangeReport, ToolChange, ToolInfo
from .watcher import Generation, GenerationView, Watcher

__all__ = [
    "ChangeReport",
    "Generation",
    "GenerationView",
    "ToolChange",
    "ToolInfo",
    "WatchPlan",
    "Watcher",
    "watch_plan",
]
