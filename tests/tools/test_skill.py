"""The built-in ``skill`` tool and skill discovery (builtin-tools spec §13; test list "skill.test.ts" in §17;
core spec §5.3 for the external_directory allowlist)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _harness import Recorder
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import Project
from opencode_cli.errors import ConfigError, DeniedError, ToolError
from opencode_cli.permission import Rule
from opencode_cli.skills import (
    BUILTIN,
    FrontMatterError,
    SkillFileError,
    discover,
    parse,
    parse_yaml,
    split_front_matter,
)


def skill_file(folder: Path, name: str | None, description: str | None = None, body: str = "") -> Path:
    """Write ``folder/SKILL.md`` with the given front matter fields."""
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    lines.append("---")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
    return path


@pytest.fixture
def root(project_dir: Path) -> Path:
    """The project directory, without building the project (so skills can be written before it is)."""
    return project_dir


def run(project: Project, name: str, **options: Any) -> Any:
    return project.run_tool("skill", {"name": name}, **options)


def names(project: Project) -> list[str]:
    return project.generation.skills.names()


# -- skill.test.ts ---------------------------------------------------------------------------------------


def test_loads_a_project_skill_with_its_files(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skill" / "tool-skill"
    skill_file(folder, "tool-skill", "Skill for tool tests.", "\n# Tool Skill\n\nUse this skill.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "demo.txt").write_text("demo\n")
    prompt = Recorder()
    result = run(project, "tool-skill", prompt=prompt, rules=[Rule("skill", "*", "ask")])
    [request] = prompt.requests
    assert request.permission == "skill"
    assert "tool-skill" in request.patterns and "tool-skill" in request.always
    assert request.metadata == {}
    assert result.metadata["dir"] == str(folder)
    assert '<skill_content name="tool-skill">' in result.output
    assert f"Base directory for this skill: {folder}" in result.output
    assert f"<file>{folder}/scripts/demo.txt</file>" in result.output


def test_description_lists_the_skills(project: Project, root: Path) -> None:
    # Deliberate difference from upstream skill.test.ts, which checks that the description does NOT name
    # the skill: upstream lists skills in the system prompt, which this package does not have, so the list
    # goes in the description (as upstream did in v1.2).
    skill_file(root / ".opencode" / "skill" / "tool-skill", "tool-skill", "Skill for tool tests.")
    description = project.registry.get("skill").tool.description
    assert "<available_skills>" in description
    assert "<name>tool-skill</name>" in description
    assert "<description>Skill for tool tests.</description>" in description
    location = (root / ".opencode" / "skill" / "tool-skill" / "SKILL.md").as_uri()
    assert f"<location>{location}</location>" in description
    # the loaded tool agrees with the listing
    assert project.registry.get("skill").tool.load().description == description


def test_unknown_skill_fails_before_asking(project: Project) -> None:
    prompt = Recorder()
    with pytest.raises(ToolError) as caught:
        run(project, "missing-skill", prompt=prompt, rules=[Rule("skill", "*", "ask")])
    assert 'Skill "missing-skill" not found.' in str(caught.value)
    assert str(caught.value) == 'Skill "missing-skill" not found. Available skills: customize-opencode'
    assert prompt.requests == []


# -- output ----------------------------------------------------------------------------------------------


def test_output_is_exactly_the_skill_content_block(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skills" / "fmt"
    skill_file(folder, "fmt", "Formats things.", "\n\n  Do the thing.\n\nThen stop.\n\n\n")
    (folder / "ref.md").write_text("x")
    result = run(project, "fmt")
    assert result.output == "\n".join(
        [
            '<skill_content name="fmt">',
            "# Skill: fmt",
            "",
            "Do the thing.\n\nThen stop.",
            "",
            f"Base directory for this skill: {folder}",
            "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.",
            "Note: file list is sampled.",
            "",
            "<skill_files>",
            f"<file>{folder}/ref.md</file>",
            "</skill_files>",
            "</skill_content>",
        ]
    )
    assert result.title == "Loaded skill: fmt"
    assert result.metadata == {"name": "fmt", "dir": str(folder), "truncated": False}


def test_a_skill_without_other_files_has_an_empty_list(project: Project, root: Path) -> None:
    skill_file(root / ".opencode" / "skill" / "alone", "alone", "Alone.", "Body")
    output = run(project, "alone").output
    assert "<skill_files>\n\n</skill_files>" in output


def test_file_sample_is_capped_and_skips_skill_md_and_git(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skill" / "many"
    skill_file(folder, "many", "Many files.")
    for index in range(15):
        (folder / f"file{index:02}.txt").write_text("x")
    (folder / ".hidden").write_text("x")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("x")
    (folder / "nested").mkdir()
    skill_file(folder / "nested", "nested-skill", "Inside another skill.")
    files = [line for line in run(project, "many").output.splitlines() if line.startswith("<file>")]
    assert len(files) == 10
    assert not any(line.endswith("SKILL.md</file>") or "/.git/" in line for line in files)
    assert files == sorted(files)


def test_hidden_files_are_sampled(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skill" / "dots"
    skill_file(folder, "dots", "Dots.")
    (folder / ".env.example").write_text("x")
    assert f"<file>{folder}/.env.example</file>" in run(project, "dots").output


def test_builtin_skill_loads_without_a_directory(project: Project) -> None:
    result = run(project, "customize-opencode")
    assert result.metadata["dir"] == "<built-in>"
    assert result.output.startswith(
        '<skill_content name="customize-opencode">\n# Skill: customize-opencode\n'
    )
    assert "opencode.toml" in result.output
    assert "<skill_files>\n\n</skill_files>" in result.output
    assert BUILTIN.description and BUILTIN.description in project.registry.get("skill").tool.description


def test_a_project_skill_may_replace_the_builtin_one(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skill" / "custom"
    skill_file(folder, "customize-opencode", "Our own guide.", "Ours.")
    assert "Ours." in run(project, "customize-opencode").output
    assert project.generation.skills.problems == []  # replacing the built-in one is not a problem


def test_skill_permission_rules_apply_to_the_name(make_project: Any, root: Path, project_dir: Path) -> None:
    skill_file(root / ".opencode" / "skill" / "secret", "secret", "Secret.")
    skill_file(root / ".opencode" / "skill" / "open", "open", "Open.")
    (project_dir / "opencode.toml").write_text('[permission]\nskill = { "secret" = "deny" }\n')
    project = make_project()
    with pytest.raises(DeniedError):
        run(project, "secret")
    assert run(project, "open").title == "Loaded skill: open"


def test_skills_without_a_description_are_warned_about_and_not_loadable(
    project: Project, root: Path, warnings: Any
) -> None:
    # Deliberate difference from upstream, which loads such a skill by name though it never lists it: the
    # description tells the model that only the listed skills can be loaded, and so it is.
    path = skill_file(root / ".opencode" / "skill" / "quiet", "quiet", None, "Quiet body")
    assert "quiet" not in names(project)
    assert "<name>quiet</name>" not in project.registry.get("skill").tool.description
    with pytest.raises(ToolError, match=r'Skill "quiet" not found. Available skills: customize-opencode$'):
        run(project, "quiet")
    assert list(warnings) == [
        f'skill skipped: {path}: front matter field "description" is missing (when to use the skill, a '
        "string); without it the skill is not listed for the model, so it cannot be loaded"
    ]


def test_the_tool_finds_skills_from_the_context(project: Project, root: Path, env: dict[str, str]) -> None:
    from opencode_cli.tools import skill as skill_module

    skill_file(root / ".opencode" / "skill" / "ctx-skill", "ctx-skill", "From the context.")
    definition = skill_module.init()
    ctx = project.session().context("skill", None)
    ctx.env = env
    result = asyncio.run(definition["execute"](skill_module.parameters()(name="ctx-skill"), ctx))
    assert result.metadata["dir"] == str(root / ".opencode" / "skill" / "ctx-skill")


# -- discovery -------------------------------------------------------------------------------------------


def test_every_documented_location_is_searched(
    make_project: Any, root: Path, home: Path, global_config_dir: Path, tmp_path: Path
) -> None:
    config_dir = tmp_path / "config-dir"
    listed = tmp_path / "listed"
    in_home = home / "my-skills"
    skill_file(root / ".opencode" / "skill" / "a", "project-skill", "d")
    skill_file(root / ".opencode" / "skills" / "b", "project-skills", "d")
    skill_file(root / ".claude" / "skills" / "c", "project-claude", "d")
    skill_file(root / ".agents" / "skills" / "d", "project-agents", "d")
    skill_file(home / ".claude" / "skills" / "e", "home-claude", "d")
    skill_file(home / ".agents" / "skills" / "f", "home-agents", "d")
    skill_file(global_config_dir / "skills" / "g", "global-config", "d")
    skill_file(global_config_dir / "skill" / "h", "global-config-singular", "d")
    skill_file(config_dir / "skill" / "i", "config-dir", "d")
    skill_file(listed / "j", "listed-relative", "d")
    skill_file(in_home / "k", "listed-home", "d")
    skill_file(root / ".opencode" / "skill" / "deep" / "er" / "still", "deeply-nested", "d")
    relative = os.path.relpath(listed, root)
    (root / "opencode.toml").write_text(f'[skills]\npaths = ["{relative}", "~/my-skills"]\n')
    project = make_project(extra_env={"OPENCODE_CONFIG_DIR": str(config_dir)})
    assert names(project) == sorted(
        [
            "customize-opencode",
            "project-skill",
            "project-skills",
            "project-claude",
            "project-agents",
            "home-claude",
            "home-agents",
            "global-config",
            "global-config-singular",
            "config-dir",
            "listed-relative",
            "listed-home",
            "deeply-nested",
        ]
    )
    assert project.generation.skills.problems == []


def test_claude_and_agents_dirs_are_found_from_the_worktree_down(make_project: Any, root: Path) -> None:
    sub = root / "packages" / "app"
    sub.mkdir(parents=True)
    skill_file(root / ".claude" / "skills" / "top", "at-root", "d")
    skill_file(sub / ".agents" / "skills" / "near", "near", "d")
    skill_file(root.parent / ".claude" / "skills" / "above", "above-the-worktree", "d")
    project = make_project(sub)
    assert {"at-root", "near"} <= set(names(project))
    assert "above-the-worktree" not in names(project)


@pytest.mark.parametrize("flag", ["OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS"])
def test_claude_code_flags_hide_claude_skills(make_project: Any, root: Path, home: Path, flag: str) -> None:
    skill_file(root / ".claude" / "skills" / "a", "project-claude", "d")
    skill_file(home / ".claude" / "skills" / "b", "home-claude", "d")
    skill_file(home / ".agents" / "skills" / "c", "home-agents", "d")
    skill_file(root / ".opencode" / "skill" / "d", "project-opencode", "d")
    assert {"project-claude", "home-claude"} <= set(names(make_project()))
    found = names(make_project(extra_env={flag: "1"}))
    assert "project-claude" not in found and "home-claude" not in found
    assert {"home-agents", "project-opencode"} <= set(found)


def test_disable_external_skills_hides_claude_and_agents(make_project: Any, root: Path, home: Path) -> None:
    skill_file(root / ".claude" / "skills" / "a", "project-claude", "d")
    skill_file(home / ".agents" / "skills" / "c", "home-agents", "d")
    skill_file(root / ".opencode" / "skill" / "d", "project-opencode", "d")
    found = names(make_project(extra_env={"OPENCODE_DISABLE_EXTERNAL_SKILLS": "true"}))
    assert found == ["customize-opencode", "project-opencode"]


def test_a_malformed_flag_is_a_config_error(make_project: Any) -> None:
    with pytest.raises(ConfigError, match="OPENCODE_DISABLE_CLAUDE_CODE"):
        make_project(extra_env={"OPENCODE_DISABLE_CLAUDE_CODE": "maybe"}).generation.skills  # noqa: B018


def test_duplicate_names_nearer_config_wins_and_is_reported(project: Project, root: Path, home: Path) -> None:
    far = skill_file(home / ".claude" / "skills" / "dup", "dup", "From home.", "home body")
    near = skill_file(root / ".opencode" / "skill" / "dup", "dup", "From the project.", "project body")
    assert "project body" in run(project, "dup").output
    [problem] = project.generation.skills.problems
    assert f"{near} replaces {far}" in problem and '"dup"' in problem


def test_a_skill_reached_twice_through_a_link_is_loaded_once(project: Project, root: Path) -> None:
    skill_file(root / ".opencode" / "skill" / "real", "linked", "d")
    (root / ".opencode" / "skills").mkdir(parents=True)
    (root / ".opencode" / "skills" / "alias").symlink_to(root / ".opencode" / "skill" / "real")
    assert names(project).count("linked") == 1
    assert project.generation.skills.problems == []


def test_skills_urls_is_reported_as_unsupported(make_project: Any, project_dir: Path) -> None:
    (project_dir / "opencode.toml").write_text('[skills]\nurls = ["https://example.com/skills/"]\n')
    project = make_project()
    assert any("skills.urls" in problem for problem in project.generation.skills.problems)


# -- external_directory allowlist (core spec §5.3) -------------------------------------------------------


def test_skill_directories_are_allowed_outside_the_project(
    make_project: Any, global_config_dir: Path
) -> None:
    folder = global_config_dir / "skills" / "outside"
    skill_file(folder, "outside", "Lives in the global config.")
    (folder / "notes.md").write_text("skill notes\n")
    project = make_project()
    for agent in project.generation.agents.values():
        assert any(
            r.permission == "external_directory" and r.pattern == f"{folder}/*" and r.action == "allow"
            for r in agent.permission
        ), agent.name
    prompt = Recorder()
    result = project.run_tool("read", {"filePath": str(folder / "notes.md")}, prompt=prompt)
    assert "skill notes" in result.output
    assert prompt.requests == []  # no external_directory ask
    # a sibling directory that is no skill's is still asked about
    other = global_config_dir / "elsewhere"
    other.mkdir(parents=True)
    (other / "x.md").write_text("x\n")
    project.run_tool("read", {"filePath": str(other / "x.md")}, prompt=prompt)
    assert [r.permission for r in prompt.requests] == ["external_directory"]


# -- front matter errors name the file and the field -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# no front matter\n", "no front matter"),
        ("---\nname: x\n", "never closed"),
        ("---\ndescription: d\n---\n", 'field "name" is missing'),
        ("---\nname: 42\n---\n", 'field "name" must be a string, not a number (put it in quotes)'),
        ("---\nname: true\n---\n", 'field "name" must be a string, not a boolean'),
        ("---\nname: [a, b]\n---\n", 'field "name" must be a string, not a list'),
        ("---\nname: '  '\n---\n", 'field "name" is empty'),
        ("---\nname: x\n---\n", 'field "description" is missing (when to use the skill, a string)'),
        ("---\nname: x\ndescription: ''\n---\n", 'field "description" is empty'),
        ("---\nname: x\ndescription:\n---\n", 'field "description" must be a string, not empty'),
        ("---\nname: x\ndescription: 3.5\n---\n", 'field "description" must be a string, not a number'),
        ("---\nname: x\nname: y\n---\n", "line 3: the key 'name' appears twice"),
        ('---\nname: "x\\q"\n---\n', "line 2: unknown escape \\q"),
        ('---\nname: "open\n---\n', 'line 2: the " quoted string is never closed'),
        ("---\n- a\n---\n", "line 2: expected 'key: value'"),
    ],
)
def test_frontmatter_errors_name_file_and_field(text: str, expected: str, tmp_path: Path) -> None:
    location = str(tmp_path / "bad" / "SKILL.md")
    with pytest.raises(SkillFileError) as caught:
        parse(text, location)
    message = str(caught.value)
    assert message.startswith(f"{location}: ")
    assert expected in message


def test_bad_skills_are_skipped_and_warned_about(make_project: Any, root: Path, warnings: Any) -> None:
    bad = skill_file(root / ".opencode" / "skill" / "bad", "123", "d")
    nameless = skill_file(root / ".opencode" / "skill" / "nameless", None, "d")
    skill_file(root / ".opencode" / "skill" / "good", "good", "d")
    project = make_project()
    assert names(project) == ["customize-opencode", "good"]
    text = warnings.text()
    assert f'{bad}: front matter field "name" must be a string' in text
    assert f'{nameless}: front matter field "name" is missing' in text
    project.generation.agents  # noqa: B018  (building agents discovers skills once: warned once)
    assert len(warnings) == 2


def test_non_utf8_skill_file_is_reported(project: Project, root: Path) -> None:
    folder = root / ".opencode" / "skill" / "latin"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    assert names(project) == ["customize-opencode"]
    [problem] = project.generation.skills.problems
    assert str(folder / "SKILL.md") in problem and "not UTF-8" in problem


# -- the front matter parser -----------------------------------------------------------------------------


def test_split_front_matter_keeps_the_body_and_strips_a_bom() -> None:
    front, body, first = split_front_matter("\ufeff---\nname: x\n---\nbody\n")
    assert (front, body, first) == ("name: x", "body\n", 2)
    assert split_front_matter("---\r\nname: x\r\n---\r\nbody")[:2] == ("name: x\r", "body")
    assert split_front_matter("no\n---\n")[0] is None


def test_parser_reads_the_common_yaml_forms() -> None:
    text = """\
