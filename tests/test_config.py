"""Configuration: directories (core spec §9.1), file merge order, warnings, errors, and writing."""

from __future__ import annotations

import math
import os
import stat
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli.config import (
    Config,
    config_directories,
    config_files,
    deep_merge,
    find_worktree,
    load,
    parse_value,
    set_key,
)
from opencode_cli.errors import ConfigError

# -- directories -----------------------------------------------------------------------------------------


@pytest.fixture
def nested(project_dir: Path, tmp_path: Path) -> Path:
    """``project/a/b`` with a ``.opencode`` at each level, plus one above the git root that must not count."""
    cwd = project_dir / "a" / "b"
    for folder in (project_dir, project_dir / "a", cwd, tmp_path):
        (folder / ".opencode").mkdir(parents=True, exist_ok=True)
    return cwd


def test_directory_order(nested: Path, project_dir: Path, env, home: Path, tmp_path: Path) -> None:
    (home / ".opencode").mkdir()
    extra = tmp_path / "extra"
    env = {**env, "OPENCODE_CONFIG_DIR": str(extra)}

    dirs = config_directories(nested, project_dir, env)

    assert dirs == [
        Path(env["XDG_CONFIG_HOME"]) / "opencode",
        nested / ".opencode",
        project_dir / "a" / ".opencode",
        project_dir / ".opencode",
        home / ".opencode",
        extra,
    ]


def test_global_dir_defaults_to_dot_config(nested: Path, project_dir: Path, env, home: Path) -> None:
    env = {k: v for k, v in env.items() if k != "XDG_CONFIG_HOME"}

    assert config_directories(nested, project_dir, env)[0] == home / ".config" / "opencode"


def test_only_existing_dot_opencode_dirs_are_listed(project_dir: Path, env) -> None:
    cwd = project_dir / "x" / "y"
    cwd.mkdir(parents=True)
    (project_dir / "x" / ".opencode").mkdir()

    dirs = config_directories(cwd, project_dir, env)

    assert dirs == [Path(env["XDG_CONFIG_HOME"]) / "opencode", project_dir / "x" / ".opencode"]


def test_disable_project_config_drops_dot_opencode_dirs(nested: Path, project_dir: Path, env, home) -> None:
    (home / ".opencode").mkdir()
    env = {**env, "OPENCODE_DISABLE_PROJECT_CONFIG": "true"}

    dirs = config_directories(nested, project_dir, env)

    assert dirs == [Path(env["XDG_CONFIG_HOME"]) / "opencode", home / ".opencode"]


def test_duplicate_directories_are_listed_once(nested: Path, project_dir: Path, env) -> None:
    env = {**env, "OPENCODE_CONFIG_DIR": str(project_dir / ".opencode")}

    dirs = config_directories(nested, project_dir, env)

    assert dirs.count(project_dir / ".opencode") == 1
    assert len(dirs) == len(set(dirs))


def test_project_config_dirs_through_project(make_project, nested: Path, project_dir: Path) -> None:
    project = make_project(directory=nested)

    assert project.worktree == project_dir
    assert project.generation.config_dirs[1:] == [
        nested / ".opencode",
        project_dir / "a" / ".opencode",
        project_dir / ".opencode",
    ]


def test_find_worktree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_worktree(deep) is None or not str(find_worktree(deep)).startswith(str(tmp_path))
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a linked worktree has a .git file
    assert find_worktree(deep) == repo
    (repo / "src" / ".git").mkdir()
    assert find_worktree(deep) == repo / "src"


# -- files and merging -----------------------------------------------------------------------------------


def write_model(path: Path, label: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'model = "{label}"\n[agent.{label.replace("/", "_").replace("~", "home")}]\nhidden = true\n'
    )
    return path


