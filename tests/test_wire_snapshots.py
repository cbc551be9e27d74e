"""Snapshots of every built-in tool's wire schema under the openai, anthropic and gemini profiles.

Each snapshot is one tool as a request to that provider carries it, in the provider's own shape:
OpenAI ``{"type": "function", "function": {name, description, parameters, strict}}``, Anthropic
``{name, description, input_schema, eager_input_streaming}`` and a Gemini function declaration
``{name, description, parameters}`` (its parameters in Google's OpenAPI-style subset).
They live in ``tests/snapshots/wire/<profile>/<tool>.json``.

The tool is taken from :meth:`Session.resolve` for a real model of that provider that is offered it
(``openai/gpt-5`` or ``openai/gpt-4o``, ``anthropic/claude-sonnet-4-5``, ``google/gemini-2.5-pro``). A tool
no such model is offered (``invalid``; ``apply_patch`` for Anthropic and Gemini) comes from a session with
the profile forced and no model, and ``invalid``, which is never offered, from ``adapt(tool.schema(),
profile)``; the snapshot's ``"via"`` key says which.

Descriptions that depend on the machine (bash names the working directory and the shell) are not
snapshotted: a description counts as machine-specific when it differs between two projects resolved from
different working directories with different ``$SHELL``; it is stored as a placeholder instead. The
current year (websearch's description names it) is written as ``<current year>``. Parameters are always
snapshotted.

Every registered built-in is a test case, so a new tool fails with "no snapshot yet" until its snapshots
are written. To (re)write the snapshots after an intended change, run::

    OPENCODE_UPDATE_SNAPSHOTS=1 pytest tests/test_wire_snapshots.py

and review the diff of ``tests/snapshots/wire`` before committing it. Snapshots of tools that are no longer
registered are reported (and deleted in update mode).
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from opencode_cli.gemini_schema import to_gemini
from opencode_cli.project import Project
from opencode_cli.registry import ModelRef
from opencode_cli.schema_profiles import adapt
from opencode_cli.session import WireTool
from opencode_cli.wire import render

SNAPSHOTS = Path(__file__).parent / "snapshots" / "wire"
UPDATE = os.environ.get("OPENCODE_UPDATE_SNAPSHOTS", "") not in ("", "0")
HINT = "run with OPENCODE_UPDATE_SNAPSHOTS=1 to write it, then review the diff"
UPDATE_HINT = "OPENCODE_UPDATE_SNAPSHOTS=1 to delete them"

#: Wire profile -> (models to resolve for, in order; the profile forced when none offers the tool).
PROFILES: dict[str, tuple[list[str], str]] = {
    "openai": (["openai/gpt-5", "openai/gpt-4o"], "openai"),
    "anthropic": (["anthropic/claude-sonnet-4-5"], "default"),
    "gemini": (["google/gemini-2.5-pro"], "gemini"),
}
MACHINE_SPECIFIC = "<machine-specific: not snapshotted (varies with the working directory or the shell)>"


def isolated_env(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "xdg-config"),
        "XDG_DATA_HOME": str(root / "xdg-data"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }


def make_project(root: Path) -> Project:
    (root / "project" / ".git").mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    return Project(
        root / "project", env=isolated_env(root), plugins=[], autoload_plugins=False, warn=lambda _: None
    )


def builtin_ids() -> list[str]:
    """Every registered built-in (gated ones too), read at collection time from a throwaway project."""
    with tempfile.TemporaryDirectory() as tmp:
        registry = make_project(Path(tmp)).registry
        return [entry.id for entry in registry.entries.values() if entry.source.kind == "builtin"]


BUILTINS = builtin_ids()


def one(tool: WireTool, profile: str) -> dict[str, Any]:
    """``tool`` in the provider's wire shape (one element of the request's ``tools``)."""
    rendered = render([tool], profile)
    return rendered[0]["functionDeclarations"][0] if profile == "gemini" else rendered[0]


def wire_tools(project: Project, profile: str) -> dict[str, dict[str, Any]]:
    """Every built-in of ``project`` as ``profile`` sends it, with how it was obtained under ``"via"``."""
    models, forced = PROFILES[profile]
    table: dict[str, dict[str, Any]] = {}
    host = {"question": lambda questions: None}  # only a host that can answer is offered question
    for model in models:
        for tool in project.session(model=ModelRef.parse(model), extra=host).resolve():
            table.setdefault(tool.name, {"via": f"resolve for {model}", "wire": one(tool, profile)})
    for tool in project.session(profile=forced, extra=host).resolve():
        table.setdefault(
            tool.name, {"via": f"resolve with profile {forced} (no model)", "wire": one(tool, profile)}
        )
    for tool_id in BUILTINS:
        if tool_id not in table:
            loaded = project.registry.get(tool_id).tool.load()
            strict = False if forced == "openai" else None
            wire = WireTool(tool_id, loaded.description, adapt(loaded.schema(), forced), strict)
            table[tool_id] = {"via": f"adapt(tool.schema(), {forced!r}) (never offered)", "wire": wire}
            table[tool_id]["wire"] = one(wire, profile)
    return table


YEAR = str(datetime.date.today().year)


def description_of(wire: dict[str, Any]) -> str:
    return (wire.get("function") or wire)["description"]


def with_description(wire: dict[str, Any], description: str) -> dict[str, Any]:
    if "function" in wire:
        return {**wire, "function": {**wire["function"], "description": description}}
    return {**wire, "description": description}


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """``profile -> tool -> snapshot`` with machine-specific descriptions replaced by a placeholder."""
    roots = [tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")]
    contexts = []
    for root, shell in zip(roots, ("/bin/sh", "/bin/bash"), strict=True):
        project = make_project(root)
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(project.directory)
            patch.setenv("SHELL", shell)
            contexts.append({profile: wire_tools(project, profile) for profile in PROFILES})
    first, second = contexts
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for profile, tools in first.items():
        table[profile] = {}
        for name, found in tools.items():
            wire = found["wire"]
            other = second[profile][name]["wire"]
            if description_of(wire) != description_of(other):
                wire = with_description(wire, MACHINE_SPECIFIC)
                other = with_description(other, MACHINE_SPECIFIC)
            else:
                yearless = description_of(wire).replace(YEAR, "<current year>")
                wire, other = with_description(wire, yearless), with_description(other, yearless)
                for root in roots:
                    assert str(root) not in description_of(wire), f"{name}: description names a tmp dir"
            assert wire == other, f"{name} ({profile}): the wire schema differs between two projects"
            table[profile][name] = {"via": found["via"], **wire}
    return table


def dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("tool_id", BUILTINS)
def test_wire_schema_matches_snapshot(resolved, tool_id: str, profile: str) -> None:
    actual = dump(resolved[profile][tool_id])
    path = SNAPSHOTS / profile / f"{tool_id}.json"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"no snapshot yet for {tool_id!r} under the {profile} profile ({path}); {HINT}")
    assert actual == path.read_text(encoding="utf-8"), f"{tool_id} ({profile}) changed; {HINT}"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_no_snapshot_of_an_unregistered_tool(profile: str) -> None:
    folder = SNAPSHOTS / profile
    stale = sorted(p for p in folder.glob("*.json") if p.stem not in BUILTINS) if folder.is_dir() else []
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    names = [p.name for p in stale]
    assert not stale, f"snapshots of tools that are not registered: {names}; rerun with {UPDATE_HINT}"


def test_snapshot_covers_at_least_the_finished_builtins() -> None:
    # the tools that exist as this test is written; the list only grows
    assert {"invalid", "read", "glob", "grep", "edit", "write", "apply_patch"} <= set(BUILTINS)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_resolved_schema_is_the_profile_applied_to_the_tool_schema(resolved, profile: str) -> None:
    """Whatever route a snapshot took, its parameters are ``adapt(tool.schema(), profile)``."""
    forced = PROFILES[profile][1]
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp))
        for tool_id in BUILTINS:
            snapshot = resolved[profile][tool_id]
            wire = snapshot.get("function") or snapshot
            parameters = wire["input_schema"] if profile == "anthropic" else wire["parameters"]
            expected = adapt(project.registry.get(tool_id).tool.load().schema(), forced)
            if profile == "gemini":  # the Gemini payload converts the profile's schema (``wire.render``)
                expected = to_gemini(expected)
            assert parameters == expected, tool_id
            assert ("strict" in wire) is (profile == "openai"), tool_id
            if profile == "openai":
                assert wire["strict"] is False


def test_placeholder_is_used_only_for_machine_specific_descriptions(resolved) -> None:
    placeholders = {
        name
        for tools in resolved.values()
        for name, snapshot in tools.items()
        if description_of(snapshot) == MACHINE_SPECIFIC
    }
    # bash names the working directory; the .txt-backed descriptions are static
    assert not placeholders & {"read", "glob", "grep", "edit", "write", "apply_patch", "invalid"}
    if "bash" in BUILTINS:
        assert "bash" in placeholders
    assert not any(YEAR in description_of(s) for tools in resolved.values() for s in tools.values())


#: What no schema in a Gemini declaration carries, at any depth (``const`` is sent as a one-value enum).
GEMINI_BANNED = {"$schema", "additionalProperties", "$ref", "$defs", "definitions", "default"} | {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "const",
}


def schema_nodes(node: Any, path: str):
    """Every schema inside ``node``; the names under ``properties`` and enum values are data, not keys."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
            for name, sub in value.items():
                yield from schema_nodes(sub, f"{path}.{key}.{name}")
        elif key in ("enum", "const", "required", "default", "examples"):
            continue
        elif isinstance(value, dict):
            yield from schema_nodes(value, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                yield from schema_nodes(item, f"{path}.{key}[{i}]")


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_gemini_payload_has_none_of_the_keys_google_refuses(resolved, tool_id: str) -> None:
    declaration = resolved["gemini"][tool_id]
    found = [
        f"{path}.{key}"
        for path, node in schema_nodes(declaration["parameters"], "parameters")
        for key in sorted(GEMINI_BANNED & set(node))
    ]
    nulls = [
        path
        for path, node in schema_nodes(declaration["parameters"], "parameters")
        if isinstance(node.get("type"), list)
        or any(isinstance(b, dict) and b.get("type") == "null" for b in node.get("anyOf") or [])
    ]
    assert found == [] and nulls == [], tool_id


def test_gemini_payload_drops_the_bounds_and_defaults_of_the_builtins(resolved) -> None:
    gemini = {name: snapshot["parameters"] for name, snapshot in resolved["gemini"].items()}
    if "bash" in gemini:
        assert gemini["bash"]["properties"]["timeout"] == {
            "type": "integer",
            "description": "Optional timeout in milliseconds",
        }
    offset = gemini["read"]["properties"]["offset"]
    assert offset["type"] == "integer" and not {"minimum", "maximum"} & set(offset)
    if "webfetch" in gemini:
        assert "default" not in gemini["webfetch"]["properties"]["format"]
    # Anthropic and OpenAI payloads keep them (``$schema`` too for Anthropic)
    assert resolved["anthropic"]["read"]["input_schema"]["properties"]["offset"]["minimum"] == 0


@pytest.mark.parametrize("tool_id", BUILTINS)
def test_anthropic_entries_ask_for_eager_input_streaming(resolved, tool_id: str) -> None:
    entry = resolved["anthropic"][tool_id]
    assert entry["eager_input_streaming"] is True
    assert list(entry) == ["via", "name", "description", "input_schema", "eager_input_streaming"]
    assert "eager_input_streaming" not in resolved["openai"][tool_id]
    assert "eager_input_streaming" not in resolved["openai"][tool_id]["function"]
    assert "eager_input_streaming" not in resolved["gemini"][tool_id]


def test_render_gemini_converts_whatever_profile_made_the_tool() -> None:
    """A tool with the openai profile's ``$ref``/``$defs`` goes out in a Gemini declaration as OpenCode's
    Google provider sends it: the ``$ref`` and ``$defs`` dropped (nothing inlined), ``const`` an enum."""
    parameters = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}, "mode": {"const": "fast"}},
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}},
        "additionalProperties": False,
    }
    [wrapper] = render([WireTool("t", "a tool", parameters, None)], "gemini")
    [declaration] = wrapper["functionDeclarations"]
    assert declaration["parameters"] == {
        "type": "object",
        "properties": {
            "item": {},
            "mode": {"enum": ["fast"]},
        },
    }
    # the OpenAI payload of the same tool is the parameters as given
    [entry] = render([WireTool("t", "a tool", parameters, None)], "openai")
    assert entry == {
        "type": "function",
        "function": {"name": "t", "description": "a tool", "parameters": parameters},
    }
