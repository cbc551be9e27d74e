"""Configuration: config directories (core spec §9.1), config file loading, merging and writing.

Two formats are read: our ``opencode.toml`` and OpenCode's own ``opencode.json`` / ``opencode.jsonc``
(JSONC with ``{env:…}`` and ``{file:…}``, see :mod:`opencode_cli.config_json`). Places are read in this
order, later ones overriding earlier ones (tables merge deeply, key order kept, since permission rules
depend on it):

1. the global config dir ``$XDG_CONFIG_HOME/opencode`` (default ``~/.config/opencode``);
2. the file named by ``OPENCODE_CONFIG`` (JSON when it ends in ``.json``/``.jsonc``, else TOML);
3. each directory from the project root (git worktree) down to the working directory;
4. ``~/.opencode`` and each ``.opencode`` directory, farthest first;
5. ``$OPENCODE_CONFIG_DIR``;
6. ``OPENCODE_CONFIG_CONTENT`` (JSONC when it starts with ``{``, else TOML);
7. ``OPENCODE_PERMISSION`` (JSON) merged into ``[permission]``.

In one place the JSON files come first, in OpenCode's order (``config.json``, ``opencode.json``,
``opencode.jsonc`` in the global dir; ``opencode.jsonc``, ``opencode.json`` elsewhere), and
``opencode.toml`` last: where a JSON file and the TOML file beside it set the same key, the TOML wins.
Two of OpenCode's quirks are not copied: it reads every ``opencode.jsonc`` up the tree before every
``opencode.json``, and its ``.opencode`` directories nearest first; here a nearer place always wins,
whatever the format. OpenCode's managed (enterprise) config directory is not read.

Keys OpenCode knows that this package does not use yet (``provider``, ``lsp``...) are kept and
ignored. An unknown key gets a warning with the closest known key.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import paths
from .errors import ConfigError
from .limits import MAX_BYTES, MAX_LINES, TRANSCRIPT_BYTES
from .record import Record

FILE_NAME = "opencode.toml"
#: OpenCode's file names, in the order it merges them (the later wins).
JSON_NAMES = ("opencode.jsonc", "opencode.json")
GLOBAL_JSON_NAMES = ("config.json", "opencode.json", "opencode.jsonc")

#: What a setting this package reads is when no config sets it (``opencode config get`` shows these; the
#: limits are :mod:`opencode_cli.limits`, and ``subagent_depth`` is ``tools.task.DEFAULT_DEPTH``).
DEFAULTS: dict[str, Any] = {
    "tool_output.max_lines": MAX_LINES,
    "tool_output.max_bytes": MAX_BYTES,
    "transcript.max_bytes": TRANSCRIPT_BYTES,
    "subagent_depth": 1,
    "plugins.disabled": [],
    "sandbox.mode": "off",  # opencode_cli.sandbox.settings
    "sandbox.read": "all",
    "sandbox.required": False,
}

#: Keys this package reads, with their sub-keys (``None``: free-form table).
OUR_KEYS: dict[str, set[str] | None] = {
    "tool_output": {"max_lines", "max_bytes"},
    "transcript": {"max_bytes"},  # what a session holds in memory (opencode_cli.transcript)
    "permission": None,
    "agent": None,
    "plugins": {"disabled"},
    "model": None,
    "tools": None,
    "mcp": None,  # a table per server, checked by opencode_cli.mcp.config
    "subagent_depth": None,  # how deep task's subagents may nest (default 1)
    "sandbox": {"mode", "network", "writable", "read", "readable", "required"},  # opencode_cli.sandbox
    "llm": {"toolboxes"},  # opencode_cli.bridges: llm toolboxes in llm's spelling
    "langchain": {"tools", "toolkits"},  # LangChain tools and toolkits by import path
    "pydantic_ai": {"toolsets"},  # pydantic-ai toolsets by import path
    "trust": {"directories"},  # opencode_cli.trust: read from the user's own places only
}

#: Top-level keys of OpenCode's config schema: accepted and kept, not used (yet).
OPENCODE_KEYS = frozenset(
    {
        "$schema", "theme", "keybinds", "logLevel", "tui", "server", "command", "watcher", "plugin",
        "snapshot", "share", "autoshare", "autoupdate", "disabled_providers", "enabled_providers",
        "small_model", "default_agent", "username", "mode", "provider", "formatter", "lsp",
        "instructions", "layout", "enterprise", "compaction", "experimental", "attribution", "skills",
        "references", "reference",
    }
)  # fmt: skip


class ConfigSource(Record):
    """One place configuration came from (``inline_format``: the format of an inline source's text,
    ``OPENCODE_CONFIG_CONTENT`` or ``OPENCODE_PERMISSION``)."""

    __slots__ = ("data", "inline_format", "label", "path")

    def __init__(
        self, label: str, path: Path | None, data: dict[str, Any], inline_format: str = "toml"
    ) -> None:
        self.label = label
        self.path = path
        self.data = data
        self.inline_format = inline_format

    @property
    def format(self) -> str:
        """``json`` or ``toml``."""
        return file_format(self.path) if self.path is not None else self.inline_format

    def describe(self) -> str:
        """The file's path, or the variable's name for an inline source."""
        return str(self.path) if self.path is not None else self.label


class Config(Record):
    """The merged configuration of a project, plus where each part came from."""

    __slots__ = ("data", "sources", "warnings")

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        sources: list[ConfigSource] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.data: dict[str, Any] = {} if data is None else data
        self.sources: list[ConfigSource] = [] if sources is None else sources
        self.warnings: list[str] = [] if warnings is None else warnings

    def get(self, dotted: str, default: Any = None) -> Any:
        """A value by dotted key (``tool_output.max_lines``), or ``default``."""
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def origins(self, parts: Sequence[str]) -> list[ConfigSource]:
        """Every source that sets the key ``parts`` (a path of keys, which may hold dots), in load order:
        for a value the last one is where it came from; a table may be merged from several."""
        found: list[ConfigSource] = []
        for source in self.sources:
            if _has(source.data, parts):
                found.append(source)
            elif any(_value_at(source.data, parts[:depth]) for depth in range(1, len(parts))):
                found = []  # it set a table above the key to a plain value: what came before is gone
        return found

    def origin(self, parts: Sequence[str]) -> ConfigSource | None:
        """The source that decided the most specific existing key along ``parts`` (``None``: no source)."""
        for depth in range(len(parts), 0, -1):
            found = self.origins(parts[:depth])
            if found:
                return found[-1]
        return None

    def effective(self, dotted: str, default: Any = None) -> Any:
        """A value by dotted key with :data:`DEFAULTS` filled in: a default for an unset setting, and a
        table with the defaults of its unset keys (``tool_output`` gives both limits)."""
        missing = object()
        value = self.get(dotted, missing)
        prefix = dotted + "."
        below = {key[len(prefix) :]: v for key, v in DEFAULTS.items() if key.startswith(prefix)}
        if value is missing:
            if dotted in DEFAULTS:
                return DEFAULTS[dotted]
            value = {} if below else default
        if isinstance(value, Mapping) and below:
            return _fill(value, below)
        return value

    def boolean(self, dotted: str, default: bool = False) -> bool:
        """A boolean setting (``default`` when unset); anything else is a :class:`ConfigError`."""
        value = self.get(dotted)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{dotted} must be true or false, not {value!r}")
        return value

    def positive_int(self, dotted: str) -> int | None:
        """A positive integer setting, or ``None`` when unset; anything else is a :class:`ConfigError`."""
        value = self.get(dotted)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{dotted} must be a positive integer, not {value!r}")
        return value


def _fill(table: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``table`` with the dotted ``defaults`` set where it has no value."""
    filled = dict(table)
    for key, fallback in defaults.items():
        head, _, rest = key.partition(".")
        if not rest:
            filled.setdefault(head, fallback)
        elif isinstance(filled.get(head, {}), Mapping):
            filled[head] = _fill(filled.get(head, {}), {rest: fallback})
    return filled


