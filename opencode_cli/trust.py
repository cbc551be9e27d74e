"""Workspace trust: what a project's own files may make run, send or allow, and the one place that decides.

A project is *data* until the user trusts it: the tools read its files, but what it *supplies* is held
back. A project's places are the config files of the project directory and its parents up to the git
worktree (label ``project``) and their ``.opencode`` directories (label ``.opencode``); the user's places
(the global config directory, ``OPENCODE_CONFIG``, ``~/.opencode``, ``OPENCODE_CONFIG_DIR``,
``OPENCODE_CONFIG_CONTENT``, ``OPENCODE_PERMISSION``) always count fully.

The audit: what a project can supply (its kind), and what an untrusted project keeps of it

* code: ``.opencode/tool(s)/*.py`` tool files — listed ("not trusted"), never imported;
* code: ``[mcp.NAME]`` local ``command`` and ``environment`` — held back (``enabled = false`` for a server
  of the user's is kept);
* secret: ``[mcp.NAME]`` remote ``url``, ``headers``, ``oauth`` — held back: nothing is sent to the URL;
* code: ``[lsp.NAME]`` ``command`` and ``env`` — held back (``disabled = true`` and ``lsp = false`` kept);
* code: ``formatter`` commands — held back (``formatter = false`` kept; this package runs no formatter);
* code: ``plugin`` (OpenCode's npm plugins) — held back (this package loads none);
* code: ``[llm] toolboxes``, ``[langchain] tools``/``toolkits``, ``[pydantic_ai] toolsets`` — held back
  (each names code the bridges import or construct);
* secret: ``[provider.NAME]`` (``baseURL``, ``apiKey``, ``headers``, ``options``, models) — the whole table;
* secret: ``{env:NAME}`` and ``{file:path}`` in a JSON file — not filled in (the text stays as written);
* widen: ``[permission]`` — only its ``deny`` rules kept;
* widen: ``[tools]`` switches — only ``false`` kept;
* widen: ``[agent.NAME]`` ``permission``/``tools`` — only ``deny`` rules and ``false`` kept; ``disable =
  false`` held back; the agent's prompt, model, description and the rest kept (data);
* widen: ``[sandbox]`` — a key kept only when at least as strict as the user's (``mode``: off <
  workspace-write < read-only; ``network = false``; ``read = "project"``; ``required = true``);
  ``writable`` and ``readable`` held back;
* widen: ``experimental.code_mode_limits`` — held back (larger limits for code-mode scripts);
* widen: ``[trust]`` — always ignored: nothing of a project trusts it.

Data, kept whatever the trust: ``model``, ``small_model``, ``tool_output``, ``transcript``,
``subagent_depth``, ``plugins.disabled`` (it only turns plugins off), ``skills`` and skill files
(instructions the model reads, like any file of the project), ``instructions``, ``command``,
``experimental`` (but ``code_mode_limits``), and OpenCode's keys this package does not read (``theme``,
``share``…). Installed (pip) plugins are the
user's own and load whether or not the project is trusted.

Why only ``deny`` of a project's rules: rules are read in order and the last match wins, so an ``ask`` or
``allow`` placed after the user's rules (or a built-in agent's: plan denies edits, explore denies all but
its reading tools) can undo a stricter decision for some input, while a ``deny`` can only make a decision
stricter. ``opencode permissions check`` therefore shows the user's rule where the project's would widen.

Trust is given by the user only: ``Project(directory, trusted=True)`` (the host's choice; ``False`` forces
untrusted), ``OPENCODE_TRUST=1`` or ``opencode --trust``, a pattern of ``[trust] directories`` in the user's
own config, or a record written by ``opencode trust``. The record lives in the user's data directory
(``<data>/trust.json``): per project root (the git worktree, else the directory; its real path), the files
that supply something, each with its size, modification time and SHA-256. Checking it stats those files
and hashes only one whose size or time changed; a new supplying file, a changed one or one gone ends the
trust, and the note says which.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import paths
from .config import Config, config_directories, config_files
from .config import load as load_config
from .errors import ConfigError

if TYPE_CHECKING:
    from .plugins import PluginRecord

#: The environment variable that trusts every project (``opencode --trust`` sets it for one command).
TRUST_ENV = "OPENCODE_TRUST"
#: The trust record, in the user's data directory.
RECORD_NAME = "trust.json"
#: The labels of :func:`opencode_cli.config.config_files` that are the project's own places.
PROJECT_LABELS = frozenset({"project", ".opencode"})
#: The key of the user's config listing trusted directory patterns.
PATTERNS_KEY = "trust.directories"

Kind = Literal["code", "secret", "widen"]
#: How each kind is headed in a listing.
HEADINGS: dict[str, str] = {
    "code": "Code that would run",
    "secret": "Where secrets would go",
    "widen": "Rules that would widen",
}
SANDBOX_MODES = ("off", "workspace-write", "read-only")
_DROP = object()


class Item:
    """One thing a project supplies: its ``kind``, its key (``mcp.evil``, ``tool file``), the file it is
    in and what it would do (the command, the URL, the rule)."""

    __slots__ = ("detail", "key", "kind", "path")

    def __init__(self, kind: Kind, key: str, path: Path, detail: str) -> None:
        self.kind, self.key, self.path, self.detail = kind, key, path, detail

    def __repr__(self) -> str:
        return f"<Item {self.kind} {self.line()}>"

    def line(self) -> str:
        """``KEY: DETAIL (PATH)``, as listings show it."""
        return f"{self.key}: {self.detail} ({self.path})"


class Decision:
    """Whether a project is trusted, why (``nothing to trust``, ``OPENCODE_TRUST``, ``the host``, a pattern,
    ``opencode trust``, ``not trusted``), and what changed since it was trusted (one phrase a file)."""

    __slots__ = ("changed", "trusted", "why")

    def __init__(self, trusted: bool, why: str, changed: tuple[str, ...] = ()) -> None:
        self.trusted, self.why, self.changed = trusted, why, changed

    def __repr__(self) -> str:
        return f"<Decision trusted={self.trusted} why={self.why!r} changed={self.changed!r}>"


NOTHING_TO_TRUST = Decision(True, "nothing to trust")


class View:
    """The trusted view of a project: the config and config directories a generation is built from, what
    the project supplies (``items``) and whether it is trusted. ``held`` is what an untrusted project's
    items are (empty when trusted)."""

    def __init__(
        self,
        root: Path,
        config: Config,
        config_dirs: list[Path],
        skill_dirs: list[Path],
        items: list[Item] | None = None,
        decision: Decision = NOTHING_TO_TRUST,
        stamps: dict[str, list[Any]] | None = None,
    ) -> None:
        self.root = root
        self.config = config
        self.config_dirs = config_dirs
        """The config directories tools are loaded from (a project's ``.opencode`` only when trusted)."""
        self.skill_dirs = skill_dirs
        """Every config directory: skills are instructions the model reads, data whatever the trust."""
        self.items = items or []
        self.decision = decision
        self.stamps = stamps or {}
        """The supplying files, each ``[size, mtime_ns, None]`` (hashed when recorded: :meth:`record`)."""

    @property
    def trusted(self) -> bool:
        """Whether what the project supplies takes effect."""
        return self.decision.trusted

    @property
    def held(self) -> list[Item]:
        """What is held back: every item of an untrusted project."""
        return [] if self.trusted else list(self.items)

    def reason(self) -> str:
        """Why an item is held back (the ``error`` of its record)."""
        command = f"`opencode trust {self.root}`"
        if self.decision.changed:
            return f"{'; '.join(self.decision.changed)} since it was trusted; {command} reviews it again"
        return f"the project is not trusted; {command} reviews and trusts it"

    def note(self) -> str | None:
        """The one line said about what is held back (``None`` when nothing is)."""
        held = self.held
        if not held:
            return None
        names = list(dict.fromkeys(_short(item, self.root) for item in held))
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        changed = f"trust ended ({'; '.join(self.decision.changed)}); " if self.decision.changed else ""
        return (
            f"{changed}project {self.root} is not trusted: held back {shown}; "
            f"`opencode trust {self.root}` lists them and trusts it"
        )

    def records(self) -> list[PluginRecord]:
        """The held-back tool files and MCP servers as records with status ``not trusted`` (what ``plugins
        list`` and ``tools list`` show)."""
        from .plugins import PluginRecord

        reason = self.reason()
        found: list[PluginRecord] = []
        kind: Literal["file", "mcp"]
        for item in self.held:
            if item.key == "tool file":
                name, kind, location = item.path.stem, "file", str(item.path)
            elif item.key.startswith("mcp.") and item.key.count(".") == 1:
                name, kind, location = item.key[4:], "mcp", item.detail
            else:
                continue
            found.append(PluginRecord(name, kind, location=location, status="not trusted", error=reason))
        return found

    def listing(self) -> list[str]:
        """What ``opencode trust`` shows: the items by kind, one a line."""
        lines: list[str] = []
        for kind, heading in HEADINGS.items():
            chosen = [item for item in self.items if item.kind == kind]
            if chosen:
                lines.append(f"{heading}:")
                lines += [f"  {item.line()}" for item in chosen]
        return lines

    def record(self) -> dict[str, Any]:
        """The record entry that trusts what is supplied now (the files hashed)."""
        files = {}
        for name, (size, mtime, digest) in self.stamps.items():
            path = Path(name)
            digest = digest or _hash(path)
            if _stamp(path)[:2] != [size, mtime]:
                digest = None  # changed since it was listed: what was shown is not what is there
            files[name] = [size, mtime, digest]
        return {"files": files}


def _short(item: Item, root: Path) -> str:
    if item.key == "tool file":
        return f"tool file {_relative(item.path, root)}"
    return item.key


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


# -- the audit ---------------------------------------------------------------------------------------


def audit(data: Mapping[str, Any], path: Path, user: Mapping[str, Any]) -> tuple[dict[str, Any], list[Item]]:
    """What one project config file supplies (``items``), and what of it an untrusted project keeps (its
    data and the parts that only narrow). ``user`` is the merged config of the user's own places."""
    kept: dict[str, Any] = {}
    items: list[Item] = []
    for key, value in data.items():
        judge = _JUDGES.get(key)
        if judge is None:
            kept[key] = value
            continue
        part = judge(value, _Found(items, path, key), user)
        if part is not _DROP:
            kept[key] = part
    return kept, items


class _Found:
    """Where one key of one file's items go."""

    __slots__ = ("items", "key", "path")

    def __init__(self, items: list[Item], path: Path, key: str) -> None:
        self.items, self.path, self.key = items, path, key

    def add(self, kind: Kind, key: str, detail: str) -> None:
        self.items.append(Item(kind, key, self.path, detail))


def _words(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(word, str) for word in value):
        import shlex

        return shlex.join(value)
    return json.dumps(value, ensure_ascii=False)


def _mcp(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        found.add("code", "mcp", _words(value))
        return _DROP
    theirs = _table(user, "mcp")
    kept: dict[str, Any] = {}
    for name, table in value.items():
        key = f"mcp.{name}"
        if not isinstance(table, Mapping):
            found.add("code", key, _words(table))
            continue
        if table.get("enabled") is False and name in theirs:
            kept[name] = {"enabled": False}  # turning a server of the user's off only narrows
        rest = {k: v for k, v in table.items() if k != "enabled"}
        if not rest:
            continue
        if "command" in rest or rest.get("type") == "local":
            detail = f"runs {_words(rest.get('command'))}"
            if isinstance(rest.get("environment"), Mapping) and rest["environment"]:
                detail += f" with environment {', '.join(map(str, rest['environment']))}"
            found.add("code", key, detail)
        else:
            detail = f"connects to {rest.get('url')}"
            if isinstance(rest.get("headers"), Mapping) and rest["headers"]:
                detail += f" sending headers {', '.join(map(str, rest['headers']))}"
            if rest.get("oauth") not in (None, False):
                detail += " with OAuth sign-in"
            found.add("secret", key, detail)
    return kept or _DROP


def _lsp(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if value is False:
        return value
    if not isinstance(value, Mapping):
        found.add("code", "lsp", _words(value))
        return _DROP
    kept: dict[str, Any] = {}
    for name, table in value.items():
        if not isinstance(table, Mapping):
            found.add("code", f"lsp.{name}", _words(table))
            continue
        part = {k: v for k, v in table.items() if k not in ("command", "env")}
        if part.get("disabled") is False:
            part.pop("disabled")
        if "command" in table:
            found.add("code", f"lsp.{name}", f"runs {_words(table['command'])}")
        elif "env" in table:
            found.add("code", f"lsp.{name}", f"environment {', '.join(map(str, table['env']))}")
        if part and "command" not in table:
            kept[name] = part
        elif part.get("disabled") is True:
            kept[name] = {"disabled": True}
    return kept or _DROP


def _formatter(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if value is False:
        return value
    if isinstance(value, Mapping):
        for name, table in value.items():
            command = table.get("command") if isinstance(table, Mapping) else table
            found.add("code", f"formatter.{name}", f"runs {_words(command)} (formatters are not run here)")
    else:
        found.add("code", "formatter", _words(value))
    return _DROP


def _plugin(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    for name in value if isinstance(value, list) else [value]:
        found.add("code", "plugin", f"loads {name} (OpenCode's plugins are not loaded here)")
    return _DROP


def _code_table(*keys: str) -> Callable[[Any, _Found, Mapping[str, Any]], Any]:
    """A bridge's table: each entry of ``keys`` names code to import or construct."""

    def judge(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
        table = value if isinstance(value, Mapping) else {"": value}
        for key, entries in table.items():
            name = f"{found.key}.{key}" if key else found.key
            for entry in entries if isinstance(entries, list) else [entries]:
                target = entry.get("path", entry) if isinstance(entry, Mapping) else entry
                verb = "imports" if key in keys else "sets"
                found.add("code", name, f"{verb} {_words(target) if not isinstance(target, str) else target}")
        return _DROP

    return judge


def _provider(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        found.add("secret", "provider", _words(value))
        return _DROP
    for name, table in value.items():
        options = table.get("options") if isinstance(table, Mapping) else None
        options = options if isinstance(options, Mapping) else {}
        where = options.get("baseURL")
        detail = f"sends requests and the key to {where}" if where else "changes where and how requests go"
        extras = [key for key in ("apiKey", "headers") if key in options]
        if extras:
            detail += f" (sets {', '.join(extras)})"
        found.add("secret", f"provider.{name}", detail)
    return _DROP


def _permission(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    return _deny_only(value, found, found.key)


def _deny_only(value: Any, found: _Found, where: str) -> Any:
    """A ``[permission]`` table with only its ``deny`` rules (each other rule an item)."""
    if isinstance(value, str):
        value = {"*": value}
    if not isinstance(value, Mapping):
        return value  # not rules at all: the rules' parser says so
    kept: dict[str, Any] = {}
    for permission, rule in value.items():
        if isinstance(rule, str):
            if rule == "deny":
                kept[permission] = rule
            else:
                found.add("widen", f"{where}.{permission}", rule)
        elif isinstance(rule, Mapping):
            denied = {pattern: action for pattern, action in rule.items() if action == "deny"}
            for pattern, action in rule.items():
                if action != "deny":
                    found.add("widen", f"{where}.{permission}", f"{pattern!r} = {action}")
            if denied:
                kept[permission] = denied
        else:
            kept[permission] = rule
    return kept or _DROP


def _off_only(value: Any, found: _Found, where: str) -> Any:
    """Legacy ``tools = {name = bool}`` switches: only ``false`` kept."""
    if not isinstance(value, Mapping):
        return value
    kept = {name: on for name, on in value.items() if on is not True}
    for name, on in value.items():
        if on is True:
            found.add("widen", f"{where}.{name}", "true")
    return kept or _DROP


def _tools(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    return _off_only(value, found, "tools")


def _agent(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        return value
    kept: dict[str, Any] = {}
    for name, table in value.items():
        if not isinstance(table, Mapping):
            kept[name] = table
            continue
        where = f"agent.{name}"
        part = dict(table)
        if "permission" in part:
            rules = _deny_only(part.pop("permission"), found, f"{where}.permission")
            if rules is not _DROP:
                part["permission"] = rules
        if "tools" in part:
            switches = _off_only(part.pop("tools"), found, f"{where}.tools")
            if switches is not _DROP:
                part["tools"] = switches
        if part.get("disable") is False:
            found.add("widen", f"{where}.disable", "false")
            part.pop("disable")
        kept[name] = part
    return kept


def _sandbox(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        return value
    theirs = _table(user, "sandbox")
    strict: dict[str, Callable[[Any, Any], bool]] = {
        "mode": lambda mine, users: _rank(mine) >= _rank(users if users is not None else "off"),
        "network": lambda mine, users: mine is False or mine == users,
        "read": lambda mine, users: mine == "project" or mine == (users or "all"),
        "required": lambda mine, users: mine is True or mine == bool(users),
    }
    kept: dict[str, Any] = {}
    for key, setting in value.items():
        judge = strict.get(key)
        if judge is not None and judge(setting, theirs.get(key)):
            kept[key] = setting
        elif judge is None and not setting:
            kept[key] = setting  # an empty writable/readable list adds nothing
        else:
            found.add("widen", f"sandbox.{key}", json.dumps(setting, ensure_ascii=False))
    return kept or _DROP


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``data[key]`` when it is a table, else an empty one."""
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _rank(mode: Any) -> int:
    return SANDBOX_MODES.index(mode) if mode in SANDBOX_MODES else -1


def _experimental(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping) or "code_mode_limits" not in value:
        return value
    found.add("widen", "experimental.code_mode_limits", _words(value["code_mode_limits"]))
    kept = {key: setting for key, setting in value.items() if key != "code_mode_limits"}
    return kept or _DROP


def _trust(value: Any, found: _Found, user: Mapping[str, Any]) -> Any:
    found.add("widen", "trust", f"{_words(value)} (a project cannot trust itself: ignored even when trusted)")
    return _DROP


_JUDGES: dict[str, Callable[[Any, _Found, Mapping[str, Any]], Any]] = {
    "mcp": _mcp,
    "lsp": _lsp,
    "formatter": _formatter,
    "plugin": _plugin,
    "llm": _code_table("toolboxes"),
    "langchain": _code_table("tools", "toolkits"),
    "pydantic_ai": _code_table("toolsets"),
    "provider": _provider,
    "permission": _permission,
    "tools": _tools,
    "agent": _agent,
    "sandbox": _sandbox,
    "experimental": _experimental,
    "trust": _trust,
}


# -- reading a project's places ----------------------------------------------------------------------


def _read_project_file(path: Path, items: list[Item]) -> dict[str, Any]:
    """A project config file as written: a JSON file's ``{env:}``/``{file:}`` references are listed in
    ``items`` and left as they are."""
    from .config import file_format, read_toml

    if file_format(path) != "json":
        return read_toml(path)
    from .config_json import ENV_REFERENCE, FILE_REFERENCE, blank_jsonc, parse_jsonc

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text: {error}") from None
    try:
        visible = blank_jsonc(text, commas=False)
    except ValueError as error:
        raise ConfigError(f"{path}:{error}") from None
    for pattern, what in ((ENV_REFERENCE, "the environment variable"), (FILE_REFERENCE, "the file")):
        for match in pattern.finditer(visible):
            items.append(
                Item("secret", match.group(0), path, f"would be filled in with {what} {match.group(1)}")
            )
    return parse_jsonc(text, str(path))


def _user_dirs(env: Mapping[str, str]) -> set[Path]:
    folders = {paths.config_dir(env), paths.home_dir(env) / ".opencode"}
    if env.get("OPENCODE_CONFIG_DIR"):
        folders.add(Path(env["OPENCODE_CONFIG_DIR"]))
    return folders


def view(
    directory: Path, worktree: Path | None, env: Mapping[str, str], *, trusted: bool | None = None
) -> View:
    """The trusted view of the project at ``directory``: its config (a project's supplied parts kept only
    when trusted), the config directories tools load from, and what it supplies. ``trusted`` is the
    host's choice (``None``: the environment, the user's patterns and the record decide)."""
    root = Path(os.path.realpath(worktree or directory))
    files = config_files(directory, worktree, env)
    every_dir = config_directories(directory, worktree, env)
    mine = _user_dirs(env)
    their_dirs = [folder for folder in every_dir if folder not in mine]
    theirs = [path for label, path in files if label in PROJECT_LABELS and path.is_file()]
    tools: list[Path] = []
    if their_dirs:  # the sources' module only when the project has a config directory
        from .sources import tool_files

        tools = tool_files(their_dirs)
    if not theirs and not tools:  # the common case: nothing of the project's to judge
        config = load_config(directory, worktree, env, files=files)
        return View(root, config, every_dir, every_dir)

    from .config import read_file

    read: dict[Path, dict[str, Any]] = {}

    def users_only(label: str, path: Path) -> dict[str, Any] | None:
        if label in PROJECT_LABELS:
            return None
        if path not in read:
            read[path] = read_file(path, env)
        return read[path]

    user = load_config(directory, worktree, env, read=users_only, files=files)
    items = [Item("code", "tool file", path, "imported (its module-level code runs)") for path in tools]
    raws: dict[Path, dict[str, Any]] = {}
    kept: dict[Path, dict[str, Any]] = {}
    supplying = list(tools)
    for path in theirs:
        references: list[Item] = []
        raws[path] = _read_project_file(path, references)
        kept[path], found = audit(raws[path], path, user.data)
        if references:
            del raws[path]  # read again, filled in, if trusted
        found = references + found
        if found:
            supplying.append(path)
        items += found
    stamps = {str(path): _stamp(path) for path in supplying}
    decision = decide(root, items, stamps, env, user, trusted)

    def trusted_read(label: str, path: Path) -> dict[str, Any] | None:
        if label not in PROJECT_LABELS:
            return users_only(label, path)
        return raws[path] if path in raws else read_file(path, env)

    def untrusted_read(label: str, path: Path) -> dict[str, Any] | None:
        return kept.get(path, {}) if label in PROJECT_LABELS else users_only(label, path)

    if decision.trusted:
        config = load_config(directory, worktree, env, read=trusted_read, files=files)
        dirs = every_dir
    else:
        config = load_config(directory, worktree, env, read=untrusted_read, files=files)
        dirs = [folder for folder in every_dir if folder in mine]
    return View(root, config, dirs, every_dir, items, decision, stamps)


# -- deciding ----------------------------------------------------------------------------------------


def decide(
    root: Path,
    items: list[Item],
    stamps: Mapping[str, list[Any]],
    env: Mapping[str, str],
    user: Config,
    trusted: bool | None = None,
) -> Decision:
    """Whether the project at ``root`` that supplies ``items`` (from the files of ``stamps``) is trusted,
    in this order: nothing supplied, the host's choice, ``OPENCODE_TRUST``, a pattern of the user's
    ``[trust] directories``, the record."""
    from .flags import parse_bool

    if not items:
        return NOTHING_TO_TRUST
    if trusted is not None:
        return Decision(trusted, "the host")
    value = env.get(TRUST_ENV)
    if value and parse_bool(TRUST_ENV, value):
        return Decision(True, TRUST_ENV)
    home = paths.home_dir(env)
    for pattern in user_patterns(user):
        if covers(pattern, root, home):
            return Decision(True, f"{PATTERNS_KEY} {pattern!r}")
    entry = Records(env).get(root)
    if entry is None:
        return Decision(False, "not trusted")
    changed = changes(entry.get("files") or {}, stamps, root)
    if changed:
        return Decision(False, "changed", tuple(changed))
    return Decision(True, "opencode trust")


def user_patterns(user: Config) -> list[str]:
    """The ``[trust] directories`` patterns of the user's own config (a project's are never read)."""
    value = user.get(PATTERNS_KEY)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{PATTERNS_KEY} must be a list of directory patterns, not {value!r}")
    return value


def changes(recorded: Mapping[str, Any], stamps: Mapping[str, list[Any]], root: Path) -> list[str]:
    """What differs between the files a record trusted and those supplying now, one phrase a file; a
    file whose size and modification time are as recorded is not read."""
    found: list[str] = []
    for name, stamp in stamps.items():
        before = recorded.get(name)
        shown = _relative(Path(name), root)
        if not isinstance(before, list) or len(before) != 3:
            found.append(f"{shown} is new")
        elif before[:2] != stamp[:2] and before[2] != _hash(Path(name)):
            found.append(f"{shown} changed")
    found += [f"{_relative(Path(name), root)} is gone" for name in recorded if name not in stamps]
    return found


def _stamp(path: Path) -> list[Any]:
    try:
        status = path.stat()
    except OSError:
        return [-1, -1, None]
    return [status.st_size, status.st_mtime_ns, None]


def _hash(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# -- patterns ----------------------------------------------------------------------------------------


def covers(pattern: str, directory: Path, home: Path) -> bool:
    """Whether ``pattern`` (``~/src/*``) names ``directory`` or one of its parents. A pattern is an absolute
    path (``~`` is the home directory); in one of its segments ``*``, ``?`` and ``[…]`` match as in the
    shell, never across ``/``; a segment ``**`` matches any number of segments."""
    wanted = _segments(pattern, home)
    if wanted is None:
        return False
    parts = Path(os.path.normpath(directory)).parts[1:]
    return any(_match(wanted, list(parts[:length])) for length in range(len(parts), -1, -1))


def _segments(pattern: str, home: Path) -> list[str] | None:
    text = pattern.strip()
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    if not text.startswith("/"):
        return None
    return [part for part in os.path.normpath(text).split("/") if part]


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[index:]) for index in range(len(parts) + 1))
    import fnmatch

    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _match(rest, parts[1:])


# -- the record --------------------------------------------------------------------------------------


def record_path(env: Mapping[str, str]) -> Path:
    """Where the trust record is: ``<data>/trust.json`` (a running watcher watches it too)."""
    return paths.data_dir(env) / RECORD_NAME


class Records:
    """The trust record, ``<data>/trust.json``: ``{"projects": {ROOT: {"files": {PATH: [size, mtime_ns,
    sha256]}}}}``. Read when a project supplies something; written atomically."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = record_path(env)

    def load(self) -> dict[str, Any]:
        """Every trusted project root and its entry (an unreadable record: none)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    def get(self, root: Path) -> dict[str, Any] | None:
        """The entry of ``root`` (its real path), or ``None``."""
        entry = self.load().get(str(root))
        return entry if isinstance(entry, dict) else None

    def grant(self, root: Path, entry: dict[str, Any]) -> None:
        """Trust ``root`` for the files of ``entry`` (what :meth:`View.record` gives)."""
        projects = self.load()
        projects[str(root)] = entry
        self._save(projects)

    def revoke(self, root: Path) -> bool:
        """Forget ``root``; whether it was there."""
        projects = self.load()
        if projects.pop(str(root), None) is None:
            return False
        self._save(projects)
        return True

    def _save(self, projects: Mapping[str, Any]) -> None:
        from .files import atomic_write

        atomic_write(self.path, json.dumps({"version": 1, "projects": projects}, indent=1, sort_keys=True))
