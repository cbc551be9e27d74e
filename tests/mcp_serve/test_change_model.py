"""A model-based test of change (issues 33, 42): random sequences of changes — tool files added, edited,
broken and removed; ``[tools]`` switches, ``[plugins] disabled``, agents, permissions and ``[mcp.NAME]``
tables edited; MCP servers that connect, change their tools through ``list_changed``, are SIGKILLed, or
fail to start — made to a project served at once by a live :class:`~opencode_cli.project.Project` with its
watcher and by ``opencode mcp serve``. After each change, once things are quiet, both must offer what a
fresh process lists (``opencode tools list --json``) for the same files, and the live project's whole
offer (ids, descriptions, schemas) and plugin records must equal a fresh Project's. The served client
reaches its quiet point only through ``notifications/tools/list_changed`` (it lists again when told), and
each change it can see must have been told at least once.

One allowance, by design: a tool file that stops importing keeps, in a live project, the tools of its
last good version (hot reload's "failures keep the last good version"); a fresh process has none of
them. The model knows each file's last good version and expects those tools too.

Sequences are seeded: ``OPENCODE_TEST_CHANGE_SEQUENCES`` (default 2) sets how many run,
``OPENCODE_TEST_CHANGE_STEPS`` (default 6) their length and ``OPENCODE_TEST_CHANGE_SEED`` the first
seed; a failure names the seed and the steps, to run it again alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import EXIT_SERVER, SERVERS
from _serve import Notes, stdio_session

from opencode_cli.project import Project
from opencode_cli.session import Decision

LISTED_SERVER = SERVERS / "listed_server.py"
SEQUENCES = int(os.environ.get("OPENCODE_TEST_CHANGE_SEQUENCES", "2"))
STEPS = int(os.environ.get("OPENCODE_TEST_CHANGE_STEPS", "6"))
FIRST_SEED = int(os.environ.get("OPENCODE_TEST_CHANGE_SEED", "3300"))
#: Seconds a quiet point may take to come (a bound for the failure; never reached when it works).
QUIET = 30.0
#: Built-in tools the model switches off and on with ``[tools]``.
SWITCHABLE = ("webfetch", "todowrite")
#: Built-in plugins the model disables and enables with ``[plugins] disabled``.
DISABLEABLE = ("web", "lsp")
#: Tools the model denies and allows with ``[permission]``.
DENIABLE = ("bash", "glob")
#: The actions that toggle a name in one of the model's sets: the set, the names, what it is in words.
TOGGLES = {
    "switch": ("switched_off", SWITCHABLE, "[tools] switched off"),
    "disable_plugin": ("disabled", DISABLEABLE, "[plugins] disabled"),
    "agent": ("agents", ("helper", "scout"), "subagents"),
    "permission": ("denied", DENIABLE, "[permission] denied"),
}


@dataclass
class Model:
    """The inputs of a project, as the sequence made them."""

    root: Path
    files: dict[str, int | None] = field(default_factory=dict)
    """Tool file name -> its version, ``None`` while it does not import."""
    last_good: dict[str, int] = field(default_factory=dict)
    switched_off: set[str] = field(default_factory=set)
    servers: dict[str, str] = field(default_factory=dict)
    """Server name -> ``listed`` or ``broken``."""
    listings: dict[str, dict[str, str]] = field(default_factory=dict)
    disabled: set[str] = field(default_factory=set)
    """Plugins named by ``[plugins] disabled``."""
    agents: set[str] = field(default_factory=set)
    """Subagents configured (``[agent.NAME]``): ``task``'s description lists them."""
    denied: set[str] = field(default_factory=set)
    """Tools the ``[permission]`` table denies wholly."""
    counter: int = 0

    def fresh_name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- writing the inputs -----------------------------------------------------------------------------

    def tool_file(self, name: str) -> Path:
        return self.root / ".opencode" / "tool" / f"{name}.py"

    def write_tool(self, name: str, version: int | None) -> None:
        path = self.tool_file(name)
        if version is None:
            path.write_text("from opencode_cli import tool\n\ndef broken(:\n")
        else:
            parameter = "count: int" if version % 2 else "text: str"
            path.write_text(
                "from opencode_cli import tool\n\n\n@tool\n"
                f"def default({parameter}) -> str:\n"
                f'    """{describe(name, version)}"""\n'
                '    return "ok"\n'
            )
        self.files[name] = version
        if version is not None:
            self.last_good[name] = version

    def write_config(self) -> None:
        tables: dict[str, Any] = {}
        for name, kind in self.servers.items():
            if kind == "listed":
                listing = str(self.root / f"listed-{name}.json")
                tables[name] = {
                    "type": "local",
                    "command": [sys.executable, str(LISTED_SERVER), "stdio", listing],
                }
            else:
                tables[name] = {"type": "local", "command": [sys.executable, str(EXIT_SERVER)]}
        config: dict[str, Any] = {}
        if tables:
            config["mcp"] = tables
        if self.switched_off:
            config["tools"] = {tool_id: False for tool_id in sorted(self.switched_off)}
        if self.disabled:
            config["plugins"] = {"disabled": sorted(self.disabled)}
        if self.agents:
            config["agent"] = {
                name: {"mode": "subagent", "description": f"The {name} helper."}
                for name in sorted(self.agents)
            }
        if self.denied:
            config["permission"] = {tool_id: "deny" for tool_id in sorted(self.denied)}
        path = self.root / "opencode.toml"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(tomli_w.dumps(config))
        os.replace(temporary, path)

    def write_listing(self, name: str) -> None:
        path = self.root / f"listed-{name}.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.listings[name]))
        os.replace(temporary, path)

    # -- what is expected besides a fresh process's list ------------------------------------------------

    def kept(self) -> dict[str, str]:
        """The tools a live project keeps for files that stopped importing (their last good version)."""
        return {
            name: describe(name, self.last_good[name])
            for name, version in self.files.items()
            if version is None and name in self.last_good
        }