_ABSENT = object()


def _at(data: Mapping[str, Any], parts: Sequence[str]) -> Any:
    """The value ``data`` sets at the key path ``parts``, or ``_ABSENT``."""
    node: Any = data
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _has(data: Mapping[str, Any], parts: Sequence[str]) -> bool:
    return _at(data, parts) is not _ABSENT


def _value_at(data: Mapping[str, Any], parts: Sequence[str]) -> bool:
    """Whether ``data`` sets ``parts`` to a plain value (not a table)."""
    value = _at(data, parts)
    return value is not _ABSENT and not isinstance(value, Mapping)


def file_format(path: Path) -> str:
    """``json`` for ``*.json`` / ``*.jsonc``, else ``toml``."""
    return "json" if path.suffix in (".json", ".jsonc") else "toml"


def find_worktree(directory: Path) -> Path | None:
    """The nearest ancestor (or ``directory`` itself) holding ``.git``; ``None`` outside git."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _walk_down(directory: Path, top: Path | None) -> list[Path]:
    """``directory`` and its ancestors up to ``top`` (or only ``directory``), farthest first."""
    chain = [directory]
    if top is not None:
        for parent in directory.parents:
            if not parent.is_relative_to(top):
                break
            chain.append(parent)
    return list(reversed(chain))


def config_directories(directory: Path, worktree: Path | None, env: Mapping[str, str]) -> list[Path]:
    """OpenCode's config directories, in order (core spec §9.1), without duplicates.

    The global directory first, then every existing ``.opencode`` directory from ``directory`` up to the
    worktree root (nearest first), then ``~/.opencode`` if it exists, then ``OPENCODE_CONFIG_DIR``.
    """
    found: list[Path] = [paths.config_dir(env)]
    if not _flag(env, "OPENCODE_DISABLE_PROJECT_CONFIG"):
        for folder in reversed(_walk_down(directory, worktree)):
            if (folder / ".opencode").is_dir():
                found.append(folder / ".opencode")
    home_dot = paths.home_dir(env) / ".opencode"
    if home_dot.is_dir():
        found.append(home_dot)
    if env.get("OPENCODE_CONFIG_DIR"):
        found.append(Path(env["OPENCODE_CONFIG_DIR"]))
    unique: list[Path] = []
    for folder in found:
        if folder not in unique:
            unique.append(folder)
    return unique


def _flag(env: Mapping[str, str], name: str) -> bool:
    from .flags import parse_bool

    value = env.get(name)
    return False if value is None else parse_bool(name, value)


def config_files(directory: Path, worktree: Path | None, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """Candidate config files in load order, as ``(label, path)``; missing files are included.

    In each place OpenCode's JSON files come before ``opencode.toml`` (see the module's docstring)."""
    global_dir = paths.config_dir(env)
    files: list[tuple[str, Path]] = [
        ("global", global_dir / name) for name in (*GLOBAL_JSON_NAMES, FILE_NAME)
    ]
    if env.get("OPENCODE_CONFIG"):
        files.append(("OPENCODE_CONFIG", Path(env["OPENCODE_CONFIG"])))
    # ~/.opencode is not project config: OPENCODE_DISABLE_PROJECT_CONFIG keeps it (core spec §9.1)
    chain = [] if _flag(env, "OPENCODE_DISABLE_PROJECT_CONFIG") else _walk_down(directory, worktree)
    files.extend(("project", path) for folder in chain for path in _place(folder))
    files.extend(("~/.opencode", path) for path in _place(paths.home_dir(env) / ".opencode"))
    files.extend((".opencode", path) for folder in chain for path in _place(folder / ".opencode"))
    if env.get("OPENCODE_CONFIG_DIR"):
        files.extend(("OPENCODE_CONFIG_DIR", path) for path in _place(Path(env["OPENCODE_CONFIG_DIR"])))
    unique: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for label, path in files:
        if path not in seen:
            seen.add(path)
            unique.append((label, path))
    return unique


def _place(folder: Path) -> list[Path]:
    """The config files of one folder, in merge order: OpenCode's JSON files, then ``opencode.toml``."""
    return [folder / name for name in (*JSON_NAMES, FILE_NAME)]


