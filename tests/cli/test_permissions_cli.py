"""``opencode permissions check``, ``opencode agents list``, and the permission flags and sessions of
``opencode tools run`` (in-process, as real processes without a terminal, and on a real pty)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

REJECTED = "The user rejected permission to use this specific tool call."
DENIED_PREFIX = (
    "The user has specified a rule which prevents you from using this specific tool call. "
    "Here are some of the relevant rules "
)
HOSTNAME = Path("/etc/hostname")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project_path(cli_env: dict[str, str]) -> Path:
    return Path(cli_env["project"])


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file in a directory beside the project."""
    return write(tmp_path / "elsewhere" / "secret.txt", "outside words 4711\n")


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# -- permissions check -----------------------------------------------------------------------------------


def test_check_env_file_asks_by_default(run_cli) -> None:
    result = run_cli("permissions", "check", "read", ".env")
    assert result.exit_code == 0, result.output
    assert lines(result.stdout) == ["ask", "rule: read *.env -> ask  (from defaults, agent build)"]


def test_check_of_a_permission_no_tool_asks_warns_with_the_close_match(run_cli) -> None:
    result = run_cli("permissions", "check", "raed", ".env")
    assert result.exit_code == 0, result.output
    assert lines(result.stdout)[0] == "allow"  # what the rules say, as before
    warning = "no tool asks the permission 'raed', so a rule for it never applies. Did you mean: read?"
    assert result.stderr.strip() == f"warning: {warning}"
    allowed = run_cli("tools", "run", "read", "filePath=README.md", "--allow", "raed")
    assert f"warning: --allow raed: {warning}" in allowed.stderr  # the same words as --allow


def test_check_of_an_asked_permission_does_not_warn(run_cli) -> None:
    for permission in ("read", "external_directory", "doom_loop", "bash"):
        assert run_cli("permissions", "check", permission, "x").stderr == ""


def test_check_source_file_is_allowed(run_cli) -> None:
    result = run_cli("permissions", "check", "read", "src/x.py")
    assert result.exit_code == 0
    assert lines(result.stdout) == ["allow", "rule: read * -> allow  (from defaults, agent build)"]


@pytest.mark.parametrize(
    ("pattern", "action", "rule"),
    [
        (".env.example", "allow", "read *.env.example -> allow"),
        (".env.local", "ask", "read *.env.* -> ask"),
        (".envrc", "allow", "read * -> allow"),
    ],
)
def test_check_default_env_rules(run_cli, pattern: str, action: str, rule: str) -> None:
    result = run_cli("permissions", "check", "read", pattern)
    assert lines(result.stdout) == [action, f"rule: {rule}  (from defaults, agent build)"]


def test_check_external_directory_default_and_truncation_exemption(run_cli, cli_env) -> None:
    outside = run_cli("permissions", "check", "external_directory", "/srv/data/*")
    assert lines(outside.stdout) == ["ask", "rule: external_directory * -> ask  (from defaults, agent build)"]
    spill = Path(cli_env["XDG_DATA_HOME"], "opencode", "tool-output", "tool_1")
    exempt = run_cli("permissions", "check", "external_directory", str(spill))
    assert lines(exempt.stdout)[0] == "allow"
    assert "(from truncation exemption, agent build)" in exempt.stdout


def test_check_config_rule_shows_source_permission(run_cli, project_path: Path) -> None:
    write(
        project_path / "opencode.toml",
        '[permission]\nbash = { "*" = "ask", "git *" = "allow", "rm *" = "deny" }\n',
    )
    assert lines(run_cli("permissions", "check", "bash", "rm -rf build").stdout) == [
        "deny",
        f"rule: bash rm * -> deny  (from permission in {project_path / 'opencode.toml'}, agent build)",
    ]
    assert lines(run_cli("permissions", "check", "bash", "git status").stdout) == [
        "allow",
        f"rule: bash git * -> allow  (from permission in {project_path / 'opencode.toml'}, agent build)",
    ]
    assert lines(run_cli("permissions", "check", "bash", "make").stdout)[1].endswith(
        f"(from permission in {project_path / 'opencode.toml'}, agent build)"
    )


