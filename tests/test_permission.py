"""Permission rules: wildcard, from_config, merge, evaluate, disabled (core spec §8, §11.9-§11.11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opencode_cli import paths
from opencode_cli.agents import Agent, build_agents
from opencode_cli.errors import ConfigError
from opencode_cli.permission import Rule, disabled, evaluate, from_config, match, merge, permission_key

HOME = "/home/tester"


def rules(config) -> list[Rule]:
    return from_config(config, HOME)


def action(permission: str, pattern: str, *rulesets) -> str:
    return evaluate(permission, pattern, *rulesets).action


# -- wildcard (§11.10) -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        ("file1.txt", "file?.txt", True),
        ("file12.txt", "file?.txt", False),
        ("foo+bar", "foo+bar", True),
        ("foooobar", "foo+bar", False),
        ("ls", "ls *", True),
        ("ls -la", "ls *", True),
        ("ls foo bar", "ls *", True),
        ("lstmeval", "ls *", False),
        ("ls", "ls*", True),
        ("lstmeval", "ls*", True),
        ("git", "git *", True),
        ("git status", "git *", True),
        ("git commit -m foo", "git *", True),
        ("gitk", "git *", False),
        ("C:\\Windows\\System32\\cmd.exe", "C:/Windows/System32/*", True),
        ("C:/Windows/System32/cmd.exe", "C:\\Windows\\System32\\*", True),
        ("/users/test/file", "/Users/test/*", False),
        ("/Users/test/file", "/Users/test/*", True),
        ("src/deep/nested/file.ts", "src/*", True),  # * crosses /
        ("a/b", "a?b", True),  # ? matches / as well
        ("echo a\nb", "echo *", True),  # DOTALL
        ("a.b", "a.b", True),
        ("axb", "a.b", False),
        ("^(x)|[y]{z}$", "^(x)|[y]{z}$", True),
        ("x", "^(x)|[y]{z}$", False),
        ("anything at all", "*", True),
        ("", "*", True),
        ("", "?", False),
        ("mcp_weather", "mcp_*", True),
        ("mcp", "mcp_*", False),
    ],
)
def test_wildcard(value, pattern, expected) -> None:
    assert match(value, pattern) is expected


plain = st.text(
    alphabet=st.characters(blacklist_characters="*?\\", blacklist_categories=("Cs",)), max_size=20
)


@settings(max_examples=300, deadline=None)
@given(pattern=plain, other=plain)
def test_pattern_without_metacharacters_matches_exactly_itself(pattern: str, other: str) -> None:
    assert match(pattern, pattern)
    assert match(other, pattern) is (other == pattern)


@settings(max_examples=100, deadline=None)
@given(prefix=plain, rest=st.text(max_size=20))
def test_star_suffix_matches_any_continuation(prefix: str, rest: str) -> None:
    assert match(prefix + rest.replace("\\", "/"), prefix + "*")


# -- from_config (§11.9) ---------------------------------------------------------------------------------


def test_from_config_string_value() -> None:
    assert rules({"bash": "allow"}) == [Rule("bash", "*", "allow")]


def test_from_config_object_value_keeps_order() -> None:
    assert rules({"bash": {"*": "deny", "git *": "allow", "git push *": "ask"}}) == [
        Rule("bash", "*", "deny"),
        Rule("bash", "git *", "allow"),
        Rule("bash", "git push *", "ask"),
    ]


def test_from_config_mixed_keys_keep_order() -> None:
    assert rules({"read": "allow", "bash": {"ls *": "allow"}, "edit": "deny"}) == [
        Rule("read", "*", "allow"),
        Rule("bash", "ls *", "allow"),
        Rule("edit", "*", "deny"),
    ]


def test_from_config_empty() -> None:
    assert rules({}) == []


def test_from_config_whole_string() -> None:
    assert rules("allow") == [Rule("*", "*", "allow")]


@pytest.mark.parametrize(
    ("pattern", "expanded"),
    [
        ("~/projects/*", f"{HOME}/projects/*"),
        ("$HOME/projects/*", f"{HOME}/projects/*"),
        ("$HOME", HOME),
        ("~", HOME),
        ("/some/~/path", "/some/~/path"),
        ("x$HOME", "x$HOME"),
        ("~user/x", "~user/x"),
    ],
)
def test_from_config_expands_home(pattern, expanded) -> None:
    assert rules({"external_directory": {pattern: "allow"}}) == [
        Rule("external_directory", expanded, "allow")
    ]


def test_expanded_home_patterns_match_home_paths() -> None:
    ruleset = rules({"external_directory": {"~/projects/*": "allow", "$HOME/secret/*": "deny"}})

    assert action("external_directory", f"{HOME}/projects/app/main.py", ruleset) == "allow"
    assert action("external_directory", f"{HOME}/secret/key", ruleset) == "deny"
    assert action("external_directory", "/etc/passwd", ruleset) == "ask"


@pytest.mark.parametrize(
    "config",
    [{"bash": "sometimes"}, {"bash": {"*": "yes"}}, {"bash": 1}, {"bash": ["allow"]}],
)
def test_from_config_rejects_bad_values(config) -> None:
    with pytest.raises(ValueError, match=r"permission.bash"):
        rules(config)


def test_top_level_order_is_preserved() -> None:
    deny_first = rules({"*": "deny", "bash": "allow"})
    allow_first = rules({"bash": "allow", "*": "deny"})

    assert action("bash", "ls", deny_first) == "allow"
    assert action("ls", "x", deny_first) == "deny"
    assert action("bash", "ls", allow_first) == "deny"


def test_order_is_not_sorted_by_specificity() -> None:
    ruleset = rules({"*": "ask", "bash": "allow"})

    assert action("edit", "x", ruleset) == "ask"
    assert action("bash", "x", ruleset) == "allow"
    assert [r.permission for r in rules({"bash": "allow", "*": "ask", "edit": "deny", "mcp_*": "ask"})] == [
        "bash",
        "*",
        "edit",
        "mcp_*",
    ]


def test_bash_patterns() -> None:
    ruleset = rules({"bash": {"*": "deny", "git *": "allow"}})

    assert action("bash", "rm foo", ruleset) == "deny"
    assert action("bash", "git status", ruleset) == "allow"


def test_documented_example() -> None:
    ruleset = rules({"*": "ask", "bash": "allow", "edit": "deny"})

    assert action("bash", "ls", ruleset) == "allow"
    assert action("edit", "a.py", ruleset) == "deny"
    assert action("read", "a.py", ruleset) == "ask"


# -- merge -----------------------------------------------------------------------------------------------


def test_merge_concatenates_in_order() -> None:
    a = [Rule("bash", "*", "allow")]
    b = [Rule("edit", "*", "deny"), Rule("bash", "*", "deny")]

    assert merge(a, b) == a + b
    assert merge(a, []) == a
    assert merge([], a) == a
    assert merge() == []


def test_merge_defaults_then_config() -> None:
    defaults = [Rule("*", "*", "ask")]
    config = rules({"bash": "allow"})

    merged = merge(defaults, config)

    assert action("bash", "ls", merged) == "allow"
    assert action("edit", "x", merged) == "ask"
    assert action("bash", "ls", merge([Rule("*", "*", "allow")], rules({"bash": "ask"}))) == "ask"


# -- evaluate --------------------------------------------------------------------------------------------


def test_evaluate_exact_and_wildcard() -> None:
    assert action("bash", "ls", [Rule("bash", "ls", "allow")]) == "allow"
    assert action("bash", "ls -la", [Rule("bash", "ls *", "allow")]) == "allow"
    assert action("edit", "src/foo.ts", [Rule("edit", "src/*", "allow")]) == "allow"
    assert action("edit", "lib/foo.ts", [Rule("edit", "src/*", "allow")]) == "ask"


def test_evaluate_last_match_wins_both_orders() -> None:
    assert action("bash", "rm x", [Rule("bash", "*", "allow"), Rule("bash", "rm *", "deny")]) == "deny"
    assert action("bash", "rm x", [Rule("bash", "rm *", "deny"), Rule("bash", "*", "allow")]) == "allow"


def test_evaluate_last_matching_glob_wins() -> None:
    ruleset = [Rule("edit", "src/*", "deny"), Rule("edit", "src/components/*", "allow")]

    assert action("edit", "src/components/a.tsx", ruleset) == "allow"
    assert action("edit", "src/a.ts", ruleset) == "deny"


@pytest.mark.parametrize(
    "ruleset",
    [[], [Rule("bash", "*", "allow")], [Rule("edit", "src/*", "deny")]],
)
def test_evaluate_defaults_to_ask(ruleset) -> None:
    found = evaluate("webfetch", "https://x", ruleset)
    assert found == Rule("webfetch", "*", "ask")
    assert action("edit", "lib/x", [Rule("edit", "src/*", "deny")]) == "ask"


def test_evaluate_exact_after_wildcard_and_vice_versa() -> None:
    assert action("bash", "ls", [Rule("bash", "*", "deny"), Rule("bash", "ls", "allow")]) == "allow"
    assert action("bash", "ls", [Rule("bash", "ls", "allow"), Rule("bash", "*", "deny")]) == "deny"


def test_star_permission_matches_any_permission() -> None:
    assert action("anything", "x", [Rule("*", "*", "deny")]) == "deny"
    assert action("bash", "rm", [Rule("*", "rm", "deny")]) == "deny"
    assert action("bash", "ls", [Rule("*", "rm", "deny")]) == "ask"


def test_glob_permission() -> None:
    ruleset = [Rule("mcp_*", "*", "allow")]

    assert action("mcp_weather", "x", ruleset) == "allow"
    assert action("bash", "x", ruleset) == "ask"


def test_deny_all_then_specific_allows() -> None:
    assert action("bash", "ls", [Rule("*", "*", "deny"), Rule("bash", "*", "allow")]) == "allow"
    ruleset = [Rule("*", "*", "deny"), Rule("edit", "src/*", "allow")]
    assert action("edit", "src/foo.ts", ruleset) == "allow"
    assert action("edit", "lib/foo.ts", ruleset) == "deny"


def test_layered_mcp_rules() -> None:
    ruleset = [Rule("*", "*", "ask"), Rule("mcp_*", "*", "allow"), Rule("mcp_dangerous", "*", "deny")]

    assert action("mcp_dangerous", "x", ruleset) == "deny"
    assert action("mcp_safe", "x", ruleset) == "allow"
    assert action("unknown_tool", "x", ruleset) == "ask"


def test_later_deny_all_overrides_earlier_allow() -> None:
    assert action("bash", "ls", [Rule("bash", "*", "allow"), Rule("*", "*", "deny")]) == "deny"


def test_multiple_rulesets_are_searched_in_order() -> None:
    config = [Rule("bash", "*", "allow")]
    approved = [Rule("bash", "rm *", "deny")]

    assert action("bash", "rm -rf /", config, approved) == "deny"
    assert action("bash", "ls", config, approved) == "allow"


# -- disabled --------------------------------------------------------------------------------------------

TOOLS = ["bash", "read", "edit", "write", "apply_patch", "glob", "webfetch"]


def test_disabled_nothing_when_all_allowed() -> None:
    assert disabled(TOOLS, [Rule("*", "*", "allow")]) == set()


def test_disabled_single_tool() -> None:
    assert disabled(TOOLS, [Rule("bash", "*", "deny")]) == {"bash"}


def test_disabled_edit_hides_write_and_apply_patch() -> None:
    assert disabled(TOOLS, [Rule("edit", "*", "deny")]) == {"edit", "write", "apply_patch"}
    assert permission_key("write") == permission_key("apply_patch") == "edit"
    assert permission_key("read_mcp_resource") == "read"


def test_disabled_ignores_pattern_specific_denies() -> None:
    assert disabled(TOOLS, [Rule("bash", "*", "allow"), Rule("bash", "rm *", "deny")]) == set()
    # a tool denied with "*" but allowed for some pattern stays visible
    assert disabled(TOOLS, [Rule("bash", "*", "deny"), Rule("bash", "echo *", "allow")]) == set()


def test_disabled_ask_is_not_disabled() -> None:
    assert disabled(TOOLS, [Rule("*", "*", "ask")]) == set()


def test_disabled_specific_allow_after_wildcard_deny() -> None:
    assert disabled(["bash"], [Rule("*", "*", "deny"), Rule("bash", "*", "allow")]) == set()
    assert disabled(["bash"], [Rule("bash", "*", "deny"), Rule("*", "*", "allow")]) == set()


def test_disabled_several_and_all() -> None:
    assert disabled(TOOLS, [Rule("bash", "*", "deny"), Rule("webfetch", "*", "deny")]) == {"bash", "webfetch"}
    assert disabled(TOOLS, [Rule("*", "*", "deny")]) == set(TOOLS)
    assert disabled(TOOLS, [Rule("*", "*", "deny"), Rule("bash", "*", "allow")]) == set(TOOLS) - {"bash"}


# -- agents (§8.6, §11.11) -------------------------------------------------------------------------------


def test_explore_agent_external_directory(make_project) -> None:
    project = make_project()
    explore = project.generation.agent("explore")
    glob = project.generation.truncator.glob

    assert action("external_directory", "/some/other/path", explore.permission) == "ask"
    assert action("external_directory", glob, explore.permission) == "allow"
    spill = os.path.join(str(project.generation.truncator.directory), "tool_abc")
    assert action("external_directory", spill, explore.permission) == "allow"
    agent_work = os.path.join(str(paths.tmp_dir()), "agent-work")
    assert action("external_directory", agent_work, explore.permission) == "allow"


def test_truncation_glob_stays_allowed_when_external_directory_is_denied(
    make_project, project_dir, write_file
) -> None:
    write_file(project_dir / "opencode.toml", '[permission]\nexternal_directory = "deny"\n')
    project = make_project()
    directory = str(project.generation.truncator.directory)

    glob = project.generation.truncator.glob
    for agent in project.generation.agents.values():
        assert action("external_directory", glob, agent.permission) == "allow", agent.name
        assert action("external_directory", directory, agent.permission) == "deny", agent.name
        assert action("external_directory", "/some/other/path", agent.permission) == "deny", agent.name
        # the exemption is the last rule
        assert agent.permission[-1] == Rule("external_directory", project.generation.truncator.glob, "allow")


def test_explicit_deny_of_the_glob_opts_out_of_the_exemption(make_project, project_dir, env) -> None:
    glob = str(Path(env["XDG_DATA_HOME"]) / "opencode" / "tool-output" / "*")
    (project_dir / "opencode.toml").write_text(f'[permission.external_directory]\n"{glob}" = "deny"\n')
    project = make_project()

    assert project.generation.truncator.glob == glob
    assert action("external_directory", glob, project.generation.agent("build").permission) == "deny"


def test_per_agent_tools_false_denies_edit(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", "[agent.build.tools]\nwrite = false\n")
    project = make_project()

    assert action("edit", "x.py", project.generation.agent("build").permission) == "deny"
    assert action("edit", "x.py", project.generation.agent("general").permission) == "allow"
    assert {"edit", "write", "apply_patch"} <= disabled(TOOLS, project.generation.agent("build").permission)


def test_global_legacy_tools_and_permission_precedence(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / "opencode.toml",
        """
        [tools]
        bash = false
        webfetch = true

        [permission]
        bash = { "git *" = "allow" }
        """,
    )
    build = make_project().generation.agent("build").permission

    assert action("bash", "rm x", build) == "deny"
    assert action("bash", "git status", build) == "allow"  # explicit permission entries win
    assert action("webfetch", "https://x", build) == "allow"


def test_user_and_agent_permission_order(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / "opencode.toml",
        """
        [permission]
        bash = "deny"

        [agent.build.permission]
        bash = "allow"
        """,
    )
    project = make_project()

    assert action("bash", "ls", project.generation.agent("build").permission) == "allow"
    assert action("bash", "ls", project.generation.agent("plan").permission) == "deny"


def test_default_read_rules(make_project) -> None:
    build = make_project().generation.agent("build").permission

    assert action("read", "src/app.py", build) == "allow"
    assert action("read", ".env", build) == "ask"
    assert action("read", "config/.env.local", build) == "ask"
    assert action("read", ".env.example", build) == "allow"
    assert action("question", "*", build) == "allow"
    assert action("question", "*", make_project().generation.agent("general").permission) == "deny"


def test_task_capable() -> None:
    assert Agent("a", "primary", permission=[Rule("*", "*", "allow")]).task_capable is True
    assert Agent("a", "primary", permission=[]).task_capable is True  # unknown -> ask counts as capable
    assert Agent("a", "primary", permission=[Rule("task", "*", "deny")]).task_capable is False
    assert Agent("a", "primary", permission=[Rule("*", "*", "deny")]).task_capable is False
    assert Agent("a", "primary", permission=[Rule("task", "general", "deny")]).task_capable is True


def test_builtin_agents_task_capability(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / "opencode.toml", '[agent.reviewer]\nmode = "subagent"\npermission = { task = "deny" }\n'
    )
    agents = make_project().generation.agents

    assert agents["build"].task_capable is True
    assert agents["plan"].task_capable is True
    assert agents["explore"].task_capable is False
    assert agents["reviewer"].task_capable is False
    assert agents["reviewer"].mode == "subagent"
    assert agents["reviewer"].builtin is False


def test_bad_permission_in_config_is_a_config_error(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", '[permission]\nbash = "sometimes"\n')

    with pytest.raises(ConfigError, match="permission"):
        _ = make_project().generation.agents


def test_bad_agent_mode_is_a_config_error(make_project, project_dir, write_file) -> None:
    write_file(project_dir / "opencode.toml", '[agent.x]\nmode = "boss"\n')

    with pytest.raises(ConfigError, match=r"agent.x.mode"):
        _ = make_project().generation.agents


def test_unknown_agent_suggests_names(make_project) -> None:
    with pytest.raises(ConfigError, match="did you mean explore"):
        make_project().generation.agent("explor")


def test_build_agents_directly(tmp_path: Path) -> None:
    glob = str(tmp_path / "out" / "*")

    agents = build_agents({}, home=HOME, truncate_glob=glob, data_dir=tmp_path)

    assert list(agents) == ["build", "plan", "general", "explore"]
    plan = agents["plan"].permission
    assert action("edit", "src/a.py", plan) == "deny"
    assert action("edit", str(tmp_path / "plans" / "x.md"), plan) == "allow"
    assert action("task", "general", plan) == "deny"
    assert action("todowrite", "*", agents["general"].permission) == "deny"


def test_build_agents_with_a_root_allows_the_global_plans_relative_to_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    agents = build_agents({}, home=HOME, truncate_glob="/t/*", data_dir=tmp_path / "data", root=root)
    plan = agents["plan"].permission
    assert action("edit", "../data/plans/x.md", plan) == "allow"
    assert action("edit", ".opencode/plans/x.md", plan) == "allow"
    assert action("edit", str(tmp_path / "data" / "plans" / "x.md"), plan) == "deny"
    assert action("edit", "../data/plans/x.txt", plan) == "deny"


# -- how a rule prints: the key order of OpenCode's config loader -------------------------------------


PERMISSION_ACTION_PATTERN = ["permission", "action", "pattern"]
PERMISSION_PATTERN_ACTION = ["permission", "pattern", "action"]


def test_a_string_value_prints_its_action_before_its_pattern() -> None:
    (rule,) = rules({"bash": "allow"})
    assert list(rule.as_dict()) == PERMISSION_ACTION_PATTERN
    assert rule.as_dict() == {"permission": "bash", "action": "allow", "pattern": "*"}


def test_a_pattern_table_prints_its_pattern_before_its_action() -> None:
    ruleset = rules({"bash": {"*": "deny", "git *": "allow"}})
    assert [list(rule.as_dict()) for rule in ruleset] == [PERMISSION_PATTERN_ACTION] * 2


def test_a_whole_string_config_is_the_short_form() -> None:
    (rule,) = rules("deny")
    assert list(rule.as_dict()) == PERMISSION_ACTION_PATTERN


def test_the_form_does_not_change_equality_hashing_or_matching() -> None:
    short, table = rules({"bash": "allow"})[0], rules({"bash": {"*": "allow"}})[0]
    assert short == table == Rule("bash", "*", "allow")
    assert hash(short) == hash(table)
    assert evaluate("bash", "ls", [short]) == evaluate("bash", "ls", [table])
    assert list(Rule("bash", "*", "allow").as_dict()) == PERMISSION_PATTERN_ACTION


def test_the_form_survives_merge_and_a_round_trip_through_a_dict() -> None:
    merged = merge(rules({"read": "allow"}), rules({"read": {"*.env": "ask"}}))
    assert [list(rule.as_dict()) for rule in merged] == [PERMISSION_ACTION_PATTERN, PERMISSION_PATTERN_ACTION]
    again = [Rule.from_dict(rule.as_dict(), "stored") for rule in merged]
    assert again == merged
    assert [rule.as_dict() for rule in again] == [rule.as_dict() for rule in merged]
    assert [list(rule.as_dict()) for rule in again] == [PERMISSION_ACTION_PATTERN, PERMISSION_PATTERN_ACTION]
    assert again[0].source == "stored"


def test_builtin_defaults_print_as_they_are_written(tmp_path: Path) -> None:
    agents = build_agents({}, home=HOME, truncate_glob="/t/*", data_dir=tmp_path)
    printed = [rule.as_dict() for rule in agents["build"].permission]
    assert printed[0] == {"permission": "*", "action": "allow", "pattern": "*"}
    assert list(printed[0]) == PERMISSION_ACTION_PATTERN
    reads = [rule for rule in printed if rule["permission"] == "read"]
    assert [list(rule) for rule in reads] == [PERMISSION_PATTERN_ACTION] * 4
    by_key = {(rule["permission"], rule["pattern"]): list(rule) for rule in printed}
    assert by_key[("doom_loop", "*")] == PERMISSION_ACTION_PATTERN
    assert by_key[("question", "*")] == PERMISSION_ACTION_PATTERN
    assert by_key[("external_directory", "*")] == PERMISSION_PATTERN_ACTION
    # the truncation exemption is built as an object literal {permission, pattern, action}
    assert printed[-1] == {"permission": "external_directory", "pattern": "/t/*", "action": "allow"}
    assert list(printed[-1]) == PERMISSION_PATTERN_ACTION
    plan = [rule.as_dict() for rule in agents["plan"].permission if rule.permission in ("task", "plan_exit")]
    assert plan == [
        {"permission": "plan_exit", "action": "deny", "pattern": "*"},
        {"permission": "plan_exit", "action": "allow", "pattern": "*"},
        {"permission": "task", "pattern": "general", "action": "deny"},
    ]
    assert [list(rule) for rule in plan] == [PERMISSION_ACTION_PATTERN] * 2 + [PERMISSION_PATTERN_ACTION]


def test_config_and_legacy_tools_print_as_written(make_project, project_dir, write_file) -> None:
    write_file(
        project_dir / "opencode.toml",
        """
        [tools]
        webfetch = false

        [permission]
        bash = "ask"
        edit = { "src/*" = "deny" }
        """,
    )
    build = make_project().generation.agent("build").permission
    printed = {rule.source: list(rule.as_dict()) for rule in build if rule.permission in ("webfetch", "edit")}
    assert printed == {"config tools": PERMISSION_ACTION_PATTERN, "permission": PERMISSION_PATTERN_ACTION}
    bash = [rule.as_dict() for rule in build if rule.permission == "bash"]
    assert bash == [{"permission": "bash", "action": "ask", "pattern": "*"}]
    assert list(bash[0]) == PERMISSION_ACTION_PATTERN
