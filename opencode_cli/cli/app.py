"""The Typer application: ``opencode tools …``, ``opencode plugins …``, ``opencode config …``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import __version__


def _root_typer() -> typer.Typer:
    """The ``opencode`` command itself, without its subcommands."""
    return typer.Typer(
        name="opencode",
        help="The tool layer of the OpenCode coding agent: list, inspect and run the tools a model gets.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_show_locals=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


app = _root_typer()
tools_app = typer.Typer(help="List, inspect and run tools.", no_args_is_help=True)
plugins_app = typer.Typer(help="Installed plugins and tool files.", no_args_is_help=True)
config_app = typer.Typer(help="Read and write opencode.toml.", no_args_is_help=True)
permissions_app = typer.Typer(help="See how permission rules decide.", no_args_is_help=True)
agents_app = typer.Typer(help="Built-in and configured agents.", no_args_is_help=True)
todos_app = typer.Typer(help="The todo lists sessions keep (the todowrite tool).", no_args_is_help=True)
mcp_app = typer.Typer(
    help="MCP servers: their status, adding one to opencode.toml, and serving our tools over MCP.",
    no_args_is_help=True,
)
app.add_typer(tools_app, name="tools")
app.add_typer(plugins_app, name="plugins")
app.add_typer(config_app, name="config")
app.add_typer(permissions_app, name="permissions")
app.add_typer(agents_app, name="agents")
app.add_typer(todos_app, name="todos")
session_app = typer.Typer(
    help="The sessions opencode run keeps: list, show, export, import, fork, delete.", no_args_is_help=True
)
app.add_typer(session_app, name="session")
app.add_typer(mcp_app, name="mcp")
lsp_app = typer.Typer(
    help="Language servers: which serve which files, and a file's diagnostics.", no_args_is_help=True
)
app.add_typer(lsp_app, name="lsp")
sandbox_app = typer.Typer(help="The Landlock sandbox bash commands run in.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")


#: The command groups, by name (``opencode NAME …``).
GROUPS = {
    "tools": tools_app,
    "plugins": plugins_app,
    "config": config_app,
    "permissions": permissions_app,
    "agents": agents_app,
    "todos": todos_app,
    "session": session_app,
    "mcp": mcp_app,
    "lsp": lsp_app,
    "sandbox": sandbox_app,
}


#: The root command's options that take a value (``opencode -p no:web tools list``).
ROOT_VALUE_OPTIONS = ("-p", "--disable-plugin")
#: The root command's flags.
ROOT_FLAGS = ("--trust",)


def _after_root_options(args: list[str]) -> list[str]:
    """``args`` without the root command's leading ``-p VALUE`` / ``--disable-plugin VALUE`` options and
    ``--trust``."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ROOT_FLAGS:
            index += 1
        elif arg in ROOT_VALUE_OPTIONS:
            index += 2
        elif arg.startswith(("--disable-plugin=", "-p")) and arg != "-p":
            index += 1
        else:
            break
    return args[index:]


def app_for(args: list[str]) -> typer.Typer:
    """The application to run for the command line ``args``: when they name a group, the root command with
    that group alone, and when they also name one of its commands, with that command alone (Typer turns
    every function of the application it runs into a command at each start, a few milliseconds a dozen);
    the root command's help (``--help``, ``-h``, or nothing) with each group an empty shell of itself (the
    listing shows a group's name and help, never its commands); the whole application otherwise (``run``,
    ``--version``, completion, a command no group has). The root command's own options (``-p no:NAME``) may
    come first."""
    args = _after_root_options(args)
    if not args or args[0] in ROOT_HELP:
        return _with_group_shells()
    group = GROUPS.get(args[0])
    if group is None:
        return app
    if len(args) > 1:
        group = _with_only(group, args[1])
    single = _root_typer()
    single.callback()(_root)
    single.add_typer(group, name=args[0])
    return single


#: The root command's help options (its ``help_option_names``).
ROOT_HELP = ("-h", "--help")