def test_check_agent_config_rule_and_home_expansion(run_cli, project_path: Path, cli_env) -> None:
    write(
        project_path / "opencode.toml",
        '[agent.plan.permission.external_directory]\n"~/notes/*" = "allow"\n',
    )
    target = f"{cli_env['HOME']}/notes/today.md"
    plan = run_cli("permissions", "check", "external_directory", target, "--agent", "plan")
    assert lines(plan.stdout) == [
        "allow",
        f"rule: external_directory {cli_env['HOME']}/notes/* -> allow"
        f"  (from agent.plan.permission in {project_path / 'opencode.toml'}, agent plan)",
    ]
    build = run_cli("permissions", "check", "external_directory", target)
    assert lines(build.stdout)[0] == "ask"


def test_check_explore_denies_edit(run_cli) -> None:
    result = run_cli("permissions", "check", "edit", "src/app.py", "--agent", "explore")
    assert result.exit_code == 0
    assert lines(result.stdout) == ["deny", "rule: * * -> deny  (from defaults.explore, agent explore)"]
    grep = run_cli("permissions", "check", "grep", "TODO", "-a", "explore")
    assert lines(grep.stdout) == ["allow", "rule: grep * -> allow  (from defaults.explore, agent explore)"]


def test_check_plan_agent_denies_edit_except_plan_files(run_cli) -> None:
    assert lines(run_cli("permissions", "check", "edit", "src/app.py", "--agent", "plan").stdout)[0] == "deny"
    plan_file = run_cli("permissions", "check", "edit", ".opencode/plans/next.md", "--agent", "plan")
    assert lines(plan_file.stdout) == [
        "allow",
        "rule: edit .opencode/plans/*.md -> allow  (from defaults.plan, agent plan)",
    ]


def test_check_unmatched_permission_falls_to_the_catch_all(run_cli) -> None:
    """Every built-in ruleset starts with ``* * allow``, so an unknown permission is decided by it (the
    no-rule default ``ask`` cannot be reached through real agents); explore's ``* * deny`` likewise."""
    build = run_cli("permissions", "check", "frobnicate", "anything")
    assert lines(build.stdout) == ["allow", "rule: * * -> allow  (from defaults, agent build)"]
    explore = run_cli("permissions", "check", "frobnicate", "anything", "--agent", "explore")
    assert lines(explore.stdout)[0] == "deny"


def test_check_json_shape(run_cli, project_path: Path) -> None:
    result = run_cli("permissions", "check", "read", ".env", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "permission": "read",
        "pattern": ".env",
        "agent": "build",
        "action": "ask",
        "rule": {"permission": "read", "pattern": "*.env", "action": "ask", "source": "defaults"},
    }
    write(project_path / "opencode.toml", '[permission]\nwebfetch = "deny"\n')
    data = json.loads(
        run_cli("permissions", "check", "webfetch", "https://x", "--json", "-a", "general").stdout
    )
    assert data == {
        "permission": "webfetch",
        "pattern": "https://x",
        "agent": "general",
        "action": "deny",
        "rule": {
            "permission": "webfetch",
            "pattern": "*",
            "action": "deny",
            "source": "permission",
            "file": str(project_path / "opencode.toml"),
        },
    }


def test_check_unknown_agent_is_a_usage_error(run_cli) -> None:
    result = run_cli("permissions", "check", "read", "x", "--agent", "biuld")
    assert result.exit_code == 2
    assert "error: no agent named 'biuld' (did you mean build?)" in result.stderr
    assert result.stdout == ""


def test_check_never_asks_and_never_writes_the_store(run_process, cli_env) -> None:
    result = run_process("permissions", "check", "external_directory", "/etc/*")
    assert result.returncode == 0
    assert lines(result.stdout)[0] == "ask"
    assert result.stderr == ""
    assert not Path(cli_env["XDG_DATA_HOME"], "opencode", "opencode.db").exists()


# -- agents list -----------------------------------------------------------------------------------------


def test_agents_list_builtins(run_cli) -> None:
    result = run_cli("agents", "list")
    assert result.exit_code == 0
    rows = [line.split(None, 2) for line in lines(result.stdout)]
    assert [(row[0], row[1]) for row in rows] == [
        ("build", "primary"),
        ("plan", "primary"),
        ("general", "subagent"),
        ("explore", "subagent"),
    ]
    assert all(len(row) == 3 and row[2] for row in rows)


