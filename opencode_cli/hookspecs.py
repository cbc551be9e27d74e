"""The plugin contract: every hook an opencode plugin may implement.

Plugins are found through the entry-point group ``opencode`` and implement hooks with the
:data:`opencode_cli.hookimpl` marker::

    from opencode_cli import hookimpl

    @hookimpl
    def tool_execute_before(tool, args):
        args.setdefault("limit", 100)

An implementation may accept any subset of a hook's arguments, by name. Every hook is called through
pluggy, so the plugin loaded last runs first unless ``tryfirst``/``trylast`` say otherwise, and
``@hookimpl(wrapper=True)`` generators wrap the other implementations as in pytest. The built-in tools
are themselves a plugin of this contract (:mod:`opencode_cli.tools`).

Where hooks run: on the caller's event loop, in the caller's task, with no thread of their own. Pluggy's
call is made there, synchronously, so a plain (sync) implementation runs inline on the loop: one that
blocks (a slow file write, a ``time.sleep``, a network request) holds up every other call of the process
while it runs; that is the plugin's choice, and ``async def`` with ``await asyncio.to_thread(...)`` is the
way not to. Any plain implementation may be written as ``async def``: a hook with such implementations is
called plugin by plugin in pluggy's order, each plugin's coroutine awaited on that loop before the next
plugin is called, so ``tryfirst``/``trylast`` hold across sync and async implementations (when a
``wrapper`` is among them, it is one pluggy call and the coroutines are awaited right after it, in
pluggy's order). From sync code with no loop, the project's portal is the loop they run on.

``tool_definition``, ``tool_execute_before`` and ``tool_execute_after`` mirror OpenCode's
``tool.definition``, ``tool.execute.before`` and ``tool.execute.after``; :func:`tool_execute` is ours: it
wraps (or replaces) a whole execution, and :func:`tool_call` wraps a whole call (the doom-loop check and
the execution hooks too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .context import ToolContext
    from .contract import Tool
    from .flags import Flags
    from .project import Project
    from .registry import RegisterTool, ToolDefinitionOutput
    from .results import ToolResult
    from .session import Session

PROJECT_NAME = "opencode"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class PluginDeprecationWarning(DeprecationWarning):
    """A plugin implements a hook, or takes a hook argument, that is deprecated; the message names what to
    write instead and the release that removes it. Reported once per plugin file (as every warning of a
    plugin is) and listed in ``opencode plugins list``; the plugin loads and works as before."""


def deprecated(what: str, instead: str, removed_in: str) -> PluginDeprecationWarning:
    """The warning a deprecated part of the contract gives, in pytest's manner: a hook spec declared
    ``@hookspec(warn_on_impl=deprecated("the hook old_name", "implement new_name(x) instead", "0.3"))``
    (or an argument, with ``warn_on_impl_args={"arg": deprecated(...)}``) makes pluggy warn when a plugin
    implementing it is registered, and :class:`~opencode_cli.plugins.Plugins` reports it, naming the
    implementation's file and line. Keep the old spec working until ``removed_in``."""
    return PluginDeprecationWarning(
        f"{what} is deprecated and will be removed in opencode-tools {removed_in}: {instead}"
    )


@hookspec
def register_tools(register: RegisterTool, flags: Flags, project: Project | None) -> None:
    """Contribute tools.

    Called for each loaded plugin when a project's registry is first built (each plugin is a source of
    the registry, called on its own); hot reload does not call it again for a plugin that did not change.

    :param register: call ``register(tool)`` for each tool to add. ``tool`` is anything
        :func:`opencode_cli.tool` or :func:`opencode_cli.define` returns. The tool's ``id`` is used
        verbatim; a tool registered later with the same id replaces an earlier one (built-ins first, then
        tool files from config directories, then entry-point plugins in load order). Pass
        ``gate="reason"`` for a tool that exists but is switched off in this environment (it is listed
        as hidden, with the reason).
    :param flags: the project's :class:`opencode_cli.flags.Flags` (``OPENCODE_*`` environment), for
        plugins whose tools depend on them.
    :param project: the :class:`opencode_cli.project.Project` whose registry is being built (its
        directory, environment, config and skills), for tools whose description depends on the project;
        ``None`` when a registry is built without one. Read it lazily: the registry is not ready yet.

    Called plugin by plugin (``async def`` awaited on the caller's loop). A plugin that raises here is
    marked ``failed`` in ``opencode plugins list``; the tools it registered before raising are kept.
    """