def _with_group_shells() -> typer.Typer:
    """The whole application with each group emptied of its commands and subgroups: what its own help
    lists is the same (each group's name and help), and Typer does not build the commands it would not
    show."""
    import copy

    shells = []
    for info in app.registered_groups:
        shell = copy.copy(info)
        if info.typer_instance is not None:
            emptied = copy.copy(info.typer_instance)
            emptied.registered_commands = []
            emptied.registered_groups = []
            shell.typer_instance = emptied
        shells.append(shell)
    narrowed = copy.copy(app)
    narrowed.registered_groups = shells
    return narrowed


def _with_only(group: typer.Typer, name: str) -> typer.Typer:
    """``group`` holding just its command ``name`` (``group`` itself when it has no command of that name)."""
    import copy

    chosen = [info for info in group.registered_commands if _command_name(info) == name]
    if not chosen:
        return group
    narrowed = copy.copy(group)
    narrowed.registered_commands = chosen
    narrowed.registered_groups = []
    return narrowed


def _command_name(info: typer.models.CommandInfo) -> str | None:
    """The name a command answers to on the command line (Typer's rule when none was given)."""
    if info.name is not None:
        return info.name
    return None if info.callback is None else typer.main.get_command_name(info.callback.__name__)


def _version(value: bool) -> None:
    if value:
        print(f"opencode-tools {__version__}")
        raise typer.Exit()


def _disabled_plugins(no: list[str], names: list[str]) -> dict[str, str]:
    """The plugins ``-p no:NAME`` and ``--disable-plugin NAME`` disable, with how each was disabled;
    exit 2 for a ``-p`` value that is not ``no:NAME``."""
    from .common import fail

    disabled: dict[str, str] = {}
    for value in no:
        name = value[3:] if value.startswith("no:") else ""
        if not name:
            fail(
                f"error: -p takes no:NAME, to disable the plugin NAME (got {value!r}); plugins are loaded "
                "by installing them"
            )
        disabled[name] = f"-p no:{name} on the command line"
    for name in names:
        disabled[name] = f"--disable-plugin {name} on the command line"
    return disabled


#: The root command's options, named once (Typer evaluates each parameter's annotation at every start,
#: twice; a name costs a fraction of an ``Annotated[…]`` written in the signature, which is compiled each
#: time: the root's options are part of every command).
VersionOption = Annotated[
    bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
]
NoPluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "-p",
        metavar="no:NAME",
        help="Disable the plugin NAME, built-in or installed, for this command (repeatable).",
    ),
]
DisablePluginOption = Annotated[
    list[str] | None,
    typer.Option("--disable-plugin", metavar="NAME", help="The same as -p no:NAME (repeatable)."),
]
TrustOption = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Trust the project for this command: its tool files, MCP servers, providers and rules take "
        "effect (as OPENCODE_TRUST=1; for CI and containers you control).",
    ),
]


@app.callback()
def _root(
    version: VersionOption = False,
    no_plugin: NoPluginOption = None,
    disable_plugin: DisablePluginOption = None,
    trust: TrustOption = False,
) -> None:
    """The tool layer of the OpenCode coding agent."""
    from . import common

    common.DISABLED_PLUGINS.clear()
    common.DISABLED_PLUGINS.update(_disabled_plugins(no_plugin or [], disable_plugin or []))
    common.TRUST_PROJECT = trust


ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="provider/model or a bare model id, e.g. gpt-5 (default: config 'model')."
    ),
]
AgentOption = Annotated[
    str | None, typer.Option("--agent", "-a", help="Agent whose permissions apply (default build).")
]


def _claim_stdout(value: bool) -> bool:
    """``--json``: stdout is the JSON's alone from here on (see :mod:`opencode_cli.machine_output`)."""
    if value:
        from ..machine_output import claim

        claim()
    return value


JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print JSON (a stable, documented shape).", callback=_claim_stdout),
]
SessionOption = Annotated[
    str | None, typer.Option("--session", "-s", help="Session id (default: a new one).")
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve every permission ask.")]
AllowOption = Annotated[
    list[str] | None,
    typer.Option("--allow", metavar="PERMISSION[=PATTERN]", help="Allow without asking (repeatable)."),
]
DenyOption = Annotated[
    list[str] | None,
    typer.Option("--deny", metavar="PERMISSION[=PATTERN]", help="Deny outright (repeatable; wins)."),
]


def _sandbox_mode(value: str | None) -> str | None:
    """``--sandbox MODE``: checked, then set for the whole command as ``OPENCODE_SANDBOX``."""
    if value is not None:
        from .common import use_sandbox

        use_sandbox(value)
    return value


SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        metavar="MODE",
        callback=_sandbox_mode,
        help="Run bash commands in a Landlock sandbox: off, workspace-write or read-only (default: config).",
    ),
]
ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", help="Schema profile instead of the provider's (openai-strict, gemini…)."),
]


@app.command("run")
def run_prompt(
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="What to ask the model.")],
    model: ModelOption = None,
    agent: AgentOption = None,
    session: SessionOption = None,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the last session of this project.")
    ] = False,
    file: Annotated[
        list[Path] | None,
        typer.Option("--file", "-f", metavar="PATH", help="Attach a file to the prompt (repeatable)."),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Title of a new session.")] = None,
    fork: Annotated[
        bool, typer.Option("--fork", help="With --continue or --session: continue a copy of the session.")
    ] = False,
    variant: Annotated[
        str | None,
        typer.Option(
            "--variant", metavar="NAME", help="The model's variant: how hard it thinks (e.g. high)."
        ),
    ] = None,
    format_: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="default (text) or json (one event a line).")
    ] = "default",
    yes: YesOption = False,
    allow: AllowOption = None,
    deny: DenyOption = None,
    sandbox: SandboxOption = None,
    json_: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Send PROMPT to the model with the project's tools and run its tool calls until it answers."""
    from .common import fail
    from .run_cmd import run

    if format_ not in ("default", "json"):
        fail(f"error: --format is default or json, not {format_!r}")
    run(
        prompt,
        model_text=model,
        agent=agent,
        session_id=session,
        yes=yes,
        allow=allow or [],
        deny=deny or [],
        as_json=json_ or format_ == "json",
        continue_last=continue_,
        files=file or [],
        title=title,
        fork=fork,
        variant=variant,
    )


#: The tools commands' own parameters, named once as the root's are (see :data:`VersionOption`): ``tools
#: list``, ``run``, ``inspect``, ``call`` and ``schema`` are the commands a start-up is measured on.
ToolIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The tool id, e.g. read.")]
AllOption = Annotated[bool, typer.Option("--all", help="Also show gated and hidden tools, with the reason.")]
ToolArgsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[ARGS]...",
        help="key=value (typed by the schema), key:=<json>, key=@file, key:=@file.json, or JSON.",
    ),
]
FullOption = Annotated[bool, typer.Option("--full", help="Print the full output, not the truncated view.")]
AnswerOption = Annotated[
    list[str] | None,
    typer.Option(
        "--answer",
        metavar="TEXT",
        help="Answer the next question the tool asks (question, plan_exit): a choice's number or label, "
        "or your own words; commas separate several choices (repeatable, in order).",
    ),
]
FormatOption = Annotated[
    str | None,
    typer.Option("--format", "-f", help="openai, anthropic or gemini (default: the model's provider)."),
]
CallArgument = Annotated[
    str | None,
    typer.Argument(help="A tool call as a model emits it (JSON); default: read --file or stdin."),
]
CallFileOption = Annotated[Path | None, typer.Option("--file", help="Read the call(s) from this file.")]


