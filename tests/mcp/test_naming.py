"""Tool ids a provider accepts (issue 26, item 6): the naming rules, then real servers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import tomli_w
from _processes import run_opencode
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.mcp.naming import MAX_ID, VALID_ID, fit, prefixes, renamed, sanitize, tool_id

names = st.text(min_size=1, max_size=90)


@given(names, names)
def test_every_id_is_accepted_by_providers_and_stable(server: str, tool: str) -> None:
    made = tool_id(sanitize(server), tool)
    assert VALID_ID.match(made)
    assert made == tool_id(sanitize(server), tool)


@given(names, names)
def test_short_ids_are_kept_and_long_ones_keep_a_readable_start(server: str, tool: str) -> None:
    full = f"{sanitize(server)}_{sanitize(tool)}"
    made = tool_id(sanitize(server), tool)
    if len(full) <= MAX_ID:
        assert made == full
    else:
        assert len(made) == MAX_ID and made.startswith(full[:50])
        assert re.fullmatch(r"[0-9a-f]{8}", made[-8:])


@given(st.lists(st.text(alphabet="ab._-", min_size=1, max_size=70), min_size=2, max_size=5, unique=True))
def test_servers_never_share_a_prefix(servers: list[str]) -> None:
    found = prefixes(servers)
    assert len({found[name].prefix for name in servers}) == len(servers)
    for name, made in found.items():
        assert (made.prefix == sanitize(name)) == (made.note is None) == (made.reason is None)
        assert made.like is None or (made.like in servers[: servers.index(name)] and made.like in made.reason)


@given(
    st.lists(st.text(alphabet="ab._", min_size=1, max_size=70), min_size=1, max_size=3, unique=True), names
)
def test_a_tool_id_says_why_it_is_not_server_and_tool(servers: list[str], tool: str) -> None:
    for name, prefix in prefixes(servers).items():
        made, why = renamed(prefix, tool)
        plain = f"{sanitize(name)}_{sanitize(tool)}"
        assert made == tool_id(prefix.prefix, tool)
        assert (why is None) == (made == plain)
        if len(f"{prefix.prefix}_{sanitize(tool)}") > MAX_ID:
            assert f'"{prefix.prefix}_{sanitize(tool)}" has more than 64 characters' in why


def test_the_long_id_of_the_issue() -> None:
    long = "a_rather_long_server_name_for_the_filesystem_list_directory_with_sizes"
    assert len(long) == 70
    assert fit(long) == fit(long) and len(fit(long)) == 64 and fit(long).startswith(long[:55])


def test_long_and_colliding_names_with_real_servers(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str]
) -> None:
    long_name = "a_rather_long_server_name_for_the_filesystem_tools_of_today"
    servers = {
        long_name: {"type": "local", "command": demo_server_command},
        "time.v2": {"type": "local", "command": demo_server_command},
        "time_v2": {"type": "local", "command": demo_server_command},
    }
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = run_opencode(project_dir, env, "tools", "list", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    tools = json.loads(listed.stdout)["tools"]
    ids = [tool["id"] for tool in tools]
    assert all(VALID_ID.match(i) for i in ids), [i for i in ids if not VALID_ID.match(i)]
    long_id = fit(f"{long_name}_many_lines")
    assert len(f"{long_name}_many_lines") > 64 and long_id in ids
    assert f'"{long_name}_many_lines" has more than 64 characters; it is sent as "{long_id}"' in listed.stderr
    sources = {tool["id"]: tool["source"]["name"] for tool in tools}
    assert sources["time_v2_echo"] == "time.v2"
    other = prefixes(["time.v2", "time_v2"])["time_v2"].prefix
    assert other != "time_v2" and sources[f"{other}_echo"] == "time_v2"
    assert f'the tools of "time_v2" are named "{other}_…"' in listed.stderr
    # --all says why an id is not <server>_<tool>: the server's name sanitizes like another's, or it was long
    reasons = {tool["id"]: tool["renamed"] for tool in tools}
    assert reasons[f"{other}_echo"] == 'server "time_v2" sanitizes like "time.v2"'
    assert reasons[long_id] == f'"{long_name}_many_lines" has more than 64 characters'
    assert reasons["time_v2_echo"] is None and reasons[fit(f"{long_name}_echo")] is None
    text = run_opencode(project_dir, env, "tools", "list", "--all")
    rows = {line.split()[0]: line for line in text.stdout.splitlines()}
    assert '(renamed: server "time_v2" sanitizes like "time.v2") Return the text' in rows[f"{other}_echo"]
    assert f'(renamed: "{long_name}_many_lines" has more than 64 characters) Text of' in rows[long_id]
    assert "renamed" not in rows["time_v2_echo"]
    inspected = run_opencode(project_dir, env, "tools", "inspect", f"{other}_echo")
    assert 'renamed:  server "time_v2" sanitizes like "time.v2"' in inspected.stdout
    # the long id is called back under its short name
    ran = run_opencode(project_dir, env, "tools", "run", long_id, "count=2", "--yes")
    assert (ran.returncode, ran.stdout) == (0, "line 1\nline 2\n"), ran.stderr
    shown = json.loads(run_opencode(project_dir, env, "mcp", "list", "--json").stdout)["servers"]
    notes = {server["name"]: server["notes"] for server in shown}
    assert [server["status"] for server in shown] == ["connected"] * 3
    assert notes["time_v2"] and "time.v2" in notes["time_v2"][0] and not notes["time.v2"]


def test_a_renamed_server_that_fails_is_shown_failed(
    project_dir: Path, env: dict[str, str], demo_server_command: list[str], exit_server_command: list[str]
) -> None:
    servers = {
        "time.v2": {"type": "local", "command": demo_server_command},
        "time_v2": {"type": "local", "command": exit_server_command},
    }
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": servers}))
    env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listed = run_opencode(project_dir, env, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    shown = {server["name"]: server for server in json.loads(listed.stdout)["servers"]}
    assert shown["time.v2"]["status"] == "connected"
    failed = shown["time_v2"]
    assert failed["status"] == "failed" and "exited with code 1" in failed["error"]
    assert len(failed["notes"]) == 1 and 'the tools of "time_v2" are named' in failed["notes"][0]
