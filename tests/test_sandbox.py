"""The sandbox's settings, its permission, ``opencode sandbox check``, the ``--sandbox`` flags (as real
``opencode`` processes) and local MCP servers under ``[mcp.NAME] sandbox = true`` (issue 27)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _processes import run_opencode
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import sandbox
from opencode_cli.errors import ConfigError
from opencode_cli.permission import Rule
from opencode_cli.permission import match as permission_match
from opencode_cli.sandbox import landlock
from opencode_cli.tools._sandbox import decide

needs_landlock = pytest.mark.skipif(landlock.kernel_abi()[0] < 4, reason="needs Landlock ABI 4")


# -- settings ---------------------------------------------------------------------------------------------


def test_defaults_are_off_with_the_network_refused_once_on() -> None:
    assert sandbox.settings({}, {}) == sandbox.Settings()
    chosen = sandbox.settings({"sandbox": {"mode": "read-only"}}, {})
    assert (chosen.on, chosen.network, chosen.read, chosen.required) == (True, False, "all", False)


def test_the_environment_overrides_the_mode() -> None:
    chosen = sandbox.settings(
        {"sandbox": {"mode": "read-only", "writable": ["x"]}}, {"OPENCODE_SANDBOX": "off"}
    )
    assert (chosen.mode, chosen.writable) == ("off", ("x",))


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"mode": "strict"},
            "sandbox.mode must be one of 'off', 'workspace-write', 'read-only', not 'strict'",
        ),
        ({"network": "no"}, "sandbox.network must be true or false, not 'no'"),
        ({"writable": "/x"}, "sandbox.writable must be a list of paths, not '/x'"),
        ({"read": "none"}, 'sandbox.read must be "all" or "project", not \'none\''),
        ({"required": 1}, "sandbox.required must be true or false, not 1"),
    ],
)
def test_bad_values_are_config_errors(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        sandbox.settings({"sandbox": table}, {})
    assert str(caught.value) == message


def test_the_plan_resolves_paths_and_keeps_the_temp_dir_our_own(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "real-cache").mkdir(parents=True)
    (project / "cache").symlink_to(project / "real-cache")
    settings = sandbox.Settings("workspace-write", writable=("cache", "~/absent"), read="project")
    env = {"TMPDIR": str(tmp_path / "tmp") + "/", "HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    plan = sandbox.build(settings, directory=project, worktree=project, env=env, spill=tmp_path / "spill")
    assert plan.write == [
        str(project),
        str(tmp_path / "tmp"),
        str(tmp_path / "spill"),
        str(project / "real-cache"),
        str(tmp_path / "home" / "absent"),
    ]
    assert plan.missing == [str(tmp_path / "home" / "absent")]
    assert "/usr" in plan.read and "/etc" in plan.read and sys.prefix in plan.read
    assert str(tmp_path) not in plan.read and str(tmp_path / "home") not in plan.read
    read_only = sandbox.build(
        sandbox.Settings("read-only"), directory=project, worktree=None, env=env, spill=tmp_path / "spill"
    )
    assert read_only.write == [str(tmp_path / "tmp")]


def test_the_binding_reports_what_the_environment_lowers() -> None:
    assert landlock.abi({"OPENCODE_LANDLOCK_ABI": "0"}) == (
        0,
        "OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable",
    )
    kernel = landlock.kernel_abi()[0]
    assert landlock.abi({"OPENCODE_LANDLOCK_ABI": "999"})[0] == kernel  # never raised above the kernel's


# -- the sandbox permission -------------------------------------------------------------------------------


def test_only_rules_naming_sandbox_let_a_command_out() -> None:
    assert decide(["npm test"], []) == "deny"
    assert decide(["npm test"], [Rule("*", "*", "allow")]) == "deny"
    assert decide(["npm test"], [Rule("sandbox", "npm *", "allow")]) == "allow"
    assert decide(["npm test", "rm -rf x"], [Rule("sandbox", "npm *", "allow")]) == "deny"
    assert decide(["npm test"], [Rule("sandbox", "*", "ask"), Rule("sandbox", "npm *", "allow")]) == "allow"
    assert decide(["make"], [Rule("sandbox", "*", "ask")]) == "ask"


WORDS = st.sampled_from(["npm", "npm *", "git *", "make", "*", "rm -rf *", "ls"])
ACTIONS = st.sampled_from(["allow", "ask", "deny"])
RULES = st.lists(st.tuples(st.sampled_from(["sandbox", "*", "bash", "sand*"]), WORDS, ACTIONS), max_size=6)


@given(RULES, st.lists(st.sampled_from(["npm test", "git status", "make", "rm -rf x", "ls"]), min_size=1))
def test_the_sandbox_decision_hears_only_rules_that_name_it(rules: list[Any], patterns: list[str]) -> None:
    ruleset = [Rule(permission, pattern, action) for permission, pattern, action in rules]
    own = [rule for rule in ruleset if rule.permission == "sandbox"]
    assert decide(patterns, ruleset) == decide(patterns, own)
    if not own:
        assert decide(patterns, ruleset) == "deny"
    if decide(patterns, ruleset) == "allow":  # every part is allowed by the last sandbox rule matching it
        for pattern in patterns:
            last = [rule for rule in own if permission_match(pattern, rule.pattern)][-1]
            assert last.action == "allow"


# -- the CLI as real processes ----------------------------------------------------------------------------


@pytest.fixture
def cli(cli_env: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    temp = tmp_path / "tmp"
    temp.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    env = {k: v for k, v in cli_env.items() if k != "project"}
    env["TMPDIR"] = str(temp)
    return {"project": Path(cli_env["project"]), "env": env, "outside": outside, "temp": temp}


def opencode(cli: dict[str, Any], *args: str, **extra: str) -> Any:
    return run_opencode(cli["project"], {**cli["env"], **extra}, *args)


@needs_landlock
def test_check_prints_the_kernel_and_the_effective_lists(cli: dict[str, Any]) -> None:
    netrc = Path(cli["env"]["HOME"]) / ".netrc"
    netrc.write_text("machine example.com password x\n")
    done = opencode(cli, "sandbox", "check", "--sandbox", "workspace-write", "ls -la")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"landlock: ABI {landlock.kernel_abi()[0]}; network rules: yes"
    assert lines[1] == "mode: workspace-write; network: blocked; read: all; required: false"
    assert lines[2] == "status: enforced"
    assert lines[3:6] == ["writable:", f"  {cli['project']}", f"  {cli['temp']}"]
    assert "readable: everything but the private places" in lines
    assert lines[lines.index("private, never read or written (that exist now):") + 1] == f"  {netrc}"
    assert lines[-1] == "command: runs in the sandbox"


@needs_landlock
def test_check_json_with_reads_confined_and_a_rule_letting_a_command_out(cli: dict[str, Any]) -> None:
    (cli["project"] / "opencode.toml").write_text(
        '[sandbox]\nmode = "read-only"\nread = "project"\n\n[permission.sandbox]\n"npm *" = "allow"\n'
    )
    data = json.loads(opencode(cli, "sandbox", "check", "--json", "npm test").stdout)
    assert data["mode"] == "read-only" and data["status"] == "enforced"
    assert data["writable"] == [str(cli["temp"])]
    assert str(cli["project"]) in data["readable"] and "/usr" in data["readable"]
    assert data["command"] == {
        "command": "npm test",
        "patterns": ["npm test"],
        "sandbox": "allow",
        "sandboxed": False,
        "outside": [],
        "external_directory": None,
    }


def test_check_says_why_the_kernel_cannot(cli: dict[str, Any]) -> None:
    done = opencode(cli, "sandbox", "check", "--sandbox", "workspace-write", OPENCODE_LANDLOCK_ABI="0")
    assert done.stdout.splitlines()[:3] == [
        "landlock: unavailable: OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable",
        "mode: workspace-write; network: blocked; read: all; required: false",
        "status: not enforced (OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable)",
    ]


@pytest.mark.parametrize(
    "command", [["tools", "run", "bash", "command=true"], ["run", "hi"], ["mcp", "serve"]]
)
def test_a_bad_sandbox_flag_is_a_usage_error(cli: dict[str, Any], command: list[str]) -> None:
    done = opencode(cli, *command, "--sandbox", "strict")
    assert done.returncode == 2
    assert "error: --sandbox must be one of off, workspace-write, read-only, not 'strict'" in done.stderr


@needs_landlock
def test_tools_run_and_tools_call_take_the_flag(cli: dict[str, Any]) -> None:
    target = cli["outside"] / "x"
    command = f"touch {target}"
    flags = ["--sandbox", "workspace-write", "--allow", "external_directory"]
    ran = opencode(cli, "tools", "run", "bash", *flags, f"command={command}")
    assert "Permission denied" in ran.stdout and "ran in the workspace-write sandbox" in ran.stdout
    call = json.dumps({"name": "bash", "arguments": {"command": command}})
    called = opencode(
        cli, "tools", "call", "--sandbox", "workspace-write", "--allow", "external_directory", call
    )
    assert "ran in the workspace-write sandbox" in called.stdout
    assert not target.exists()
    free = opencode(cli, "tools", "run", "bash", "--allow", "external_directory", f"command={command}")
    assert free.returncode == 0 and target.exists()


@needs_landlock
def test_an_allow_rule_or_an_approved_ask_runs_a_command_unsandboxed(cli: dict[str, Any]) -> None:
    target = cli["outside"]
    base = ["tools", "run", "bash", "--sandbox", "workspace-write", "--allow", "external_directory"]
    opencode(cli, *base, "--allow", "sandbox=touch *", f"command=touch {target}/allowed")
    assert (target / "allowed").exists()
    opencode(cli, *base, "--allow", "sandbox=ls *", f"command=touch {target}/other")
    assert not (target / "other").exists()
    (cli["project"] / "opencode.toml").write_text('[permission]\nsandbox = "ask"\n')
    asked = opencode(cli, *base, f"command=touch {target}/rejected")  # no terminal: the ask is refused
    assert not (target / "rejected").exists()
    assert "ran in the workspace-write sandbox" in asked.stdout
    opencode(cli, *base, "--yes", f"command=touch {target}/approved")
    assert (target / "approved").exists()


@needs_landlock
def test_without_landlock_each_command_warns_and_required_refuses(cli: dict[str, Any]) -> None:
    args = ["tools", "run", "bash", "--sandbox", "read-only", "command=echo hi"]
    done = opencode(cli, *args, OPENCODE_LANDLOCK_ABI="0")
    assert done.stdout == "hi\n"
    assert done.stderr == (
        "warning: sandbox read-only not enforced, the command runs unsandboxed: "
        "OPENCODE_LANDLOCK_ABI=0 reports Landlock unavailable\n"
    )
    (cli["project"] / "opencode.toml").write_text("[sandbox]\nrequired = true\n")
    refused = opencode(cli, *args, OPENCODE_LANDLOCK_ABI="0")
    assert refused.returncode == 1
    assert "is required (sandbox.required) but cannot be enforced" in refused.stdout + refused.stderr


# -- a local MCP server in the sandbox ------------------------------------------------------------------

WRITER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("writer")


@server.tool(structured_output=False)
def write(path: str) -> str:
    """Write a file."""
    try:
        with open(path, "w") as file:
            file.write("x")
    except OSError as error:
        return f"failed: {error.strerror}"
    return "written"


server.run("stdio")
'''


@needs_landlock
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "control"])
def test_a_local_mcp_server_runs_under_the_same_rules(
    sandboxed: bool, make_project: Any, project_dir: Path, tmp_path: Path
) -> None:
    import tomli_w

    server = tmp_path / "writer.py"
    server.write_text(WRITER)
    own, outside, temp = tmp_path / "own", tmp_path / "outside", tmp_path / "tmp"
    for folder in (own, outside, temp):
        folder.mkdir()
    table: dict[str, Any] = {"type": "local", "command": [sys.executable, str(server)]}
    if sandboxed:
        table |= {"sandbox": True, "writable": [str(own)]}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": {"w": table}}))
    project = make_project(extra_env={"TMPDIR": str(temp)})

    async def main() -> list[str]:
        async with project:
            await project.open()
            connection = await project.mcp.connection("w")  # type: ignore[attr-defined]
            results = []
            for path in (outside / "x", own / "x", project_dir / "x"):
                result = await connection.session.call_tool("write", {"path": str(path)})
                results.append(result.content[0].text)
            return results

    assert asyncio.run(asyncio.wait_for(main(), 60)) == (
        ["failed: Permission denied", "written", "written"] if sandboxed else ["written"] * 3
    )
    assert (outside / "x").exists() is not sandboxed


def test_a_server_table_takes_the_sandbox_mode_or_workspace_write() -> None:
    from opencode_cli.mcp.config import servers

    table = {"type": "local", "command": ["srv"], "sandbox": True, "writable": ["/data"]}
    [alone] = servers({"mcp": {"s": table}})[0].values()
    assert alone.sandbox == sandbox.Settings("workspace-write", writable=("/data",))
    assert alone.as_dict()["sandbox"] is True and alone.as_dict()["writable"] == ["/data"]
    shared = {"mcp": {"s": table}, "sandbox": {"mode": "read-only", "writable": ["/cache"], "network": True}}
    [server] = servers(shared)[0].values()
    assert server.sandbox == sandbox.Settings("read-only", network=True, writable=("/cache", "/data"))
    [plain] = servers({"mcp": {"s": {"type": "local", "command": ["srv"]}}})[0].values()
    assert plain.sandbox is None
    with pytest.raises(ConfigError, match=r"mcp.s.sandbox must be true or false, not 'yes'"):
        servers({"mcp": {"s": {**table, "sandbox": "yes"}}})