@tools_app.command("list")
def tools_list(
    model: ModelOption = None,
    agent: AgentOption = None,
    all_: AllOption = False,
    json_: JsonOption = False,
) -> None:
    """List the tools a model would be offered, in order."""
    from .tools_cmd import list_tools

    list_tools(model, agent, all_, json_)


@tools_app.command("inspect")
def tools_inspect(
    tool_id: ToolIdArgument,
    model: ModelOption = None,
    agent: AgentOption = None,
    json_: JsonOption = False,
    profile: ProfileOption = None,
) -> None:
    """Show a tool's description, source, and the JSON Schema its provider receives (and what changed)."""
    from .tools_cmd import inspect_tool

    inspect_tool(tool_id, model, agent, json_, profile)


@tools_app.command("run")
def tools_run(
    tool_id: ToolIdArgument,
    args: ToolArgsArgument = None,
    json_: JsonOption = False,
    session: SessionOption = None,
    agent: AgentOption = None,
    full: FullOption = False,
    yes: YesOption = False,
    allow: AllowOption = None,
    deny: DenyOption = None,
    sandbox: SandboxOption = None,
    answer: AnswerOption = None,
) -> None:
    """Run a tool as a model would call it and print what the model would get."""
    from .tools_cmd import run_tool

    run_tool(
        tool_id,
        args or [],
        json_=json_,
        session_id=session,
        agent=agent,
        full=full,
        yes=yes,
        allow=allow or [],
        deny=deny or [],
        answers=answer or [],
    )


@tools_app.command("schema")
def tools_schema(
    model: ModelOption = None,
    agent: AgentOption = None,
    format: FormatOption = None,
    profile: ProfileOption = None,
) -> None:
    """Print the exact `tools` payload a request to MODEL carries, in that provider's wire shape."""
    from .wire_cmd import schema

    schema(model, agent, format, profile)


@tools_app.command("call")
def tools_call(
    call: CallArgument = None,
    file: CallFileOption = None,
    model: ModelOption = None,
    agent: AgentOption = None,
    profile: ProfileOption = None,
    session: SessionOption = None,
    yes: YesOption = False,
    allow: AllowOption = None,
    deny: DenyOption = None,
    sandbox: SandboxOption = None,
    json_: JsonOption = False,
) -> None:
    """Run raw tool call(s) — OpenAI, Anthropic tool_use or Gemini shape, or a list — through repair and
    dispatch, and print what the model would see."""
    from .wire_cmd import call as run_call

    run_call(
        call,
        file,
        model_text=model,
        agent=agent,
        profile=profile,
        session_id=session,
        yes=yes,
        allow=allow or [],
        deny=deny or [],
        as_json=json_,
    )


@tools_app.command("watch")
def tools_watch(model: ModelOption = None, agent: AgentOption = None, json_: JsonOption = False) -> None:
    """Hot reload: print the tools, then what each save of a tool file or opencode.toml changes (the
    schema difference), until Ctrl-C. --json: one object per line."""
    from .watch_cmd import watch

    watch(model, agent, json_)


@tools_app.command("new")
def tools_new(
    name: Annotated[str, typer.Argument(help="The tool name (letters, digits, _), also the file name.")],
    global_: Annotated[
        bool, typer.Option("--global", "-g", help="Write it in the global config directory.")
    ] = False,
) -> None:
    """Write .opencode/tool/NAME.py from a template that runs as written (never overwrites)."""
    from .new_cmd import new_tool

    new_tool(name, global_)


@plugins_app.command("new")
def plugins_new(
    name: Annotated[
        str, typer.Argument(help="The plugin name (lowercase letters, digits, _): the entry point's.")
    ],
) -> None:
    """Write ./NAME, a plugin package that installs and passes its own tests as written: pyproject.toml
    with the opencode entry point, a @tool, a Toolbox, tests on the test kit, a README (never overwrites)."""
    from .new_cmd import new_plugin

    new_plugin(name)


@plugins_app.command("list")
def plugins_list(json_: JsonOption = False) -> None:
    """List plugins and tool files: name, version, source, hooks, status."""
    from .plugins_cmd import list_plugins

    list_plugins(json_)