def read_file(path: Path, env: Mapping[str, str], *, filled: bool = True) -> dict[str, Any]:
    """One config file in its format (:func:`file_format`); ``filled=False`` leaves a JSON file's
    ``{env:}``/``{file:}`` references as written (for a look at its keys, which reads nothing else)."""
    if file_format(path) == "json":
        from .config_json import read_json

        return read_json(path, env, filled=filled)
    return read_toml(path)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; a syntax error becomes a :class:`ConfigError` naming the file and line."""
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text: {error}") from None


def deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``override`` into a copy of ``base``: tables merge, other values are replaced.

    Keys already in ``base`` keep their position; new keys are appended in ``override``'s order.
    """
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def unknown_keys(data: Mapping[str, Any]) -> Iterator[str]:
    """``unknown config key 'KEY' (did you mean 'CLOSE'?)`` for each key of ``data`` that is neither ours
    nor OpenCode's (sub-keys too, for our tables with a fixed set of them)."""
    known = set(OUR_KEYS) | OPENCODE_KEYS
    for key, value in data.items():
        if key in OUR_KEYS:
            allowed = OUR_KEYS[key]
            if allowed is not None and isinstance(value, Mapping):
                for sub in value:
                    if sub not in allowed:
                        yield _unknown(f"{key}.{sub}", sub, allowed, prefix=f"{key}.")
        elif key not in known:
            yield _unknown(key, key, known)


def _unknown_key_warnings(data: Mapping[str, Any], where: str) -> Iterator[str]:
    for problem in unknown_keys(data):
        yield f"{where}: {problem}; it is ignored"