def test_agents_list_includes_configured_agents(run_cli, project_path: Path) -> None:
    write(
        project_path / "opencode.toml",
        "[agent.reviewer]\n"
        'mode = "subagent"\n'
        'description = "Reviews diffs for bugs"\n'
        '[agent.reviewer.permission]\nedit = "deny"\n'
        "[agent.ghost]\nhidden = true\n",
    )
    text = run_cli("agents", "list")
    assert text.exit_code == 0
    table = lines(text.stdout)
    assert [line.split()[0] for line in table] == ["build", "plan", "general", "explore", "reviewer", "ghost"]
    assert table[4].split(None, 2) == ["reviewer", "subagent", "Reviews diffs for bugs"]
    assert table[5].split() == ["ghost", "all", "(hidden)"]
    data = json.loads(run_cli("agents", "list", "--json").stdout)
    agents = {agent["name"]: agent for agent in data["agents"]}
    assert list(agents) == ["build", "plan", "general", "explore", "reviewer", "ghost"]
    reviewer = agents["reviewer"]
    assert {k: reviewer[k] for k in ("mode", "description", "hidden", "builtin")} == {
        "mode": "subagent",
        "description": "Reviews diffs for bugs",
        "hidden": False,
        "builtin": False,
    }
    assert agents["build"]["builtin"] is True and agents["ghost"]["hidden"] is True
    rules = reviewer["permission"]
    assert rules[0] == {"permission": "*", "pattern": "*", "action": "allow", "source": "defaults"}
    assert {
        "permission": "edit",
        "pattern": "*",
        "action": "deny",
        "source": "agent.reviewer.permission",
    } in rules
    assert rules[-1]["source"] == "truncation exemption"
    assert lines(run_cli("permissions", "check", "edit", "x", "-a", "reviewer").stdout)[0] == "deny"


def test_agents_list_json_builtin_shape(run_cli) -> None:
    data = json.loads(run_cli("agents", "list", "--json").stdout)
    assert list(data) == ["agents"]
    for agent in data["agents"]:
        assert list(agent) == [
            *("name", "mode", "description", "hidden", "builtin", "permission"),
            *("model", "prompt", "steps", "temperature", "top_p", "color", "options"),
        ]
        assert all(
            list(rule) == ["permission", "pattern", "action", "source"] for rule in agent["permission"]
        )
    explore = next(a for a in data["agents"] if a["name"] == "explore")
    assert {"permission": "*", "pattern": "*", "action": "deny", "source": "defaults.explore"} in explore[
        "permission"
    ]


@pytest.mark.parametrize("command", [("agents", "list"), ("permissions", "check", "read", "x")])
def test_invalid_agent_mode_is_a_clear_error(run_cli, project_path: Path, command: tuple[str, ...]) -> None:
    write(project_path / "opencode.toml", '[agent.reviewer]\nmode = "boss"\n')
    result = run_cli(*command)
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: agent.reviewer.mode must be primary, subagent or all, not 'boss'"
    assert result.stdout == ""


# -- tools run: flags, refusals --------------------------------------------------------------------------


def test_allow_flag_lets_an_outside_read_through(run_process, secret: Path) -> None:
    result = run_process(
        "tools", "run", "read", f"filePath={secret}", "--allow", f"external_directory={secret.parent}/*"
    )
    assert result.returncode == 0, result.stderr
    assert "1: outside words 4711" in result.stdout


def test_allow_for_another_directory_does_not(run_process, secret: Path, tmp_path: Path) -> None:
    result = run_process(
        "tools", "run", "read", f"filePath={secret}", "--allow", f"external_directory={tmp_path}/other/*"
    )
    assert result.returncode == 1
    assert "outside words" not in result.stdout + result.stderr
    assert REJECTED in result.stderr


def test_deny_wins_over_allow_with_the_exact_denied_text(run_process, secret: Path) -> None:
    result = run_process(
        "tools",
        "run",
        "read",
        f"filePath={secret}",
        "--allow",
        f"external_directory={secret.parent}/*",
        "--deny",
        "read",
        "--yes",  # approving every ask does not override a deny
    )
    assert result.returncode == 1
    assert result.stdout == ""
    rules = [  # as OpenCode prints them: the short form `"*": "allow"` puts action before pattern
        {"permission": "*", "action": "allow", "pattern": "*"},
        {"permission": "read", "pattern": "*", "action": "allow"},
        {"permission": "read", "pattern": "*.env", "action": "ask"},
        {"permission": "read", "pattern": "*.env.*", "action": "ask"},
        {"permission": "read", "pattern": "*.env.example", "action": "allow"},
        {"permission": "read", "pattern": "*", "action": "deny"},
    ]
    assert result.stderr.splitlines()[-1] == DENIED_PREFIX + json.dumps(rules, separators=(",", ":"))