PackagesArgument = Annotated[
    list[str],
    typer.Argument(metavar="NAME...", help="Packages, as pip takes them (a name, name>=1.0, a path)."),
]


@plugins_app.command("install")
def plugins_install(names: PackagesArgument) -> None:
    """Install packages into the environment opencode runs from, then list the plugins and tools they
    added. Uses this interpreter's pip (or uv pip when uv is on PATH); under pipx, uv tool or a
    system-managed Python (PEP 668), prints the one command that works there instead. The installer's
    output goes to stderr. Exit codes: 0 installed, 2 usage, 3 not this command's to do (the command
    printed), 4 the installer failed."""
    from .install_cmd import run_installer

    run_installer("install", names)


@plugins_app.command("uninstall")
def plugins_uninstall(names: PackagesArgument) -> None:
    """Remove packages from the environment opencode runs from, then list the plugins and tools that went
    with them. Exit codes as for install."""
    from .install_cmd import run_installer

    run_installer("uninstall", names)


@config_app.command("get")
def config_get(
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. tool_output.max_lines.")],
    json_: JsonOption = False,
) -> None:
    """Print the effective value of a config key (TOML for tables, JSON-like for values), a default when
    unset; the files it came from go to stderr."""
    from .config_cmd import get

    get(key, json_)


@config_app.command("set")
def config_set(
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. tool_output.max_lines.")],
    value: Annotated[
        str, typer.Argument(help="A TOML literal (5, true, [1, 2]); anything else is a string.")
    ],
    global_: Annotated[bool, typer.Option("--global", "-g", help="Write the global config file.")] = False,
) -> None:
    """Set a key in the project's (or the global) opencode.toml."""
    from .config_cmd import set_

    set_(key, value, global_)


@config_app.command("path")
def config_path(json_: JsonOption = False) -> None:
    """Show the config files read (in order), the config directories, and where `set` writes."""
    from .config_cmd import path

    path(json_)


@permissions_app.command("check")
def permissions_check(
    permission: Annotated[
        str, typer.Argument(help="The permission, e.g. read, edit, bash, external_directory.")
    ],
    pattern: Annotated[str, typer.Argument(help="The pattern a tool would ask with, e.g. src/app.py.")],
    agent: AgentOption = None,
    json_: JsonOption = False,
) -> None:
    """Print what the rules decide for PERMISSION on PATTERN, and the rule that decided it."""
    from .permissions_cmd import check

    check(permission, pattern, agent, json_)


@agents_app.command("list")
def agents_list(json_: JsonOption = False) -> None:
    """List agents: name, mode, description."""
    from .permissions_cmd import list_agents

    list_agents(json_)


@todos_app.command("show")
def todos_show(
    session: Annotated[str, typer.Option("--session", "-s", help="The session whose list to show.")],
    json_: JsonOption = False,
) -> None:
    """Show a session's todo list, as the todowrite tool last wrote it."""
    from .todos_cmd import show

    show(session, json_)


SessionIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The session id (ses_…).")]


@app.command("models")
def models_command(
    provider: Annotated[
        str | None, typer.Argument(metavar="[PROVIDER]", help="Only this provider's models.")
    ] = None,
    json_: JsonOption = False,
) -> None:
    """The providers this project can use and their models, with context and output limits (offline)."""
    from .models_cmd import models

    models(provider, json_)