@hookspec
def tool_definition(tool_id: str, model: Any, output: ToolDefinitionOutput) -> None:
    """Change what a model is told about a tool.

    Called when an offer is made, once per tool that survived the per-model filter, after the built-in
    adjustments. A session's offer is made once per generation (and agent, rules, model and host) and
    kept on the generation: later requests of that generation reuse it, each host getting a copy of its
    own; a reload makes a new generation and calls the hook again. ``opencode tools list/inspect`` and
    ``Generation.offer`` make an offer each time they are asked.

    :param tool_id: the tool's id, e.g. ``"read"``.
    :param model: the :class:`opencode_cli.registry.ModelRef` being served (``provider``, ``id``), or
        ``None`` when no model was named.
    :param output: mutable; assign ``output.description`` (str) or ``output.parameters`` (a JSON Schema
        dict) to change them. Reading ``output.parameters`` is lazy: the schema is only generated when a
        hook looks at it.

    Mirrors OpenCode's ``tool.definition`` (which OpenCode calls on every request). Return values are
    ignored. Called plugin by plugin: a plugin that raises here is marked ``failed``, what it changed in
    ``output`` is undone, and the other plugins' implementations still run.
    """


@hookspec
def tool_execute_before(tool: str, session_id: str, call_id: str | None, args: dict[str, Any]) -> None:
    """Inspect or change a tool call before it runs.

    Called for every tool call, after the call was parsed and before the tool validates its arguments.

    :param tool: the id of the tool being called.
    :param session_id: the session making the call (``ses_...``).
    :param call_id: the provider's tool-call id, or ``None`` when run from the shell.
    :param args: the raw arguments. Mutate this dict **in place** to change them; rebinding the name has
        no effect (as in OpenCode).

    Raising blocks the call: the exception's message becomes the tool error the model sees.
    """