def test_deny_beats_allow_of_the_same_permission_whatever_the_order(run_process, secret: Path) -> None:
    pattern = f"{secret.parent}/*"
    for flags in (
        ["--deny", "external_directory", "--allow", f"external_directory={pattern}"],
        ["--allow", f"external_directory={pattern}", "--deny", "external_directory"],
    ):
        result = run_process("tools", "run", "read", f"filePath={secret}", *flags)
        assert result.returncode == 1 and result.stdout == "", flags
        assert result.stderr.splitlines()[-1].startswith(DENIED_PREFIX), flags
        assert result.stderr.splitlines()[-1].endswith(
            f'{{"permission":"external_directory","pattern":"{pattern}","action":"allow"}},'
            '{"permission":"external_directory","pattern":"*","action":"deny"}]'
        )


def test_deny_of_the_external_directory_pattern(run_process, secret: Path) -> None:
    result = run_process(
        "tools",
        "run",
        "read",
        f"filePath={secret}",
        "--deny",
        f"external_directory={secret.parent}/*",
        "--yes",
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(DENIED_PREFIX)
    assert (
        f'{{"permission":"external_directory","pattern":"{secret.parent}/*","action":"deny"}}'
        in result.stderr
    )


def test_flag_without_a_permission_is_a_usage_error(run_cli) -> None:
    result = run_cli("tools", "run", "read", "filePath=README.md", "--allow", "=x")
    assert result.exit_code == 2
    assert "error: --allow takes PERMISSION or PERMISSION=PATTERN, not '=x'" in result.stderr


def test_refusal_hint_names_the_allow_flag(run_process, secret: Path) -> None:
    result = run_process("tools", "run", "read", f"filePath={secret}")
    assert result.returncode == 1
    assert result.stdout == ""
    pattern = f"{secret.parent}/*"
    assert (
        f"permission needed: external_directory on {pattern}; there is no terminal to ask, so it was "
        f"refused. To approve, rerun with --allow 'external_directory={pattern}' (or --yes for every ask), "
        "or add an allow rule under [permission] in opencode.toml."
    ) in result.stderr
    assert result.stderr.splitlines()[-1] == REJECTED
    # and the flag it names works
    again = run_process(
        "tools", "run", "read", f"filePath={secret}", "--allow", f"external_directory={pattern}"
    )
    assert again.returncode == 0 and "outside words 4711" in again.stdout


def test_refusal_hint_for_an_env_file(run_process, project_path: Path) -> None:
    write(project_path / ".env", "TOKEN=abc\n")
    result = run_process("tools", "run", "read", "filePath=.env")
    assert result.returncode == 1 and "TOKEN" not in result.stdout
    assert "--allow 'read=.env'" in result.stderr
    ok = run_process("tools", "run", "read", "filePath=.env", "--allow", "read=.env")
    assert ok.returncode == 0 and "1: TOKEN=abc" in ok.stdout


def test_json_failure_output(run_process, secret: Path) -> None:
    result = run_process("tools", "run", "read", f"filePath={secret}", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == {"error": REJECTED}


# -- the "done when" -------------------------------------------------------------------------------

needs_hostname = pytest.mark.skipif(not HOSTNAME.is_file(), reason="no /etc/hostname here")


@needs_hostname
def test_etc_hostname_is_refused_without_a_terminal(run_process) -> None:
    result = run_process("tools", "run", "read", f"path={HOSTNAME}")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "--allow 'external_directory=/etc/*'" in result.stderr
    assert result.stderr.splitlines()[-1] == REJECTED
    assert "<content>" not in result.stderr and "1: " not in result.stderr


@needs_hostname
def test_etc_hostname_with_yes_prints_the_file(run_process) -> None:
    result = run_process("tools", "run", "read", f"path={HOSTNAME}", "--yes")
    assert result.returncode == 0, result.stderr
    first = HOSTNAME.read_text().splitlines()[0]
    assert f"<path>{HOSTNAME}</path>" in result.stdout
    assert f"1: {first}\n" in result.stdout


@needs_hostname
def test_etc_hostname_with_an_allow_rule_in_opencode_toml(run_process, project_path: Path) -> None:
    write(project_path / "opencode.toml", '[permission.external_directory]\n"/etc/*" = "allow"\n')
    result = run_process("tools", "run", "read", f"path={HOSTNAME}")
    assert result.returncode == 0, result.stderr
    assert f"1: {HOSTNAME.read_text().splitlines()[0]}\n" in result.stdout
    assert "permission needed" not in result.stderr
    # a rule for another directory does not help
    write(project_path / "opencode.toml", '[permission.external_directory]\n"/usr/*" = "allow"\n')
    assert run_process("tools", "run", "read", f"path={HOSTNAME}").returncode == 1


@needs_hostname
def test_etc_hostname_through_a_symlink_in_the_project_is_refused(run_process, project_path: Path) -> None:
    (project_path / "host").symlink_to(HOSTNAME)
    result = run_process("tools", "run", "read", "filePath=host")
    assert result.returncode == 1 and result.stdout == ""
    assert "--allow 'external_directory=/etc/*'" in result.stderr


# -- --session and "always" on a real terminal ---------------------------------------------------------------


def spawn(cli_env: dict[str, str], *args: str):
    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in cli_env.items() if k != "project"}
    script = str(Path(sys.executable).parent / "opencode")
    return pexpect.spawn(script, list(args), cwd=cli_env["project"], env=env, encoding="utf-8", timeout=30)


def answer_on_pty(cli_env: dict[str, str], secret: Path, reply: str, *extra: str) -> str:
    pexpect = pytest.importorskip("pexpect")
    child = spawn(cli_env, "tools", "run", "read", f"filePath={secret}", *extra)
    child.expect(r"Allow external_directory on (\S+)\? \[o\]nce, \[a\]lways, \[r\]eject: ")
    asked = child.match.group(1)
    child.sendline(reply)
    child.expect("1: outside words 4711")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return asked


def stored(cli_env: dict[str, str]) -> list[tuple[str, str, str]]:
    path = Path(cli_env["XDG_DATA_HOME"], "opencode", "opencode.db")
    if not path.exists():
        return []
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT session_id, permission, pattern FROM permission_approval"
        ).fetchall()
    finally:
        connection.close()
    return [tuple(row) for row in rows]