@app.command("stats")
def stats_command(
    tools: Annotated[bool, typer.Option("--tools", help="Only the tool table.")] = False,
    models: Annotated[bool, typer.Option("--models", help="Only the model table.")] = False,
    days: Annotated[int | None, typer.Option("--days", help="Only the last N days.")] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", metavar="DIR", help="Only this project's sessions (. for this one)."),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Tokens and cost per model; per tool: calls, errors, refusals, interruptions, median and p95 time."""
    from .stats_cmd import stats

    stats(tools=tools, models=models, days=days, project=project, as_json=json_)


@session_app.command("list")
def session_list(json_: JsonOption = False) -> None:
    """List this project's sessions: id, title, agent, model, last update, messages (newest first)."""
    from .session_cmd import list_sessions

    list_sessions(json_)


@session_app.command("show")
def session_show(session: SessionIdArgument) -> None:
    """Show a session's transcript: its messages, and each tool call with its status."""
    from .session_cmd import show

    show(session)


@session_app.command("export")
def session_export(
    session: SessionIdArgument,
    opencode: Annotated[
        bool, typer.Option("--opencode", help="In the shape OpenCode's `opencode import` reads.")
    ] = False,
) -> None:
    """Print a session as JSON: its info, messages with their parts, and its subagent sessions."""
    from .session_cmd import export

    export(session, opencode=opencode)


@session_app.command("import")
def session_import(
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export (ours or OpenCode's); - for stdin.")],
) -> None:
    """Keep a session exported as JSON (by `session export` or OpenCode's `opencode export`) in this
    project, under its own id; `run --session ID` continues it."""
    from .session_cmd import import_session

    import_session(file)


@session_app.command("fork")
def session_fork(session: SessionIdArgument) -> None:
    """Copy a session (its messages and parts, new ids) and print the copy's id; the original stays."""
    from .session_cmd import fork

    fork(session)


@session_app.command("delete")
def session_delete(session: SessionIdArgument) -> None:
    """Delete a session, with its subagent sessions, approvals and todo list."""
    from .session_cmd import delete

    delete(session)


@mcp_app.command("list")
def mcp_list(json_: JsonOption = False) -> None:
    """Connect the configured MCP servers and show each one's status, tools and resources."""
    from .mcp_cmd import list_servers

    list_servers(json_)


@mcp_app.command("add", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def mcp_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server's name (its tools are NAME_tool).")],
    url: Annotated[
        str | None, typer.Option("--url", help="A remote server's URL (streamable HTTP or SSE).")
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", metavar="KEY=VALUE", help="An HTTP header (repeatable).")
    ] = None,
    timeout: Annotated[
        int | None, typer.Option("--timeout", help="Milliseconds to start and per request.")
    ] = None,
    global_: Annotated[bool, typer.Option("--global", "-g", help="Write the global config file.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace a server of that name.")] = False,
) -> None:
    """Add a server: `opencode mcp add NAME -- COMMAND ARGS…` (local) or `--url URL` (remote)."""
    from .mcp_cmd import add_server

    add_server(name, list(ctx.args), url, header or [], timeout, global_, force=force)


@mcp_app.command("remove")
def mcp_remove(
    name: Annotated[str, typer.Argument(help="The server to remove from the config file.")],
    global_: Annotated[bool, typer.Option("--global", "-g", help="Edit the global config file.")] = False,
) -> None:
    """Remove a server from opencode.toml, keeping the file's comments (`mcp add` in reverse)."""
    from .mcp_cmd import remove_server

    remove_server(name, global_)


@mcp_app.command("auth")
def mcp_auth(
    name: Annotated[str | None, typer.Argument(help="The remote server to sign in to.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="Show which servers are signed in.")] = False,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL only (also: $OPENCODE_NO_BROWSER, $CI).")
    ] = False,
    callback_port: Annotated[
        int | None,
        typer.Option("--callback-port", help="Port of the 127.0.0.1 callback (default 19876, as OpenCode)."),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Sign in to a remote MCP server with OAuth (authorization code + PKCE); --list: who is signed in."""
    from .mcp_auth_cmd import sign_in

    sign_in(name, list_, no_browser, callback_port, json_)


@mcp_app.command("logout")
def mcp_logout(name: Annotated[str, typer.Argument(help="The server whose credentials to remove.")]) -> None:
    """Forget a remote MCP server's OAuth tokens and client registration."""
    from .mcp_auth_cmd import sign_out

    sign_out(name)


@mcp_app.command("serve")
def mcp_serve(
    model: ModelOption = None,
    agent: AgentOption = None,
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio (one client) or http (streamable HTTP, many).")
    ] = "stdio",
    host: Annotated[
        str | None,
        typer.Option("--host", help="Address to listen on with --transport http (default 127.0.0.1)."),
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port for --transport http (default 4097; 0: a free one).")
    ] = None,
    allow: AllowOption = None,
    deny: DenyOption = None,
    sandbox: SandboxOption = None,
    yes: YesOption = False,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="A remembered session for the stdio client (resumed if kept)."),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host", help="A Host name HTTP clients may use besides the bound address (repeatable)."
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="OPENCODE_SERVE_TOKEN",
            show_envvar=True,
            help="Bearer token every HTTP request must carry (required when --host is not loopback).",
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--directory",
            "-C",
            help="The project to serve. It wins over the client's MCP roots; without it, each client is "
            "served its first file:// root (followed as the roots change), else the current directory.",
        ),
    ] = None,
    roots_within: Annotated[
        list[Path] | None,
        typer.Option(
            "--roots-within",
            help="A directory inside which HTTP clients' roots may also be served (repeatable); by default "
            "only roots inside the current directory are, the others are refused.",
        ),
    ] = None,
) -> None:
    """Serve the tools AGENT and MODEL are offered to any MCP client, with OpenCode's permissions.
    Asks go to the client's user (elicitation); without it, --allow/--deny/--yes and the rules decide.
    The project: --directory if given, else the client's first file:// root, else the current directory."""
    from .mcp_cmd import serve

    serve(
        model_text=model,
        agent=agent,
        transport=transport,
        host=host,
        port=port,
        allow=allow or [],
        deny=deny or [],
        yes=yes,
        session_id=session,
        allow_hosts=allow_host or [],
        token=token,
        directory=directory,
        roots_within=roots_within or [],
    )


