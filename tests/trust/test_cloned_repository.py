"""A cloned repository runs nothing, sends nothing and widens nothing until the user trusts it; then
exactly what was listed takes effect; an edit of any listed file ends the trust and the note names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opencode_cli import sandbox
from opencode_cli.project import Project

Clone = Listener = Any  # the fixtures of conftest.py


def out(result: Any) -> str:
    return result.stdout


def test_the_three_commands_of_the_issue_leave_no_marker_on_a_fresh_clone(clone: Clone) -> None:
    listed = clone.process("tools", "list")
    assert listed.returncode == 0, listed.stderr
    assert "evil" in listed.stdout and "not trusted" in listed.stdout
    assert "(not trusted: the project is not trusted; `opencode trust" in listed.stdout
    note = [line for line in listed.stderr.splitlines() if "is not trusted" in line]
    assert len(note) == 1 and "held back tool file .opencode/tool/evil.py" in note[0]
    assert f"opencode trust {clone.root}" in note[0]
    plugins = clone.process("plugins", "list")
    assert plugins.returncode == 0, plugins.stderr
    assert "evil.py  [file]  not trusted" in plugins.stdout
    assert "is not trusted" not in plugins.stderr  # said once per change (the quiet rule)
    read = clone.process("tools", "run", "read", "path=README.md")
    assert read.returncode == 0 and "A cloned repository" in read.stdout, read.stderr
    held = clone.process("tools", "run", "evil")
    assert held.returncode == 2
    assert f"Tool 'evil' would come from the tool file {clone.root}/.opencode/tool/evil.py" in held.stderr
    assert "the project is not trusted" in held.stderr
    assert clone.marked() == []


def test_while_untrusted_nothing_runs_is_sent_or_widens(clone: Clone, listener: Listener) -> None:
    servers = clone.cli("mcp", "list")
    assert servers.exit_code == 0, servers.output
    assert "evil" in out(servers) and "not trusted" in out(servers) and "remote" in out(servers)
    ran = clone.process("run", "hi", "--model", "evil/m1")
    assert ran.returncode == 2 and "unknown provider 'evil'" in ran.stderr
    lsp = clone.cli("lsp", "list")
    assert "evil" not in out(lsp)
    assert clone.marked() == [] and listener.seen == []

    checked = clone.cli("permissions", "check", "bash", "rm -rf build")
    assert out(checked).splitlines()[0] == "ask"  # the user's rule, not the project's allow
    assert "opencode.toml" not in out(checked) or str(clone.root) not in out(checked)
    denied = clone.cli("permissions", "check", "read", "keys.secret")
    assert out(denied).splitlines()[0] == "deny"  # a rule that narrows still applies
    planned = clone.cli("permissions", "check", "edit", "src/x.py", "--agent", "plan")
    assert out(planned).splitlines()[0] == "deny"

    with Project(clone.root, env=clone.env) as project:
        assert sandbox.settings(project.config.data, {}).mode == "workspace-write"
        assert sandbox.settings(project.config.data, {}).writable == ()
        assert project.config.get("agent.general.prompt") == "{file:~/secret.txt}"  # not filled in
        assert project.config.get("agent.plan.description") == "a planner"  # data is kept
        assert project.config.get("tools") == {"websearch": False}
        for key in ("provider", "llm", "langchain", "pydantic_ai", "formatter", "plugin", "trust"):
            assert project.config.get(key) is None, key
        assert project.config.get("experimental.code_mode_limits") is None
        assert "evil" not in project.registry.entries
        held = {(record.kind, record.name, record.status) for record in project.generation.held_back}
        assert held == {
            ("file", "evil", "not trusted"),
            ("mcp", "evil", "not trusted"),
            ("mcp", "remote", "not trusted"),
        }
    assert clone.marked() == [] and listener.seen == []


def test_opencode_trust_lists_exactly_what_would_take_effect(clone: Clone) -> None:
    shown = clone.cli("trust")
    assert shown.exit_code == 1  # no terminal: nothing recorded
    text = out(shown)
    for expected in (
        "Code that would run:",
        "tool file: imported",
        "mcp.evil: runs sh -c",
        "with environment TOKEN",
        "lsp.evil: runs sh -c",
        "formatter.evil: runs",
        "plugin: loads opencode-evil-plugin",
        'llm.toolboxes: imports SQLite("data.db")',
        "langchain.tools: imports evil_module:tool",
        "langchain.toolkits: imports evil_module:Kit",
        "pydantic_ai.toolsets: imports evil_module:toolset",
        "Where secrets would go:",
        "mcp.remote: connects to http://127.0.0.1:",
        "sending headers Authorization",
        "provider.evil: sends requests and the key to http://127.0.0.1:",
        "{file:~/secret.txt}: would be filled in with the file ~/secret.txt",
        "Rules that would widen:",
        "permission.bash: allow",
        "tools.webfetch: true",
        "agent.plan.permission.edit: allow",
        'sandbox.mode: "off"',
        'sandbox.writable: ["~"]',
        "experimental.code_mode_limits:",
        "trust: ",
    ):
        assert expected in text, expected
    assert "read" not in text.split("Rules that would widen:")[1]  # a deny is no widening
    assert "opencode trust --yes" in shown.stderr
    assert not (Path(clone.env["XDG_DATA_HOME"]) / "opencode" / "trust.json").exists()


def test_after_trust_yes_exactly_what_was_listed_runs(clone: Clone, listener: Listener) -> None:
    trusted = clone.cli("trust", "--yes")
    assert trusted.exit_code == 0, trusted.output
    record = json.loads((Path(clone.env["XDG_DATA_HOME"]) / "opencode" / "trust.json").read_text())
    assert sorted(record["projects"][str(clone.root)]["files"]) == sorted(
        str(clone.root / name) for name in (".opencode/tool/evil.py", "opencode.json", "opencode.toml")
    )
    listed = clone.process("tools", "list")
    assert listed.returncode == 0 and "not trusted" not in listed.stdout + listed.stderr
    assert "tool" in clone.marked()
    clone.cli("mcp", "list")
    assert "mcp" in clone.marked()
    assert any("/mcp" in seen for seen in listener.seen)  # the remote server's URL was reached
    ran = clone.process("run", "hi", "--model", "evil/m1")
    assert ran.returncode != 2, ran.stderr
    assert any("/v1" in seen for seen in listener.seen)
    checked = clone.cli("permissions", "check", "bash", "rm -rf build")
    assert out(checked).splitlines()[0] == "allow"
    with Project(clone.root, env=clone.env) as project:
        assert project.config.get("agent.general.prompt") == "the user's secret"
        assert sandbox.settings(project.config.data, {}).mode == "off"
        assert project.config.get("trust.directories") == ["/**"]  # kept, but never read from a project
    assert clone.cli("trust", "--yes").exit_code == 0
    assert "is trusted already" in out(clone.cli("trust"))


@pytest.mark.parametrize(
    "name", [".opencode/tool/evil.py", "opencode.toml", "opencode.json", ".opencode/tool/new.py"]
)
def test_an_edit_of_any_listed_file_ends_the_trust_and_the_note_names_it(clone: Clone, name: str) -> None:
    assert clone.cli("trust", "--yes").exit_code == 0
    path = clone.root / name
    comment = "// edited" if name.endswith(".json") else "# edited"  # OpenCode's JSON files are JSONC
    path.write_text((path.read_text() if path.exists() else "") + f"\n{comment}\n")
    shown = clone.cli("trust", "--json")
    data = json.loads(out(shown))
    assert data["trusted"] is False
    assert data["changed"] == [f"{name} {'is new' if 'new' in name else 'changed'}"]
    listed = clone.process("tools", "list")
    assert f"trust ended ({name} " in listed.stderr
    assert clone.marked() == []


def test_a_listed_file_touched_but_not_changed_keeps_the_trust(clone: Clone) -> None:
    assert clone.cli("trust", "--yes").exit_code == 0
    path = clone.root / "opencode.toml"
    path.write_text(path.read_text())  # a new modification time, the same content: hashed, equal
    assert json.loads(out(clone.cli("trust", "--json")))["trusted"] is True


def test_untrust_ends_it_and_exit_codes(clone: Clone, tmp_path: Path) -> None:
    assert clone.cli("untrust").exit_code == 1  # was not trusted
    assert clone.cli("trust", "--yes").exit_code == 0
    listed = clone.cli("trust", "--list")
    assert str(clone.root) in out(listed) and str(clone.root / "opencode.toml") in out(listed)
    gone = clone.cli("untrust", str(clone.root))
    assert gone.exit_code == 0 and "no longer trusted" in out(gone)
    assert json.loads(out(clone.cli("trust", "--list", "--json"))) == {"projects": []}
    assert clone.cli("trust", str(tmp_path / "missing")).exit_code == 2
    answered = clone.cli("trust", input="n\n")
    assert answered.exit_code == 1


def test_a_project_without_anything_to_trust_needs_nothing(tmp_path: Path, clone: Clone) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "opencode.toml").write_text("[tool_output]\nmax_lines = 10\n")
    shown = clone.cli("trust", str(plain))
    assert shown.exit_code == 0 and "nothing to trust" in out(shown)
    with Project(plain, env=clone.env) as project:
        assert project.generation.trusted_view.decision.why == "nothing to trust"
        assert project.config.get("tool_output.max_lines") == 10


def test_the_host_and_the_user_trust_never_the_project(clone: Clone, tmp_path: Path) -> None:
    with Project(clone.root, env=clone.env, trusted=True) as project:
        assert "evil" in project.registry.entries
    with Project(clone.root, env={**clone.env, "OPENCODE_TRUST": "1"}, trusted=False) as project:
        assert "evil" not in project.registry.entries  # the host's choice wins
    with Project(clone.root, env={**clone.env, "OPENCODE_TRUST": "1"}) as project:
        assert project.generation.trusted_view.decision.why == "OPENCODE_TRUST"
    flagged = clone.cli("--trust", "permissions", "check", "bash", "ls")
    assert out(flagged).splitlines()[0] == "allow"
    # the project's own [trust] directories = ["/**"] trusted nothing above; the user's does
    user = Path(clone.env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml"
    user.write_text(user.read_text() + f'\n[trust]\ndirectories = ["{tmp_path}/*"]\n')
    with Project(clone.root, env=clone.env) as project:
        assert project.generation.trusted_view.decision.why == f"trust.directories '{tmp_path}/*'"
        assert "evil" in project.registry.entries


def test_opencode_trust_through_the_bash_tool_asks_config(clone: Clone) -> None:
    commands = ("opencode trust --yes", "OPENCODE_TRUST=1 opencode tools list", "opencode --trust mcp list")
    for command in commands:
        asked = clone.cli("tools", "run", "bash", f"command={command}", "--allow", "bash")
        assert asked.exit_code == 1, asked.output
        assert f"permission needed: config on {command}" in asked.stderr
        refused = clone.cli("tools", "run", "bash", f"command={command}", "-a", "plan", "--allow", "bash")
        said = refused.stdout + refused.stderr
        assert refused.exit_code == 1 and "prevents you from using this specific tool call" in said
        assert '"permission":"config","action":"deny"' in said and "permission needed" not in said
    assert not (Path(clone.env["XDG_DATA_HOME"]) / "opencode" / "trust.json").exists()
    assert clone.marked() == []


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("n", 1), ("", 1)])
def test_on_a_terminal_opencode_trust_asks_and_records_only_a_yes(
    clone: Clone, answer: str, code: int
) -> None:
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    script = Path(sys.executable).parent / "opencode"
    process = subprocess.Popen(
        [str(script), "trust"],
        cwd=clone.root,
        env=clone.env,
        stdin=follower,
        stderr=follower,
        stdout=subprocess.PIPE,
    )
    os.close(follower)
    os.write(leader, f"{answer}\n".encode())
    listing, _ = process.communicate(timeout=120)
    said = b""
    while True:  # what was written to the terminal: the question and the answer's echo
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    os.close(leader)
    assert process.returncode == code
    assert b"Trust this project? [y/N]" in said and b"Code that would run:" in listing
    recorded = Path(clone.env["XDG_DATA_HOME"]) / "opencode" / "trust.json"
    assert recorded.exists() == (answer == "y")
