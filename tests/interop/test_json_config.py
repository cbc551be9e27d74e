"""OpenCode's own config files: a realistic ``opencode.jsonc`` means what the equivalent TOML means."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from opencode_cli.cli.app import app
from opencode_cli.config import load
from opencode_cli.config_json import blank_jsonc, parse_jsonc, read_json_text
from opencode_cli.errors import ConfigError

OPENCODE_JSONC = """
{
  "$schema": "https://opencode.ai/config.json",
  // what everyone has in an OpenCode setup, and we do not use
  "theme": "tokyonight",
  "autoupdate": false,
  "keybinds": {"leader": "ctrl+x"},
  "provider": {"anthropic": {"options": {"apiKey": "{env:DEMO_KEY}"}}},
  "permission": {
    "edit": "ask",
    "bash": {
      "*": "ask",
      "git *": "allow",   // reading history is fine
      "rm *": "deny",
    },
    "webfetch": "{env:DEMO_WEBFETCH}",
  },
  /* agents with their own rules and step limits */
  "agent": {
    "review": {
      "description": "Reviews without changing anything",
      "mode": "subagent",
      "steps": 5,
      "prompt": "{file:prompts/review.md}",
      "permission": {"edit": "deny", "bash": {"git diff*": "allow"}},
    },
    "plan": {"maxSteps": 3},
  },
  "mcp": {
    "docs": {"type": "remote", "url": "https://example.com/mcp", "enabled": false},
    "files": {"type": "local", "command": ["npx", "-y", "server"], "environment": {"A": "1"}},
  },
  "tool_output": {"max_lines": 40, "max_bytes": 4096},
}
"""

EQUIVALENT_TOML = """
theme = "tokyonight"
autoupdate = false

[keybinds]
leader = "ctrl+x"

[provider.anthropic.options]
apiKey = "k-123"

[permission]
edit = "ask"
bash = { "*" = "ask", "git *" = "allow", "rm *" = "deny" }
webfetch = "deny"

[agent.review]
description = "Reviews without changing anything"
mode = "subagent"
steps = 5
prompt = "Look for bugs.\\nBe brief."
permission = { edit = "deny", bash = { "git diff*" = "allow" } }

[agent.plan]
maxSteps = 3

[mcp.docs]
type = "remote"
url = "https://example.com/mcp"
enabled = false

[mcp.files]
type = "local"
command = ["npx", "-y", "server"]
environment = { A = "1" }

[tool_output]
max_lines = 40
max_bytes = 4096
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


DEMO_ENV = {"DEMO_KEY": "k-123", "DEMO_WEBFETCH": "deny"}


def cli(cwd: Path, env: dict[str, str], *args: str):
    """The typer app in-process, from ``cwd``, with only ``env`` for the OPENCODE_ variables."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args), env=env)
    finally:
        os.chdir(old)


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("OPENCODE_"):
            monkeypatch.delenv(key)


def summary(project) -> dict:
    """What the config means: every agent's rules, mode and steps, the MCP servers and the limits."""
    from opencode_cli.mcp.config import servers

    found, _ = servers(project.config.data)
    return {
        "agents": {
            name: {
                "rules": [(r.permission, r.pattern, r.action, r.source) for r in agent.permission],
                "mode": agent.mode,
                "steps": agent.steps,
                "prompt": agent.prompt,
                "description": agent.description,
            }
            for name, agent in project.generation.agents.items()
        },
        "mcp": found,
        "limits": (project.generation.truncator.max_lines, project.generation.truncator.max_bytes),
    }


def test_opencode_jsonc_means_what_the_toml_means(make_project, project_dir: Path, tmp_path: Path) -> None:
    write(project_dir / "prompts" / "review.md", "Look for bugs.\nBe brief.\n")
    write(project_dir / "opencode.jsonc", OPENCODE_JSONC)
    from_json = summary(make_project(extra_env=DEMO_ENV))

    toml_dir = tmp_path / "toml-project"
    (toml_dir / ".git").mkdir(parents=True)
    write(toml_dir / "opencode.toml", EQUIVALENT_TOML)
    from_toml = summary(make_project(toml_dir, extra_env=DEMO_ENV))

    assert from_json == from_toml
    assert from_json["limits"] == (40, 4096)
    assert from_json["agents"]["review"]["steps"] == 5 and from_json["agents"]["plan"]["steps"] == 3
    assert from_json["agents"]["review"]["prompt"] == "Look for bugs.\nBe brief."
    assert list(from_json["mcp"]) == ["docs", "files"]