@app.command("trust")
def trust_project(
    directory: Annotated[
        Path | None, typer.Argument(help="The project to trust (default: the current directory).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Record the trust without asking.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="Show the trusted projects.")] = False,
    json_: JsonOption = False,
) -> None:
    """Show what the project's files would run, where secrets would go and which rules would widen, then
    ask (on a terminal) and record the trust. Exit 1 when nothing was recorded."""
    from .trust_cmd import list_trusted, trust

    if list_:
        list_trusted(json_)
    else:
        trust(directory, yes, json_)


@app.command("untrust")
def untrust_project(
    directory: Annotated[
        Path | None, typer.Argument(help="The project to stop trusting (default: the current directory).")
    ] = None,
) -> None:
    """Forget the trust of a project: its own code, secret destinations and widening rules are held back
    again. Exit 1 when it was not trusted."""
    from .trust_cmd import untrust

    untrust(directory)


@sandbox_app.command("check")
def sandbox_check(
    command: Annotated[
        str | None, typer.Argument(metavar="[COMMAND]", help="A command line: would it run sandboxed?")
    ] = None,
    sandbox: SandboxOption = None,
    agent: AgentOption = None,
    json_: JsonOption = False,
) -> None:
    """What this kernel supports (Landlock ABI, network rules), the sandbox's effective writable and
    readable lists, and whether COMMAND would run in it."""
    from .sandbox_cmd import check

    check(command, agent, json_)


@lsp_app.command("list")
def lsp_list(json_: JsonOption = False) -> None:
    """Show the configured and built-in language servers: found on this machine or not, used or not."""
    from .lsp_cmd import list_servers

    list_servers(json_)


@lsp_app.command("diagnostics")
def lsp_diagnostics(
    file: Annotated[Path, typer.Argument(help="The file to check.")],
    json_: JsonOption = False,
) -> None:
    """Let the file's language servers check it and print its errors block, as edit would append it."""
    from .lsp_cmd import diagnostics

    diagnostics(file, json_)