# a comment
name: 'it''s here'
description: >
  folded over
  two lines

  and a paragraph
usage: |-
  keep
    these lines
quoted: "tab\\there \\u00e9"
colon: Use when: a colon is in the text
list: [Read, 'Bash(git:*)', 3]
block:
  - one
  - two
table:
  version: 1.5
  nested:
    deep: ~
flag: yes
trailing: value # a comment
"""
    assert parse_yaml(text) == {
        "name": "it's here",
        "description": "folded over two lines\nand a paragraph\n",
        "usage": "keep\n  these lines",
        "quoted": "tab\there é",
        "colon": "Use when: a colon is in the text",
        "list": ["Read", "Bash(git:*)", 3],
        "block": ["one", "two"],
        "table": {"version": 1.5, "nested": {"deep": None}},
        "flag": "yes",  # YAML 1.2: only true/false are booleans
        "trailing": "value",
    }


def test_parser_plain_scalar_continues_on_indented_lines() -> None:
    assert parse_yaml("description: first\n  second\nname: n\n") == {
        "description": "first second",
        "name": "n",
    }


def test_parser_keeps_block_scalar_chomping() -> None:
    assert parse_yaml("a: |\n  x\n\nb: 1\n")["a"] == "x\n"
    assert parse_yaml("a: |+\n  x\n\nb: 1\n")["a"] == "x\n\n"
    assert parse_yaml("a: >-\n  x\n  y\n")["a"] == "x y"


def test_parser_errors_carry_the_line_number() -> None:
    with pytest.raises(FrontMatterError, match="line 7"):
        parse_yaml("a: 1\nb: 2\nb: 3\n", first_line=5)


def test_discover_is_usable_without_a_project(tmp_path: Path) -> None:
    skill_file(tmp_path / "proj" / ".opencode" / "skill" / "x", "x", "d")
    env = {"HOME": str(tmp_path / "home")}
    found = discover(tmp_path / "proj", None, env, [tmp_path / "proj" / ".opencode"])
    assert found.names() == ["customize-opencode", "x"]
    assert found.directories() == [str(tmp_path / "proj" / ".opencode" / "skill" / "x")]


def test_skills_module_does_not_import_pydantic() -> None:
    import subprocess
    import sys

    code = (
        "import sys, opencode_cli.skills, opencode_cli.tools._skill_prompt; print('pydantic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@given(st.text())
def test_double_quoted_values_round_trip(value: str) -> None:
    front = "name: " + json.dumps(value, ensure_ascii=False) + "\ndescription: d\n"
    assert parse_yaml(front) == {"name": value, "description": "d"}


@given(st.text().filter(lambda v: "\n" not in v and "\r" not in v))
def test_single_quoted_values_round_trip(value: str) -> None:
    front = "name: '" + value.replace("'", "''") + "'\n"
    assert parse_yaml(front) == {"name": value}


@given(st.text(alphabet=st.characters(exclude_characters="\n\r"), min_size=1))
def test_a_skill_name_is_read_back_from_its_file(value: str) -> None:
    text = "---\nname: " + json.dumps(value, ensure_ascii=False) + "\ndescription: d\n---\nbody\n"
    if value.strip():
        skill = parse(text, "/s/SKILL.md")
        assert (skill.name, skill.content) == (value.strip(), "body\n")
    else:
        with pytest.raises(SkillFileError, match='field "name" is empty'):
            parse(text, "/s/SKILL.md")