def test_permissions_check_names_the_json_file(project_dir: Path, env, clean_environ) -> None:
    write(project_dir / "prompts" / "review.md", "x")
    config = write(project_dir / "opencode.jsonc", OPENCODE_JSONC)
    run_env = {**env, **DEMO_ENV, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = cli(project_dir, run_env, "permissions", "check", "bash", "rm -rf /tmp/x")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "deny",
        f"rule: bash rm * -> deny  (from permission in {config}, agent build)",
    ]
    review = cli(
        project_dir, run_env, "permissions", "check", "bash", "git diff HEAD", "-a", "review", "--json"
    )
    rule = json.loads(review.stdout)["rule"]
    assert rule == {
        "permission": "bash",
        "pattern": "git diff*",
        "action": "allow",
        "source": "agent.review.permission",
        "file": str(config),
    }


def test_a_plain_value_replacing_a_table_is_the_origin(project_dir: Path, env, clean_environ) -> None:
    write(project_dir / "opencode.json", '{"permission": {"bash": {"*": "ask", "rm *": "deny"}}}')
    toml = write(project_dir / "opencode.toml", '[permission]\nbash = "allow"\n')
    run_env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = cli(project_dir, run_env, "permissions", "check", "bash", "rm -rf x")
    assert result.stdout.splitlines() == [
        "allow",
        f"rule: bash * -> allow  (from permission in {toml}, agent build)",
    ]


def test_toml_beside_json_wins_and_config_get_says_where(project_dir: Path, env, clean_environ) -> None:
    write(project_dir / "opencode.json", '{"tool_output": {"max_lines": 40, "max_bytes": 999}}')
    write(project_dir / ".opencode" / "opencode.jsonc", '{"tool_output": {"max_bytes": 1000,},}')
    write(project_dir / "opencode.toml", "[tool_output]\nmax_lines = 7\n")
    run_env = {**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"}

    lines = cli(project_dir, run_env, "config", "get", "tool_output.max_lines")
    assert lines.stdout == "7\n"
    assert lines.stderr.strip() == (
        f"from: {project_dir / 'opencode.json'} (json) < {project_dir / 'opencode.toml'} (toml)"
        "  (merged; later wins)"
    )
    data = json.loads(cli(project_dir, run_env, "config", "get", "tool_output.max_bytes", "--json").stdout)
    assert data["value"] == 1000 and data["default"] is False
    assert data["sources"][-1] == {
        "source": ".opencode",
        "path": str(project_dir / ".opencode" / "opencode.jsonc"),
        "format": "json",
    }
    table = cli(project_dir, run_env, "config", "get", "tool_output")
    assert table.stdout == "max_lines = 7\nmax_bytes = 1000\n"
    default = cli(project_dir, run_env, "config", "get", "subagent_depth")
    assert (default.exit_code, default.stdout) == (0, "1\n")
    assert "default" in default.stderr

    listing = json.loads(cli(project_dir, run_env, "config", "path", "--json").stdout)
    read = [(f["source"], Path(f["path"]).name, f["format"]) for f in listing["files"] if f["exists"]]
    assert read == [
        ("project", "opencode.json", "json"),
        ("project", "opencode.toml", "toml"),
        (".opencode", "opencode.jsonc", "json"),
    ]
    assert listing["write"] == str(project_dir / "opencode.toml")

    (project_dir / "opencode.json").unlink()
    (project_dir / ".opencode" / "opencode.jsonc").unlink()
    limits = json.loads(cli(project_dir, run_env, "config", "get", "tool_output", "--json").stdout)
    assert limits["value"] == {"max_lines": 7, "max_bytes": 51200}
    missing = cli(project_dir, run_env, "config", "get", "nope.never")
    assert missing.exit_code == 2 and "unknown config key 'nope'" in missing.stderr


def test_opencode_places_and_order(project_dir: Path, env, global_config_dir: Path, tmp_path: Path) -> None:
    write(global_config_dir / "config.json", '{"model": "a/global-config-json", "small_model": "x/y"}')
    write(global_config_dir / "opencode.jsonc", '{"model": "a/global-jsonc"}')
    custom = write(tmp_path / "custom.json", '{"subagent_depth": 2}')
    write(project_dir / "opencode.jsonc", '{"subagent_depth": 3}')
    write(project_dir / "opencode.json", '{"subagent_depth": 4, "model": "a/project"}')
    content = '{"tool_output": {"max_lines": 9}, // inline\n}'
    config = load(
        project_dir, project_dir, {**env, "OPENCODE_CONFIG": str(custom), "OPENCODE_CONFIG_CONTENT": content}
    )
    assert config.get("model") == "a/project"
    assert config.get("subagent_depth") == 4
    assert config.get("tool_output.max_lines") == 9
    assert [(s.label, s.format) for s in config.sources] == [
        ("global", "json"),
        ("global", "json"),
        ("OPENCODE_CONFIG", "json"),
        ("project", "json"),
        ("project", "json"),
        ("OPENCODE_CONFIG_CONTENT", "json"),
    ]
    assert config.warnings == []


def test_env_and_file_substitution(project_dir: Path, env, home: Path) -> None:
    write(home / "secret.txt", 'line "one"\nline two\n')
    write(
        project_dir / "opencode.json",
        """
        {
          // "{file:missing.txt}" in a comment is not read
          "model": "{env:DEMO_MODEL}",
          "subagent_depth": {env:DEMO_DEPTH},
          "agent": {"x": {"prompt": "{file:~/secret.txt}"}},
          "small_model": "{env:NOT_SET_ANYWHERE}"
        }
        """,
    )
    config = load(project_dir, project_dir, {**env, "DEMO_MODEL": "openai/gpt-5", "DEMO_DEPTH": "2"})
    assert config.get("model") == "openai/gpt-5"
    assert config.get("subagent_depth") == 2
    assert config.get("agent.x.prompt") == 'line "one"\nline two'
    assert config.get("small_model") == ""


def test_missing_file_reference_is_an_error(project_dir: Path, env) -> None:
    path = write(project_dir / "opencode.json", '{"agent": {"x": {"prompt": "{file:nope.md}"}}}')
    with pytest.raises(
        ConfigError, match=r'opencode.json: bad file reference: "\{file:nope.md\}".*does not exist'
    ):
        load(project_dir, project_dir, env)
    assert path.is_file()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "model": "a/b"\n  "theme": "x"\n}', ":3:3: invalid JSON: Expecting ',' delimiter"),
        ('{\n  // fine\n  "a": [1, 2,,]\n}', ":3:15: invalid JSON: Expecting value"),
        ('{\n  "a": 1 /* never closed\n}', ":2:10: unterminated /* comment"),
        ("[1, 2]", ": the config must be a JSON object, not list"),
        ('{"a": NaN}', ": invalid JSON: NaN is not JSON"),
    ],
)
def test_malformed_json_names_file_line_and_column(project_dir: Path, env, text: str, where: str) -> None:
    path = write(project_dir / "opencode.json", text)
    with pytest.raises(ConfigError) as caught:
        load(project_dir, project_dir, env)
    assert str(caught.value).startswith(f"{path}{where}")