def _unknown(full: str, key: str, choices: set[str] | frozenset[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(key, sorted(choices), n=1, cutoff=0.6)
    hint = f" (did you mean '{prefix}{close[0]}'?)" if close else ""
    return f"unknown config key '{full}'{hint}"


def load(
    directory: Path,
    worktree: Path | None,
    env: Mapping[str, str] = os.environ,
    *,
    read: Callable[[str, Path], dict[str, Any] | None] | None = None,
    files: list[tuple[str, Path]] | None = None,
) -> Config:
    """Read and merge every config source for a project rooted at ``directory``.

    ``read(label, path)`` gives a file's data instead of reading it (``None``: leave the file out), and
    ``files`` is :func:`config_files`' answer when the caller has it: the trusted view
    (:mod:`opencode_cli.trust`) reads a project's files through them."""
    config = Config()
    for label, path in config_files(directory, worktree, env) if files is None else files:
        if label == "OPENCODE_CONFIG" and not path.is_file():
            raise ConfigError(f"OPENCODE_CONFIG names {path}, which is not a file")
        if not path.is_file():
            continue
        found = read_file(path, env) if read is None else read(label, path)
        if found is None:
            continue
        data = found
        config.warnings.extend(_unknown_key_warnings(data, str(path)))
        config.sources.append(ConfigSource(label, path, data))
        config.data = deep_merge(config.data, data)
    content = env.get("OPENCODE_CONFIG_CONTENT")
    if content:
        data, kind = _parse_inline(content, "OPENCODE_CONFIG_CONTENT", directory, env)
        config.warnings.extend(_unknown_key_warnings(data, "OPENCODE_CONFIG_CONTENT"))
        config.sources.append(ConfigSource("OPENCODE_CONFIG_CONTENT", None, data, kind))
        config.data = deep_merge(config.data, data)
    permission = env.get("OPENCODE_PERMISSION")
    if permission:
        try:
            rules = json.loads(permission)
        except json.JSONDecodeError as error:
            raise ConfigError(f"OPENCODE_PERMISSION is not valid JSON: {error}") from None
        if not isinstance(rules, dict | str):
            raise ConfigError("OPENCODE_PERMISSION must be a JSON object or an action string")
        data = {"permission": rules if isinstance(rules, dict) else {"*": rules}}
        config.sources.append(ConfigSource("OPENCODE_PERMISSION", None, data, "json"))
        config.data = deep_merge(config.data, data)
    return config


def _parse_inline(content: str, name: str, base: Path, env: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """Inline config text and its format: JSONC (with substitutions) when it starts with ``{``, else TOML."""
    import tomllib

    if content.lstrip().startswith("{"):
        from .config_json import read_json_text

        return read_json_text(content, base, env, name), "json"
    try:
        return tomllib.loads(content), "toml"
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{name}: invalid config: {error}") from None


def parse_value(text: str) -> Any:
    """A command-line value as a TOML literal (``5``, ``true``, ``[1, 2]``, ``{a = 1}``), else a string."""
    import tomllib

    try:
        document = tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError:
        return text
    # "1\nother = 2" parses too, as two keys: it is not one literal, so it stays a string
    return document["value"] if list(document) == ["value"] else text


def set_key(path: Path, dotted: str, value: Any) -> None:
    """Set a dotted key in a TOML file, creating it and its tables as needed; written atomically.

    The file is edited in place (tomlkit, imported only here): its comments, order and layout are kept.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from .files import atomic_write

    try:
        document = tomlkit.parse(path.read_text()) if path.is_file() else tomlkit.document()
    except TOMLKitError as error:
        raise ConfigError(f"{path}: {error}") from None
    node: Any = document
    parts = dotted.split(".")
    for index, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:  # a table holding only tables is written as [a.b], not [a] then [a.b]
            holds_tables = index < len(parts) - 2 or isinstance(value, dict)
            child = node[part] = tomlkit.table(is_super_table=holds_tables)
        elif not isinstance(child, dict):
            raise ConfigError(f"{path}: cannot set '{dotted}': '{part}' is not a table")
        node = child
    node[parts[-1]] = _toml_item(value)
    atomic_write(path, tomlkit.dumps(document))


def remove_key(path: Path, dotted: str) -> bool:
    """Remove a dotted key (a value or a whole table, with its sub-tables) from a TOML file, keeping its
    comments and layout; written atomically. Whether the key was there (a missing file: ``False``)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from .files import atomic_write

    if not path.is_file():
        return False
    try:
        document = tomlkit.parse(path.read_text())
    except TOMLKitError as error:
        raise ConfigError(f"{path}: {error}") from None
    node: Any = document
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return False
    if not isinstance(node, dict) or last not in node:
        return False
    del node[last]
    atomic_write(path, tomlkit.dumps(document))
    return True


def _toml_item(value: Any) -> Any:
    """A value as tomlkit writes it: a table for a dict (whose own dicts are inline tables)."""
    import tomlkit

    if not isinstance(value, dict):
        return value
    table = tomlkit.table()
    for key, inner in value.items():
        if isinstance(inner, dict):
            inline = tomlkit.inline_table()
            inline.update(inner)
            table[key] = inline
        else:
            table[key] = inner
    return table