def test_always_on_a_terminal_is_remembered_for_that_session(run_process, cli_env, secret: Path) -> None:
    pattern = f"{secret.parent}/*"
    assert answer_on_pty(cli_env, secret, "a", "--session", "ses_review") == pattern
    assert stored(cli_env) == [("ses_review", "external_directory", pattern)]

    # a later run without a terminal, same session: no ask, the file is read
    same = run_process("tools", "run", "read", f"filePath={secret}", "--session", "ses_review")
    assert same.returncode == 0, same.stderr
    assert "1: outside words 4711" in same.stdout
    assert "permission needed" not in same.stderr

    # another session id is refused, and the approval does not leak to it
    other = run_process("tools", "run", "read", f"filePath={secret}", "--session", "ses_other")
    assert other.returncode == 1
    assert "outside words" not in other.stdout
    assert f"--allow 'external_directory={pattern}'" in other.stderr
    # nor to a run with no session at all
    assert run_process("tools", "run", "read", f"filePath={secret}").returncode == 1
    assert stored(cli_env) == [("ses_review", "external_directory", pattern)]


def test_once_on_a_terminal_is_not_remembered(run_process, cli_env, secret: Path) -> None:
    answer_on_pty(cli_env, secret, "o", "--session", "ses_once")
    assert stored(cli_env) == []
    assert run_process("tools", "run", "read", f"filePath={secret}", "--session", "ses_once").returncode == 1


def test_always_without_a_session_is_not_remembered(run_process, cli_env, secret: Path) -> None:
    answer_on_pty(cli_env, secret, "a")
    assert stored(cli_env) == []
    assert run_process("tools", "run", "read", f"filePath={secret}").returncode == 1


def test_reject_on_a_terminal_reads_nothing(cli_env, secret: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = spawn(cli_env, "tools", "run", "read", f"filePath={secret}", "--session", "ses_no")
    child.expect(r"\[r\]eject: ")
    child.sendline("r")
    child.expect("Feedback for the model")
    child.sendline("")
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.exitstatus == 1
    assert REJECTED in output and "outside words" not in output
    assert stored(cli_env) == []