def test_file_merge_order(nested: Path, project_dir: Path, env, home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    files = [
        write_model(Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml", "global"),
        write_model(tmp_path / "custom.toml", "OPENCODE_CONFIG"),
        write_model(project_dir / "opencode.toml", "root"),
        write_model(project_dir / "a" / "opencode.toml", "a"),
        write_model(nested / "opencode.toml", "b"),
        write_model(home / ".opencode" / "opencode.toml", "~"),
        write_model(project_dir / ".opencode" / "opencode.toml", "root_dot"),
        write_model(project_dir / "a" / ".opencode" / "opencode.toml", "a_dot"),
        write_model(nested / ".opencode" / "opencode.toml", "b_dot"),
        write_model(extra / "opencode.toml", "OPENCODE_CONFIG_DIR"),
    ]
    env = {**env, "OPENCODE_CONFIG": str(tmp_path / "custom.toml"), "OPENCODE_CONFIG_DIR": str(extra)}

    config = load(nested, project_dir, env)

    assert [s.path for s in config.sources] == files
    assert config.data["model"] == "OPENCODE_CONFIG_DIR"
    # tables merged: every file's agent table survives, in load order
    assert list(config.data["agent"]) == [
        "global",
        "OPENCODE_CONFIG",
        "root",
        "a",
        "b",
        "home",
        "root_dot",
        "a_dot",
        "b_dot",
        "OPENCODE_CONFIG_DIR",
    ]
    assert [s.label for s in config.sources][:3] == ["global", "OPENCODE_CONFIG", "project"]


def test_nearer_project_file_wins(nested: Path, project_dir: Path, env) -> None:
    write_model(project_dir / "opencode.toml", "root")
    write_model(nested / "opencode.toml", "near")

    assert load(nested, project_dir, env).data["model"] == "near"


def test_disable_project_config_skips_project_files_only(
    nested: Path, project_dir: Path, env, home: Path
) -> None:
    write_model(Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.toml", "global")
    write_model(project_dir / "opencode.toml", "root")
    write_model(nested / ".opencode" / "opencode.toml", "b_dot")
    home_file = write_model(home / ".opencode" / "opencode.toml", "~")
    env = {**env, "OPENCODE_DISABLE_PROJECT_CONFIG": "1"}

    config = load(nested, project_dir, env)

    assert [s.label for s in config.sources] == ["global", "~/.opencode"]
    assert config.sources[-1].path == home_file
    assert config.data["model"] == "~"


def test_missing_opencode_config_file_is_an_error(project_dir: Path, env, tmp_path: Path) -> None:
    env = {**env, "OPENCODE_CONFIG": str(tmp_path / "nope.toml")}

    with pytest.raises(ConfigError, match="OPENCODE_CONFIG"):
        load(project_dir, project_dir, env)


def test_deep_merge_keeps_key_order(
    make_project, project_dir: Path, global_config_dir: Path, write_file
) -> None:
    write_file(
        global_config_dir / "opencode.toml",
        """
        [permission]
        bash = "allow"
        edit = "ask"

        [permission.webfetch]
        "*" = "ask"
        "https://docs.*" = "allow"
        """,
    )
    write_file(
        project_dir / "opencode.toml",
        """
        [permission]
        read = "deny"
        bash = "deny"

        [permission.webfetch]
        "https://evil.*" = "deny"
        "*" = "allow"
        """,
    )

    permission = make_project().config.data["permission"]

    assert list(permission) == ["bash", "edit", "webfetch", "read"]
    assert permission["bash"] == "deny"
    assert list(permission["webfetch"].items()) == [
        ("*", "allow"),
        ("https://docs.*", "allow"),
        ("https://evil.*", "deny"),
    ]


def test_deep_merge_replaces_non_tables_and_does_not_mutate() -> None:
    base = {"a": {"x": 1, "y": {"z": 1}}, "b": [1, 2], "c": "s"}
    override = {"a": {"y": {"w": 2}}, "b": [3], "c": {"now": "table"}, "d": 4}

    merged = deep_merge(base, override)

    assert merged == {"a": {"x": 1, "y": {"z": 1, "w": 2}}, "b": [3], "c": {"now": "table"}, "d": 4}
    assert base == {"a": {"x": 1, "y": {"z": 1}}, "b": [1, 2], "c": "s"}
    assert override == {"a": {"y": {"w": 2}}, "b": [3], "c": {"now": "table"}, "d": 4}


def test_opencode_only_keys_are_kept_without_warning(make_project, project_dir, write_file, warnings) -> None:
    write_file(
        project_dir / "opencode.toml",
        """
        "$schema" = "https://opencode.ai/config.json"
        theme = "dark"

        [provider.anthropic]
        options = { timeout = 600 }

        [mcp.weather]
        type = "local"
        command = ["weather-mcp"]

        [lsp.pyright]
        disabled = true

        [formatter.ruff]
        command = ["ruff", "format"]
        """,
    )

    config = make_project().config

    assert config.data["provider"] == {"anthropic": {"options": {"timeout": 600}}}
    assert config.data["mcp"]["weather"]["command"] == ["weather-mcp"]
    assert config.data["lsp"] == {"pyright": {"disabled": True}}
    assert config.data["formatter"]["ruff"]["command"] == ["ruff", "format"]
    assert config.warnings == []
    assert list(warnings) == []


def test_misspelt_top_level_key_warns_with_close_match(
    make_project, project_dir, write_file, warnings
) -> None:
    path = write_file(project_dir / "opencode.toml", "[tool_ouput]\nmax_lines = 10\n")

    project = make_project()
    config = project.config

    assert project.generation.truncator.max_lines == 2000  # the misspelt table is ignored
    assert len(config.warnings) == 1
    assert "'tool_ouput'" in config.warnings[0]
    assert "did you mean 'tool_output'" in config.warnings[0]
    assert str(path) in config.warnings[0]
    assert list(warnings) == config.warnings


def test_misspelt_sub_key_warns_with_close_match(make_project, project_dir, write_file, warnings) -> None:
    write_file(project_dir / "opencode.toml", "[tool_output]\nmax_line = 10\nmax_bytes = 2048\n")

    project = make_project()

    assert project.generation.truncator.max_bytes == 2048
    assert len(warnings) == 1
    assert "'tool_output.max_line'" in warnings[0]
    assert "did you mean 'tool_output.max_lines'" in warnings[0]


def test_unknown_key_without_a_close_match(make_project, project_dir, write_file, warnings) -> None:
    write_file(project_dir / "opencode.toml", "zzqqxx = 1\n")

    _ = make_project().config

    assert len(warnings) == 1
    assert "'zzqqxx'" in warnings[0] and "did you mean" not in warnings[0]


def test_malformed_toml_names_file_and_line(make_project, project_dir, write_file) -> None:
    path = write_file(project_dir / "opencode.toml", 'model = "ok"\nbroken = = 2\n')

    with pytest.raises(ConfigError) as info:
        _ = make_project().config

    message = str(info.value)
    assert str(path) in message
    assert "line 2" in message
    assert "Traceback" not in message


def test_non_utf8_config_is_a_config_error(make_project, project_dir) -> None:
    (project_dir / "opencode.toml").write_bytes(b'model = "\xff\xfe"\n')

    with pytest.raises(ConfigError, match=r"opencode.toml"):
        _ = make_project().config


def test_opencode_permission_is_merged_last(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", '[permission]\nbash = "ask"\nedit = "deny"\n')
    project = make_project(
        extra_env={
            "OPENCODE_CONFIG_CONTENT": '[permission]\nbash = "deny"\n',
            "OPENCODE_PERMISSION": '{"bash": "allow", "read": {"*.env": "deny"}}',
        }
    )

    config = project.config

    assert list(config.data["permission"].items()) == [
        ("bash", "allow"),
        ("edit", "deny"),
        ("read", {"*.env": "deny"}),
    ]
    assert [s.label for s in config.sources][-2:] == ["OPENCODE_CONFIG_CONTENT", "OPENCODE_PERMISSION"]


def test_opencode_permission_string_means_everything(make_project) -> None:
    project = make_project(extra_env={"OPENCODE_PERMISSION": '"deny"'})

    assert project.config.data["permission"] == {"*": "deny"}


@pytest.mark.parametrize("value", ["{not json", "[1, 2]", "42"])
def test_bad_opencode_permission_is_a_config_error(make_project, value) -> None:
    with pytest.raises(ConfigError, match="OPENCODE_PERMISSION"):
        _ = make_project(extra_env={"OPENCODE_PERMISSION": value}).config


def test_opencode_config_content_toml_and_json(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", 'model = "from-file"\n[tool_output]\nmax_lines = 7\n')

    toml_project = make_project(extra_env={"OPENCODE_CONFIG_CONTENT": 'model = "from-env"'})
    json_project = make_project(extra_env={"OPENCODE_CONFIG_CONTENT": '{"tool_output": {"max_bytes": 99}}'})

    assert toml_project.config.data["model"] == "from-env"
    assert toml_project.generation.truncator.max_lines == 7
    assert json_project.config.data["model"] == "from-file"
    truncator = json_project.generation.truncator
    assert (truncator.max_lines, truncator.max_bytes) == (7, 99)


@pytest.mark.parametrize("value", ["model = = 1", "{bad json", "[1, 2]"])
def test_bad_opencode_config_content_is_a_config_error(make_project, value) -> None:
    with pytest.raises(ConfigError, match="OPENCODE_CONFIG_CONTENT"):
        _ = make_project(extra_env={"OPENCODE_CONFIG_CONTENT": value}).config


def test_config_get_and_positive_int() -> None:
    config = Config(data={"tool_output": {"max_lines": 5, "max_bytes": 0}, "model": "m"})

    assert config.get("tool_output.max_lines") == 5
    assert config.get("model") == "m"
    assert config.get("model.sub", "dflt") == "dflt"
    assert config.get("missing.key") is None
    assert config.positive_int("tool_output.max_lines") == 5
    assert config.positive_int("tool_output.nothing") is None
    with pytest.raises(ConfigError, match=r"tool_output.max_bytes"):
        config.positive_int("tool_output.max_bytes")


def test_config_files_lists_candidates_without_duplicates(project_dir: Path, env) -> None:
    env = {**env, "OPENCODE_CONFIG_DIR": str(project_dir / ".opencode")}

    files = config_files(project_dir, project_dir, env)
    paths = [p for _, p in files]

    assert len(paths) == len(set(paths))
    names = ("config.json", "opencode.json", "opencode.jsonc", "opencode.toml")
    assert paths[:4] == [Path(env["XDG_CONFIG_HOME"]) / "opencode" / name for name in names]


# -- parse_value -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        ("-3", -3),
        ("1.5", 1.5),
        ("true", True),
        ("false", False),
        ('"quoted"', "quoted"),
        ('"5"', "5"),
        ("[1, 2]", [1, 2]),
        ('{a = 1, b = "x"}', {"a": 1, "b": "x"}),
        ("README.md", "README.md"),
        ("gpt-5", "gpt-5"),
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("hello world", "hello world"),
        ("", ""),
        ("True", "True"),
        ("1\nother = 2", "1\nother = 2"),
        ('"a"\n[table]', '"a"\n[table]'),
    ],
)
def test_parse_value_examples(text, expected) -> None:
    value = parse_value(text)
    assert value == expected
    assert type(value) is type(expected)


scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
)
literals = scalars | st.lists(scalars, max_size=5) | st.dictionaries(st.text(max_size=5), scalars, max_size=3)


def toml_literal(value) -> str:
    if isinstance(value, dict):  # tomli-w writes a top-level table; build the inline form by hand
        items = ", ".join(f"{tomli_w.dumps({k: v}).strip()}" for k, v in value.items())
        return "{" + items + "}" if items else "{}"
    return tomli_w.dumps({"v": value})[len("v = ") :].rstrip("\n")


@settings(max_examples=300, deadline=None)
@given(literals)
def test_parse_value_round_trips_toml_literals(value) -> None:
    parsed = parse_value(toml_literal(value))

    if isinstance(value, float) and math.isinf(value):
        assert parsed == value
    else:
        assert parsed == value
        assert type(parsed) is type(value)


@settings(max_examples=200, deadline=None)
@given(first=scalars, key=st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), second=scalars)
def test_parse_value_with_extra_keys_stays_a_string(first, key, second) -> None:
    text = f"{toml_literal(first)}\n{key} = {toml_literal(second)}"

    assert parse_value(text) == text


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_./-]*( [A-Za-z0-9_./-]+)*", fullmatch=True))
def test_parse_value_keeps_non_literals_as_strings(text) -> None:
    if text in {"true", "false", "inf", "nan"}:
        return
    assert parse_value(text) == text