def test_malformed_json_on_the_command_line_is_one_line(project_dir: Path, env) -> None:
    write(project_dir / "opencode.jsonc", '{\n  "tool_output": {"max_lines": 5\n}\n')
    result = subprocess.run(
        [str(Path(sys.executable).parent / "opencode"), "config", "get", "tool_output.max_lines"],
        cwd=project_dir,
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{project_dir / 'opencode.jsonc'}:4:1: invalid JSON" in result.stderr


def test_unknown_keys_are_kept_without_error(make_project, project_dir: Path, warnings) -> None:
    write(project_dir / "opencode.json", '{"theme": "x", "lsp": {"pyright": {"disabled": true}}, "tui": {}}')
    project = make_project()
    assert project.config.get("lsp.pyright.disabled") is True
    assert warnings == []


# -- the JSONC scanner -------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=5), st.sampled_from([None, 2]))
def test_plain_json_parses_unchanged(value: dict, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert blank_jsonc(text) == text
    assert parse_jsonc(text, "x") == value


@given(
    st.dictionaries(st.text(), json_values, min_size=1, max_size=5), st.text(alphabet="ab */\"'", max_size=8)
)
def test_comments_and_trailing_commas_change_nothing(value: dict, noise: str) -> None:
    safe = noise.replace("/", "")  # nothing that could close the block comment early
    text = json.dumps(value, indent=2)
    text = text.replace("\n", f" // {noise}\n", 1)  # a line comment after the opening brace
    text = text.rstrip("}").rstrip() + f",\n  /* {safe} */\n}}"
    cleaned = blank_jsonc(text)
    assert len(cleaned) == len(text) and cleaned.count("\n") == text.count("\n")
    assert parse_jsonc(text, "x") == value


def test_hot_reload_watches_the_json_files(make_project, project_dir: Path) -> None:
    from opencode_cli.watch.plan import watch_plan

    plan = watch_plan(make_project())
    for name in ("opencode.json", "opencode.jsonc", "opencode.toml"):
        assert plan.relevant(None, str(project_dir / name))
        assert plan.relevant(None, str(project_dir / ".opencode" / name))


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00\r")))
def test_any_file_text_lands_in_the_string_as_it_is(content: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "value.txt").write_text(content, encoding="utf-8", newline="")
        data = read_json_text('{"prompt": "{file:value.txt}"}', Path(folder), {}, "inline")
    assert data == {"prompt": content.strip()}


def test_the_defaults_shown_are_the_ones_used() -> None:
    from opencode_cli.config import DEFAULTS
    from opencode_cli.tools.task import DEFAULT_DEPTH
    from opencode_cli.truncate import MAX_BYTES, MAX_LINES

    assert DEFAULTS["subagent_depth"] == DEFAULT_DEPTH
    assert (DEFAULTS["tool_output.max_lines"], DEFAULTS["tool_output.max_bytes"]) == (MAX_LINES, MAX_BYTES)