def describe(name: str, version: int) -> str:
    return f"Tool {name}, version {version}."


# -- the hosts ---------------------------------------------------------------------------------------------


async def allow(request: Any) -> Decision:
    return Decision("once")


class Live:
    """A live Project with its watcher, as a library host runs it."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.project = Project(root, env=env, warn=lambda message: None)
        self.watcher: Any = None
        self.reported = asyncio.Event()

    async def start(self) -> None:
        await self.project.open()
        self.watcher = self.project.watch(on_change=lambda report: self.reported.set(), step=30, debounce=400)
        await self.watcher.start()

    async def stop(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()
        await self.project.aclose()

    def offered(self) -> dict[str, str]:
        """As a session with nobody to answer questions is offered them (so is ``tools list`` without a
        terminal): ``question`` switched off."""
        offer = self.project.generation.offer(switches={"question": False})
        return {d.id: d.description for d in offer.tools}

    async def whole(self) -> Whole:
        return await whole(self.project)

    async def call(self, tool_id: str) -> None:
        async with self.project.session(prompt=allow) as session:
            with contextlib.suppress(Exception):
                await session.execute(tool_id, {})

    def server_pids(self, name: str) -> list[int]:
        connection = self.project.mcp.peek(name)
        return [connection.pid] if connection is not None and connection.pid else []


Whole = tuple[dict[str, tuple[str, dict[str, Any]]], list[dict[str, Any]]]


async def whole(project: Project) -> Whole:
    """A project's whole offer (id: description and schema) and the records of its plugins and tool
    files (the MCP servers' by name)."""
    generation = await project.ready()
    offer = await generation.aoffer(schemas=True)
    tools = {d.id: (d.description, d.parameters) for d in offer.tools}
    records = [
        # an MCP server's status is its process's (a SIGKILLed one is lost until a call starts it again)
        {"name": record.name, "kind": "mcp"} if record.kind == "mcp" else record.as_dict()
        for record in generation.plugin_records()
    ]
    return tools, records


async def fresh_whole(root: Path, env: dict[str, str]) -> Whole:
    """What a fresh Project builds from the same files (its servers connected)."""
    async with Project(root, env=env, warn=lambda message: None) as fresh:
        await fresh.open()
        return await whole(fresh)


class Served:
    """``opencode mcp serve`` over stdio, as an MCP client sees it."""

    def __init__(self, client: Any, notes: Notes) -> None:
        self.client = client
        self.notes = notes

    async def offered(self) -> dict[str, str]:
        listed = await self.client.list_tools()
        return {tool.name: tool.description or "" for tool in listed.tools}

    async def call(self, tool_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.client.call_tool(tool_id, {})


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def served_server_pids(listing: Path) -> list[int]:
    """The listed servers, with this listing file, that an ``opencode mcp serve`` child of ours runs."""
    found = []
    for child in _children(os.getpid()):
        for grandchild in _children(child):
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{grandchild}/cmdline").read_bytes().split(b"\0")
                if str(listing).encode() in argv:
                    found.append(grandchild)
    return found


# -- one sequence ------------------------------------------------------------------------------------------


def fresh_list(root: Path, env: dict[str, str]) -> dict[str, str]:
    """What a fresh process lists: ``opencode tools list --json``."""
    script = Path(sys.executable).parent / "opencode"
    done = subprocess.run(
        [str(script), "tools", "list", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return {tool["id"]: tool["description"] for tool in json.loads(done.stdout)["tools"]}


ACTIONS = (
    "add_file",
    "edit_file",
    "break_file",
    "remove_file",
    "switch",
    "add_server",
    "add_broken_server",
    "remove_server",
    "list_changed",
    "kill_server",
    "disable_plugin",
    "agent",
    "permission",
)


async def step(action: str, model: Model, rng: random.Random, live: Live, served: Served) -> str:
    """Make one change (to the files, or to the servers of both hosts); what was done, in words."""
    files = sorted(model.files)
    listed = sorted(name for name, kind in model.servers.items() if kind == "listed")
    if action == "add_file" or (action in ("edit_file", "break_file", "remove_file") and not files):
        name = model.fresh_name("f")
        model.write_tool(name, 1)
        return f"add tool file {name}"
    if action == "edit_file":
        name = rng.choice(files)
        version = model.last_good.get(name, 0) + 1
        model.write_tool(name, version)
        return f"edit {name} to version {version}"
    if action == "break_file":
        name = rng.choice(files)
        model.write_tool(name, None)
        return f"break {name}"
    if action == "remove_file":
        name = rng.choice(files)
        model.tool_file(name).unlink()
        del model.files[name]
        model.last_good.pop(name, None)
        return f"remove {name}"
    if action in TOGGLES:
        attribute, names, what = TOGGLES[action]
        name = rng.choice(names)
        chosen: set[str] = getattr(model, attribute)
        chosen ^= {name}
        model.write_config()
        return f"{what} {'adds' if name in chosen else 'drops'} {name}"
    if action == "add_server" or (action in ("list_changed", "kill_server") and not listed):
        name = model.fresh_name("s")
        model.listings[name] = {f"t{n}": f"Listed tool t{n} of {name}." for n in range(rng.randint(1, 3))}
        model.write_listing(name)
        model.servers[name] = "listed"
        model.write_config()
        return f"add server {name}"
    if action == "add_broken_server":
        name = model.fresh_name("b")
        model.servers[name] = "broken"
        model.write_config()
        return f"add server {name} that fails to start"
    if action == "remove_server":
        if not model.servers:
            return await step("add_server", model, rng, live, served)
        name = rng.choice(sorted(model.servers))
        del model.servers[name]
        model.write_config()
        return f"remove server {name}"
    if action == "list_changed":
        name = rng.choice(listed)
        listing = model.listings[name]
        if listing and rng.random() < 0.4:
            listing.pop(rng.choice(sorted(listing)))
        else:
            listing[f"t{model.fresh_name('')}"] = f"Listed later by {name}."
        model.write_listing(name)
        await live.call(f"{name}_refresh")
        await served.call(f"{name}_refresh")
        return f"server {name} lists {sorted(listing)} (list_changed)"
    assert action == "kill_server"
    name = rng.choice(listed)
    pids = live.server_pids(name) + served_server_pids(model.root / f"listed-{name}.json")
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return f"SIGKILL server {name} ({len(pids)} processes)"


async def quiet(
    expected: dict[str, str], live: Live, served: Served, served_expected: dict[str, str]
) -> None:
    """Wait until both hosts offer what is expected (each change reaches them through their watcher)."""
    async with asyncio.timeout(QUIET):
        while live.offered() != expected:
            live.reported.clear()
            if live.offered() == expected:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(live.reported.wait(), 2)
        while True:  # listed again only when told: polling alone never reaches the quiet point
            served.notes.changed.clear()
            if await served.offered() == served_expected:
                break
            await served.notes.changed.wait()


async def told_since(notes: Notes, told: int) -> bool:
    """Whether the client is sent ``list_changed`` after the ``told``-th one, within a bound. The
    notification may come after the new list was already served: the server installs a generation
    before its watcher's report reaches the clients, and a client that lists meanwhile sees it first."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(QUIET / 3):
            while notes.list_changed <= told:
                notes.changed.clear()
                if notes.list_changed > told:
                    break
                await notes.changed.wait()
    return notes.list_changed > told


async def sequence(seed: int, root: Path, env: dict[str, str]) -> list[str]:
    rng = random.Random(seed)
    (root / ".opencode" / "tool").mkdir(parents=True, exist_ok=True)
    model = Model(root)
    model.write_config()
    done: list[str] = []
    live = Live(root, env)
    notes = Notes()
    await live.start()
    try:
        async with stdio_session(root, env, "--yes", message_handler=notes.handler) as client:
            served = Served(client, notes)
            seen = await served.offered()
            for _ in range(STEPS):
                told = notes.list_changed
                done.append(await step(rng.choice(ACTIONS), model, rng, live, served))
                fresh = await asyncio.to_thread(fresh_list, root, env)
                expected = {**fresh, **model.kept()}
                served_expected = expected
                try:
                    await quiet(expected, live, served, served_expected)
                    if served_expected != seen:  # a change the client can see is told
                        assert await told_since(notes, told), f"seed {seed}, after {done}: no list_changed"
                    seen = served_expected
                    if not model.kept():  # a live project keeps a broken file's last good tools
                        got, want = await live.whole(), await fresh_whole(root, env)
                        assert got[0] == want[0], f"seed {seed}, {done}: offers differ"
                        differ = [(a, b) for a, b in zip(got[1], want[1], strict=False) if a != b]
                        assert got[1] == want[1], f"seed {seed}, {done}: records differ: {differ}"
                except TimeoutError:
                    live_now, served_now = live.offered(), await served.offered()
                    raise AssertionError(
                        f"seed {seed}, after {done}:\n"
                        f"  live differs: {_diff(expected, live_now)}\n"
                        f"  served differs: {_diff(served_expected, served_now)}"
                    ) from None
    finally:
        await live.stop()
    return done


def _diff(expected: dict[str, str], got: dict[str, str]) -> dict[str, Any]:
    import difflib

    def lines(key: str) -> list[str]:
        changed = difflib.unified_diff(expected[key].splitlines(), got[key].splitlines(), lineterm="", n=0)
        return [line for line in changed if line[:1] in "+-" and line[:3] not in ("+++", "---")]

    return {
        "missing": sorted(set(expected) - set(got)),
        "extra": sorted(set(got) - set(expected)),
        "other description": {k: lines(k) for k in sorted(set(expected) & set(got)) if expected[k] != got[k]},
    }


@pytest.mark.slow
@pytest.mark.timeout(QUIET * (STEPS + 4))
@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_random_changes_leave_both_hosts_offering_what_a_fresh_process_lists(
    seed: int, tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")  # bash's description names the directory of the process
    asyncio.run(asyncio.wait_for(sequence(seed, tmp_path / "project", env), QUIET * (STEPS + 2)))