@hookspec(firstresult=True)
def tool_execute(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Awaitable[ToolResult] | None:
    """Run a tool: validate, execute, truncate. Returns an **awaitable** of the result.

    Called for every tool call, between :func:`tool_execute_before` and :func:`tool_execute_after`. The
    built-in implementation (``trylast``) returns ``tool.run(args, ctx)``. Because tools are async, the
    result of this hook is an awaitable, not the result itself: an ``async def`` implementation returns
    one by being called, and the first implementation to return something other than ``None`` decides
    (``firstresult``). To wrap every execution, write a wrapper that awaits what it is given::

        @hookimpl(wrapper=True)
        def tool_execute(tool, args, ctx):
            running = yield

            async def timed():
                started = time.perf_counter()
                result = await running
                result.metadata["ms"] = round((time.perf_counter() - started) * 1000)
                return result

            return timed()

    :param tool: the loaded :class:`opencode_cli.Tool` being run (its ``id``, ``schema()``, ``run``).
    :param args: the arguments after :func:`tool_execute_before`, not yet validated.
    :param ctx: the call's :class:`opencode_cli.ToolContext` (its ``project``, ``session``, ``model``,
        ``abort``, ``ask``).

    An exception raised, or raised when the awaitable is awaited, becomes the tool error the model sees.
    """


@hookspec(firstresult=True)
def tool_call(
    tool: str,
    session_id: str,
    call_id: str | None,
    args: dict[str, Any],
    session: Session,
    proceed: Callable[[], Awaitable[ToolResult]],
) -> Awaitable[ToolResult] | None:
    """Wrap a whole tool call. Returns an **awaitable** of the result.

    Called once per call, around everything the call path does for it: the doom-loop check, then
    :func:`tool_execute_before`, :func:`tool_execute` and :func:`tool_execute_after`. The built-in
    implementation (``trylast``) returns ``proceed()``, which does all of that; as with
    :func:`tool_execute`, a ``wrapper=True`` implementation awaits what it is given::

        @hookimpl(wrapper=True)
        def tool_call(tool, call_id):
            running = yield

            async def logged():
                try:
                    return await running
                finally:
                    print(f"{tool} {call_id} ended", file=sys.stderr)

            return logged()

    Whatever the call raises (a refused doom-loop ask, a hook's error, the tool's error, an interrupt)
    reaches the wrappers as an exception from the awaitable, and the work done inside it runs in the
    wrapper's context (context variables set around ``await running`` are seen by the hooks and the tool).
    The built-in ``telemetry`` plugin traces each call this way.

    :param tool: the id of the tool being called.
    :param session_id: the session making the call.
    :param call_id: the provider's tool-call id, or ``None`` when run from the shell.
    :param args: the raw arguments (as :func:`tool_execute_before` will get them).
    :param session: the :class:`opencode_cli.session.Session` making the call (its ``project``, ``agent``).
    :param proceed: makes the call: returns the awaitable of its result (call it at most once).
    """


@hookspec
def tool_execute_after(
    tool: str, session_id: str, call_id: str | None, args: dict[str, Any], result: ToolResult
) -> None:
    """Inspect or change the result of a finished tool call.

    Called after a tool returned successfully (not when it raised), after truncation, before the result
    is handed to the model or printed.

    :param tool: the id of the tool that ran.
    :param session_id: the session making the call.
    :param call_id: the provider's tool-call id, or ``None``.
    :param args: the arguments the tool received.
    :param result: mutable :class:`opencode_cli.ToolResult`; assign ``result.title``, ``result.output``,
        ``result.metadata`` or ``result.attachments``.

    Mirrors OpenCode's ``tool.execute.after``. Raising turns the call into a tool error.
    """


@hookspec
def permission_ask(request: PermissionRequest, output: AskOutput) -> None:
    """Settle a permission request before a rule's ``ask`` puts it to the user.

    Called when a tool's ``ctx.ask`` (or ``ctx.ask_blocking``) is judged ``ask`` by the rules and the
    approvals so far (never for ``allow`` or ``deny``), before the request is published and the user is
    prompted. A policy plugin may decide it, an audit plugin may just record it.

    :param request: the :class:`opencode_cli.permission.Request` (``permission``, ``patterns``,
        ``always``, ``metadata``, ``session_id``, ``tool``: the message and call ids).
    :param output: mutable :class:`opencode_cli.permission.AskOutput`; set ``output.status`` to
        ``"allow"`` (the call goes on, nobody is asked), ``"deny"`` (the call fails as rejected:
        ``The user rejected permission to use this specific tool call.``) or leave ``"ask"``. Every
        implementation sees what the earlier ones set; the last word counts. Another value is warned
        about and the user is asked.

    Mirrors OpenCode's ``permission.ask``. Raising fails the call with the exception's message.
    """


@hookspec
def shell_env(cwd: str, session_id: str, call_id: str | None, output: ShellEnvOutput) -> None:
    """Change the environment of a process a tool starts for the model (bash's shell).

    Called once per process, before it starts (for bash: before its permission is asked, as the command
    is scanned with that same environment), with the environment it would get.

    :param cwd: the directory the process starts in.
    :param session_id: the session making the call.
    :param call_id: the provider's tool-call id, or ``None``.
    :param output: mutable :class:`opencode_cli.context.ShellEnvOutput`; ``output.env`` is a dict of the
        whole environment (the project's): set, change or delete variables in place, or assign a new
        dict. Values are made strings.

    Mirrors OpenCode's ``shell.env``. Raising fails the call with the exception's message. A tool of your
    own gets the same environment with ``await ctx.process_env(cwd)``.
    """


if TYPE_CHECKING:
    from .context import ShellEnvOutput
    from .models import RegisterProvider
    from .permission import AskOutput
    from .permission import Request as PermissionRequest


@hookspec
def register_providers(register: RegisterProvider, project: Project) -> None:
    """Contribute model providers.

    Called each time a model is opened (:func:`opencode_cli.models.open_model`), through pluggy: the
    last-loaded plugin is called first, and the first registration of a name (or of an npm package)
    wins, so a plugin's provider replaces a built-in one of the same name. The built-in plugin registers
    the provider kind for OpenAI-compatible endpoints and the built-in ``openai`` provider.

    :param register: call ``register(provider)`` for each provider to add. ``provider`` is a
        :class:`opencode_cli.models.Provider` (a named provider with its own ``chat``; a
        ``[provider.NAME]`` table of the same name does not change it), or a
        :class:`opencode_cli.models.ProviderFactory` (the provider kind behind some ``npm`` packages of
        ``[provider.NAME]`` tables, with the built-in providers it brings, which tables extend).
    :param project: the :class:`opencode_cli.project.Project` opening the model (its ``env``, its config,
        its ``services`` for clients that live as long as the project).

    Keep it cheap and import no SDK here: providers connect when a model is opened. A plugin that raises
    here makes opening any model fail with a :class:`opencode_cli.models.ModelError` naming the error.
    """


# -- the chat hooks: called by the run loop (opencode_cli.models.loop), as OpenCode's plugins get them ----

if TYPE_CHECKING:
    from .models.base import Message as ChatMessage
    from .models.chat import ChatModel
    from .models.hooks import ChatParams, CompactingOutput
    from .transcript import Message, Part


@hookspec
def chat_message(session_id: str, agent: str, model: ChatModel, message: Message, parts: list[Part]) -> None:
    """See (or change) a new user message and its parts before the model is asked.

    Called once per run, after the prompt and its attached files are in the transcript.

    :param session_id: the session the message belongs to.
    :param agent: the name of the agent the session runs.
    :param model: the :class:`opencode_cli.models.ChatModel` the run uses (``ref``, ``limits``).
    :param message: the transcript's :class:`opencode_cli.transcript.Message` (role ``user``).
    :param parts: mutable list of its parts: change a ``TextPart``'s ``text``, or append a part (a
        ``TextPart(..., synthetic=True)``); what the list holds afterwards is saved and sent.

    Mirrors OpenCode's ``chat.message``. Raising ends the run with the error.
    """


@hookspec
def chat_params(session_id: str, agent: str, model: ChatModel, provider: str, params: ChatParams) -> None:
    """Change the sampling settings of each request to the model.

    :param session_id: the session making the request.
    :param agent: the name of the agent the session runs.
    :param model: the :class:`opencode_cli.models.ChatModel` asked.
    :param provider: the provider's name (``model.provider.name``).
    :param params: mutable :class:`opencode_cli.models.hooks.ChatParams`: ``temperature``, ``top_p``,
        ``top_k``, ``max_output_tokens`` (``None``: not sent) and ``options`` (extra request body fields),
        filled with the agent's settings and the model's options.

    Mirrors OpenCode's ``chat.params``. Raising ends the run with the error.
    """


@hookspec
def chat_headers(
    session_id: str, agent: str, model: ChatModel, provider: str, headers: dict[str, str]
) -> None:
    """Add HTTP headers to each request to the model.

    :param session_id: the session making the request.
    :param agent: the name of the agent the session runs.
    :param model: the :class:`opencode_cli.models.ChatModel` asked.
    :param provider: the provider's name.
    :param headers: mutable dict of extra headers (empty to start with); set keys to send them.

    Mirrors OpenCode's ``chat.headers``. Raising ends the run with the error.
    """


@hookspec
def chat_system_transform(session_id: str, model: ChatModel, system: list[str]) -> None:
    """Change the system prompt of each request.

    :param session_id: the session making the request.
    :param model: the :class:`opencode_cli.models.ChatModel` asked.
    :param system: mutable list of the system prompt's parts (the agent's prompt, then the environment);
        each part is sent as one system message (one cacheable block for Anthropic).

    Mirrors OpenCode's ``experimental.chat.system.transform``. Raising ends the run with the error.
    """


@hookspec
def chat_messages_transform(session_id: str, model: ChatModel, messages: list[ChatMessage]) -> None:
    """Change the conversation sent with each request (after the system prompt).

    :param session_id: the session making the request.
    :param model: the :class:`opencode_cli.models.ChatModel` asked.
    :param messages: mutable list of :class:`opencode_cli.models.Message` (frozen: replace, insert or
        remove items); the transcript itself is not changed.

    Mirrors OpenCode's ``experimental.chat.messages.transform``. Raising ends the run with the error.
    """


@hookspec
def session_compacting(session_id: str, output: CompactingOutput) -> None:
    """Shape the summary request when a session is compacted (its context is nearly full).

    :param session_id: the session being compacted.
    :param output: mutable :class:`opencode_cli.models.hooks.CompactingOutput`: append strings to
        ``output.context`` to have them added to the summary request, or set ``output.prompt`` to replace
        its instructions.

    Mirrors OpenCode's ``experimental.session.compacting``.
    """


@hookspec
def event(event: dict[str, Any]) -> None:
    """See the events of a session's run, in the order they happen.

    :param event: ``{"type": ..., "properties": {...}}``; the types are ``message.updated`` (``info``),
        ``message.part.updated`` (``part``), ``permission.asked`` and ``permission.replied`` (the
        request), ``session.error`` (``sessionID``, ``error``) and ``session.idle`` (``sessionID``: the
        run ended).

    Mirrors OpenCode's ``event``. Return values are ignored; a plugin that raises is warned about once and
    the run goes on.
    """