# -- set_key ---------------------------------------------------------------------------------------------


def test_set_key_creates_file_and_tables(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "opencode.toml"

    set_key(path, "tool_output.max_lines", 10)
    set_key(path, "agent.review.permission.bash", "deny")

    assert tomllib.loads(path.read_text()) == {
        "tool_output": {"max_lines": 10},
        "agent": {"review": {"permission": {"bash": "deny"}}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_set_key_keeps_other_keys_and_their_order(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text('model = "a"\n[permission]\nbash = "ask"\nedit = "deny"\n')

    set_key(path, "permission.bash", "allow")
    set_key(path, "permission.read", "ask")

    data = tomllib.loads(path.read_text())
    assert data["model"] == "a"
    assert list(data["permission"].items()) == [("bash", "allow"), ("edit", "deny"), ("read", "ask")]


def test_set_key_keeps_the_file_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text('model = "a"\n')
    os.chmod(path, 0o600)
    inode_before = path.stat().st_ino

    set_key(path, "model", "b")

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {"model": "b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.toml"]
    # written through a rename, not in place
    assert path.stat().st_ino != inode_before


HAND_WRITTEN = """\
# my project's settings
model = "a"  # the default

[permission]   # who may do what
bash = "ask"

# servers
[mcp.files]
type = "local"
command = ["npx", "server-filesystem", "."]  # pinned elsewhere
"""


def test_set_key_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text(HAND_WRITTEN)

    set_key(path, "model", "b")
    set_key(
        path, "mcp.time", {"type": "local", "command": ["uvx", "mcp-server-time"], "environment": {"A": "1"}}
    )

    text = path.read_text()
    assert text.startswith(HAND_WRITTEN.replace('model = "a"', 'model = "b"'))  # every line kept, in place
    assert tomllib.loads(text)["mcp"]["time"] == {
        "type": "local",
        "command": ["uvx", "mcp-server-time"],
        "environment": {"A": "1"},
    }
    assert "[mcp.time]" in text and "\n[mcp]\n" not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.toml"]  # no backup needed


def test_set_key_through_a_non_table_is_an_error_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text('model = "a"\n')

    with pytest.raises(ConfigError, match="'model' is not a table"):
        set_key(path, "model.sub", 1)
    assert path.read_text() == 'model = "a"\n'


def test_set_key_unserialisable_value_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text('model = "a"\n')

    with pytest.raises(TypeError):
        set_key(path, "model", object())
    assert path.read_text() == 'model = "a"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.toml"]


def test_set_key_on_malformed_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "opencode.toml"
    path.write_text("model = = 1\n")

    with pytest.raises(ConfigError, match="line 1"):
        set_key(path, "model", "b")
