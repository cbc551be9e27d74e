"""The tools a code-mode script may call, as typed Python signatures (builtin-tools §15.3).

Each MCP tool becomes ``tools.<server>.<tool>``: the server is the longest configured server name whose
sanitized form prefixes the tool's flat key (``weather_current`` of server ``weather`` is
``tools.weather.current``), and the signature is built from the tool's JSON Schema::

    tools.weather.current(city: str, days: int = 1) -> str
        Current weather for a city.
        city: The city's name.

Required parameters come first, in the schema's order, then the optional ones (a default from the schema,
else ``None``). Nested objects are shown as ``{"key": type, "other": NotRequired[type]}``, enums as
``Literal[...]``, ``$ref`` is followed into ``$defs``/``definitions``. A tool whose property names are not
Python identifiers takes its whole input as one dict: ``tools.s.t(input: {"file-path": str}, /)``.

What a call returns follows one rule: **the value is what the return type shows.** A tool with an output
schema returns the object that schema describes, which is the structured content the server sends (else
its text decoded as JSON). A server that wraps a bare value declares it as one (the ``mcp`` SDK gives a
tool returning ``int`` the schema ``{"result": int}``), so the script receives ``{"result": 3}`` and reads
``r["result"]``; an unwrapped schema (``{"x": int, "y": int}``) is received as that object. A tool without
an output schema returns its text (``-> str``).
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..registry import ToolEntry

#: How deep nested schemas are written out before ``Any`` stands in.
MAX_DEPTH = 6


@dataclass(frozen=True)
class Binding:
    """One callable tool of the script: where it lives in ``tools``, what it runs, how it is called."""

    namespace: str
    """The Python name of the server (``weather``), or ``builtin`` for the built-ins."""
    name: str
    """The Python name of the tool in its namespace (``current``)."""
    tool_id: str
    """The registry id the call runs as (the flat MCP key, ``weather_current``)."""
    params: tuple[str, ...]
    """The parameter names in signature order (positional arguments map to them)."""
    single: bool
    """The tool takes its whole input as one dict (its property names are not identifiers)."""
    returns_json: bool
    """The tool declares an output schema: its text result is decoded as JSON."""
    signature: str
    """The line the catalogue shows: ``tools.weather.current(city: str, days: int = 1) -> str``."""
    description: str
    """The tool's description, then a line per described parameter."""
    server: str = ""
    """The MCP server's name (``""`` for the built-ins); the namespace differs from it when renamed."""

    @property
    def path(self) -> str:
        """``tools.<namespace>.<name>``: how a script calls it."""
        return f"tools.{self.namespace}.{self.name}"

    def arguments(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's input from a script's positional and keyword arguments; raises :class:`TypeError`
        worded as Python words a bad call."""
        if self.single:
            if kwargs or len(args) != 1 or not isinstance(args[0], Mapping):
                raise TypeError(f"{self.path}() takes its input as one dict: {self.path}({{...}})")
            return dict(args[0])
        if len(args) == 1 and not kwargs and isinstance(args[0], Mapping) and len(self.params) != 1:
            return dict(args[0])  # the whole input as one dict, as an MCP client would send it
        if len(args) > len(self.params):
            raise TypeError(
                f"{self.path}() takes {len(self.params)} positional arguments but {len(args)} were given"
            )
        found = dict(zip(self.params, args, strict=False))
        for key, value in kwargs.items():
            if key in found:
                raise TypeError(f"{self.path}() got multiple values for argument '{key}'")
            if key not in self.params:
                raise TypeError(f"{self.path}() got an unexpected keyword argument '{key}'")
            found[key] = value
        return found


def identifier(name: str) -> str:
    """``name`` as a Python identifier: other characters become ``_``; a leading digit or underscore gets
    a ``t`` in front (names starting with ``_`` are private to the sandbox); a keyword gets ``_`` after."""
    text = re.sub(r"\W", "_", name, flags=re.ASCII) or "tool"
    if text[0].isdigit() or text[0] == "_":
        text = "t" + text
    return text + "_" if keyword.iskeyword(text) else text


def namespace_for(server: str) -> str:
    """The namespace of ``server``'s tools: its name as an identifier, with ``_`` after it while that
    names a module the sandbox provides (``time``, ``json``…: a namespace cannot take its place)."""
    namespace = identifier(server)
    while sandbox_provides(namespace) or namespace == BUILTIN_NAMESPACE:
        namespace += "_"
    return namespace


#: The modules the sandbox provides (Monty's own, and those of its type checker): no namespace of
#: ``tools`` may take one of their names. Listed here so that listing tools never imports the sandbox; a
#: test compares it with what Monty refuses.
SANDBOX_MODULES = frozenset(
    {
        "asyncio", "base64", "binascii", "bisect", "collections", "copy", "csv", "dataclasses", "datetime",
        "decimal", "functools", "gc", "hashlib", "itertools", "json", "math", "os", "pathlib", "posixpath",
        "random", "re", "sys", "time", "tomllib", "typing", "unicodedata",
    }
)  # fmt: skip


def sandbox_provides(name: str) -> bool:
    """Whether the sandbox provides a module ``name``."""
    return name in SANDBOX_MODULES


def split_key(tool_id: str, servers: Iterable[str]) -> tuple[str, str]:
    """The server and tool parts of a flat MCP key: the longest server whose sanitized name (and ``_``)
    prefixes the key; without one, the part before the first ``_``."""
    from ..mcp.source import sanitize

    prefixes = sorted((sanitize(s) for s in servers), key=len, reverse=True)
    for prefix in prefixes:
        if tool_id.startswith(prefix + "_") and len(tool_id) > len(prefix) + 1:
            return prefix, tool_id[len(prefix) + 1 :]
    head, _, tail = tool_id.partition("_")
    return head, tail or head


# -- JSON Schema to Python types -----------------------------------------------------------------------


def literal(value: Any) -> str:
    """A JSON value written as a Python literal (strings in double quotes)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def _join(alternatives: Iterable[str]) -> str:
    """Alternatives as one union type: each once, ``None`` last; ``Any`` swallows the rest."""
    found: list[str] = []
    for alternative in alternatives:
        if alternative not in found:
            found.append(alternative)
    if "Any" in found or not found:
        return "Any"
    return " | ".join([p for p in found if p != "None"] + (["None"] if "None" in found else []))


class _Writer:
    """Writes the Python type of a schema, following ``$ref`` into the root's definitions."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        defs: dict[str, Any] = {}
        for key in ("definitions", "$defs"):
            value = root.get(key)
            if isinstance(value, Mapping):
                defs.update(value)
        self.defs = defs
        self.root = root

    def resolve(self, ref: str) -> Any:
        if ref == "#":
            return self.root
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix):
                return self.defs.get(ref[len(prefix) :])
        return None

    def type(self, schema: Any, depth: int = 0) -> str:
        """The type text of ``schema``."""
        return _join(self.alternatives(schema, depth))

    def alternatives(self, schema: Any, depth: int) -> list[str]:
        """The members of the union ``schema`` stands for (one, for a schema that is not a union)."""
        if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
            return ["Any"]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.alternatives(self.resolve(ref), depth + 1)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return [alt for branch in branches for alt in self.alternatives(branch, depth + 1)]
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self.alternatives(all_of[0], depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            return [alt for k in kind for alt in self.alternatives({**schema, "type": k}, depth)]
        return [self.single(schema, depth)]

    def single(self, schema: Mapping[str, Any], depth: int) -> str:
        """The type text of a schema that is not a union."""
        if "const" in schema:
            return f"Literal[{literal(schema['const'])}]"
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return "Literal[" + ", ".join(literal(v) for v in enum) + "]"
        kind = schema.get("type")
        if kind is None:
            if "properties" in schema:
                kind = "object"
            elif "items" in schema:
                kind = "array"
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
        if kind in simple:
            return simple[kind]
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.type(items, depth + 1)}]" if isinstance(items, Mapping) else "list[Any]"
        if kind == "object":
            return self.object(schema, depth)
        return "Any"

    def object(self, schema: Mapping[str, Any], depth: int) -> str:
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            required = set(schema.get("required") or [])
            fields = []
            for key, sub in properties.items():
                text = self.type(sub, depth + 1)
                shown = text if key in required else f"NotRequired[{text}]"
                fields.append(f"{json.dumps(str(key))}: {shown}")
            return "{" + ", ".join(fields) + "}"
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return f"dict[str, {self.type(extra, depth + 1)}]"
        return "dict[str, Any]"


def python_type(schema: Any, root: Mapping[str, Any] | None = None) -> str:
    """The Python type text of a JSON Schema (``root`` holds the definitions ``$ref`` points into)."""
    base = root if root is not None else schema if isinstance(schema, Mapping) else {}
    return _Writer(base).type(schema)


# -- signatures ----------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def bind(
    tool_id: str,
    namespace: str,
    name: str,
    parameters: Mapping[str, Any] | None,
    description: str = "",
    output_schema: Mapping[str, Any] | None = None,
) -> Binding:
    """The binding of one tool: its signature from ``parameters`` (the input JSON Schema) and its return
    type from ``output_schema``."""
    schema = parameters if isinstance(parameters, Mapping) else {}
    writer = _Writer(schema)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = [key for key in properties if key in set(schema.get("required") or [])]
    optional = [key for key in properties if key not in required]
    returns = python_type(output_schema) if isinstance(output_schema, Mapping) else "str"
    path = f"tools.{namespace}.{name}"
    single = any(not key.isidentifier() or keyword.iskeyword(key) for key in properties)
    notes = []
    for key, sub in properties.items():
        said = sub.get("description") if isinstance(sub, Mapping) else None
        if isinstance(said, str) and said.strip():
            notes.append(f"{key}: {_one_line(said)}")
    if single:
        signature = f"{path}(input: {writer.type(schema)}, /) -> {returns}"
        params: tuple[str, ...] = ()
    else:
        shown = []
        for key in required:
            shown.append(f"{key}: {writer.type(properties[key])}")
        for key in optional:
            sub = properties[key]
            text = writer.type(sub)
            if isinstance(sub, Mapping) and "default" in sub:
                shown.append(f"{key}: {text} = {literal(sub['default'])}")
            else:
                nullable = text if text.endswith("None") or text == "Any" else f"{text} | None"
                shown.append(f"{key}: {nullable} = None")
        signature = f"{path}({', '.join(shown)}) -> {returns}"
        params = tuple(required + optional)
    lines = [line.rstrip() for line in description.strip().splitlines()]
    text = "\n".join([*lines, *notes])
    return Binding(
        namespace=namespace,
        name=name,
        tool_id=tool_id,
        params=params,
        single=single,
        returns_json=isinstance(output_schema, Mapping),
        signature=signature,
        description=text,
    )


def unique(bindings: Iterable[Binding]) -> list[Binding]:
    """``bindings`` with no two at the same path: a later one that collides gets ``_2``, ``_3``…"""
    taken: set[str] = set()
    found = []
    for binding in bindings:
        name, number = binding.name, 1
        while f"{binding.namespace}.{name}" in taken:
            number += 1
            name = f"{binding.name}_{number}"
        taken.add(f"{binding.namespace}.{name}")
        if name != binding.name:
            signature = binding.signature.replace(binding.path + "(", f"tools.{binding.namespace}.{name}(", 1)
            binding = replace(binding, name=name, signature=signature)
        found.append(binding)
    return found


#: The size (characters) the catalogue keeps to: past it, descriptions shrink to their first line, and then
#: the last tools are only named (a large tool set gives a partial catalogue; every tool stays callable).
BUDGET = 24_000


def _entry(binding: Binding, full: bool) -> str:
    lines = binding.description.splitlines() if full else binding.description.splitlines()[:1]
    return "\n".join([binding.signature, *(f"    {line}" if line else "" for line in lines)])


def catalogue(bindings: Iterable[Binding], budget: int = BUDGET) -> str:
    """The text appended to ``execute``'s description: each tool's signature, then its description and
    parameter notes, indented; within ``budget`` characters (see :data:`BUDGET`)."""
    bindings = list(bindings)
    head = "Tools available to the script:\n\n"
    renamed = {b.server: b.namespace for b in bindings if b.server and b.namespace != identifier(b.server)}
    for server, namespace in sorted(renamed.items()):
        head += (
            f'Note: server "{server}" is reached as `tools.{namespace}` '
            f"(`{identifier(server)}` is a module of the sandbox).\n\n"
        )
    full = "\n\n".join(_entry(binding, True) for binding in bindings)
    if len(full) <= budget:
        return head + full
    blocks: list[str] = []
    used = 0
    for index, binding in enumerate(bindings):
        block = _entry(binding, False)
        if used + len(block) > budget:
            rest = ", ".join(b.path for b in bindings[index:])
            blocks.append(f"{len(bindings) - index} more tools, not described here: {rest}")
            break
        blocks.append(block)
        used += len(block) + 2
    return head + "\n\n".join(blocks)


#: The namespace of the built-ins a script may call (``[experimental] code_mode_builtins``).
BUILTIN_NAMESPACE = "builtin"


def _first_paragraph(text: str) -> str:
    return text.strip().split("\n\n", 1)[0].strip()


def bindings_of(mcp: Iterable[ToolEntry], builtins: Iterable[ToolEntry] = ()) -> list[Binding]:
    """The bindings of MCP tool entries (namespaced by their servers' names, core §3.5 step 2) and of
    built-in ones (namespace ``builtin``, the first paragraph of their description)."""
    mcp = list(mcp)
    servers = {entry.source.name for entry in mcp}
    found = []
    for entry in mcp:
        tool_object = entry.loaded()
        server, tool = getattr(tool_object, "server", None), getattr(tool_object, "remote_name", None)
        if not (isinstance(server, str) and isinstance(tool, str)):
            server, tool = split_key(entry.id, servers)
        binding = bind(
            entry.id,
            namespace_for(server),
            identifier(tool),
            tool_object.schema(),
            entry.description,
            getattr(tool_object, "output_schema", None),
        )
        found.append(replace(binding, server=server))
    for entry in builtins:
        tool_object = entry.loaded()
        found.append(
            bind(
                entry.id,
                BUILTIN_NAMESPACE,
                identifier(entry.id),
                tool_object.schema(),
                _first_paragraph(entry.description),
            )
        )
    return unique(found)
