"""Skills: ``SKILL.md`` files found on disk, and the built-in one (builtin spec §13).

A skill is a directory holding a ``SKILL.md`` whose YAML front matter gives a ``name`` and a
``description`` (both strings: a skill the model is not told when to use cannot be listed for it, so it
is not loadable either); the rest of the file is the instructions the ``skill`` tool hands
to the model, and the other files of the directory are resources the instructions refer to.

Where skills are looked for, in load order (a later skill with the same name replaces an earlier one):

1. the built-in ``customize-opencode`` skill;
2. unless ``OPENCODE_DISABLE_EXTERNAL_SKILLS``: ``~/.claude/skills`` (unless ``OPENCODE_DISABLE_CLAUDE_CODE``
   or ``OPENCODE_DISABLE_CLAUDE_CODE_SKILLS``) and ``~/.agents/skills``, then ``.claude/skills`` and
   ``.agents/skills`` in every directory from the worktree root down to the working directory (nearer
   ones win; outside git only the working directory itself);
3. ``skill/`` and ``skills/`` of every config directory, in the config directories' order;
4. the directories listed in config ``skills.paths`` (``~/`` expanded, relative ones taken from the
   working directory).

Each root is searched at any depth (symbolic links followed, hidden directories included). A
``SKILL.md`` that cannot be used is skipped with a problem naming the file and, for the front matter,
the field. Config ``skills.urls`` (skills downloaded by OpenCode) is not supported: it is reported.

The front matter is read by :mod:`opencode_cli.frontmatter`, a small parser of the YAML subset such files
use, so this module needs neither PyYAML nor pydantic.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .record import Record

SKILL_FILE = "SKILL.md"
BUILTIN_LOCATION = "<built-in>"


class Skill(Record):
    """One skill: its name, description, where its ``SKILL.md`` is (``location``: its absolute path, or
    ``<built-in>``), and the instructions in it (``content``: the file without its front matter)."""

    __slots__ = ("content", "description", "location", "name")

    def __init__(self, name: str, description: str | None, location: str, content: str) -> None:
        self.name = name
        self.description = description
        self.location = location
        self.content = content

    @property
    def directory(self) -> str | None:
        """The skill's base directory (``None`` for the built-in skill)."""
        return None if self.location == BUILTIN_LOCATION else os.path.dirname(self.location)


class Skills(Record):
    """The skills of a project, in load order, with what went wrong while finding them (``problems``: one
    line per skipped file or unsupported setting, naming the file and the field)."""

    __slots__ = ("by_name", "problems")

    def __init__(self, by_name: dict[str, Skill] | None = None, problems: list[str] | None = None) -> None:
        self.by_name: dict[str, Skill] = {} if by_name is None else by_name
        self.problems: list[str] = [] if problems is None else problems

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``."""
        return self.by_name.get(name)

    def names(self) -> list[str]:
        """Every skill name, sorted."""
        return sorted(self.by_name)

    def sorted(self) -> list[Skill]:
        """Every skill, sorted by name."""
        return [self.by_name[name] for name in self.names()]

    def directories(self) -> list[str]:
        """The base directory of every skill found on disk (once each, in load order)."""
        found: list[str] = []
        for skill in self.by_name.values():
            folder = skill.directory
            if folder is not None and folder not in found:
                found.append(folder)
        return found


# -- loading one file ------------------------------------------------------------------------------------


class SkillFileError(ValueError):
    """A ``SKILL.md`` that cannot be used; the message names the file (and the field)."""


def load(path: str | Path) -> Skill:
    """Read one ``SKILL.md``; raises :class:`SkillFileError` naming the file and what is wrong."""
    location = os.path.abspath(path)
    try:
        with open(location, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        raise SkillFileError(f"{location}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise SkillFileError(f"{location}: cannot be read: {error.strerror or error}") from None
    return parse(text, location)


def parse(text: str, location: str) -> Skill:
    """A skill from the text of a ``SKILL.md`` at ``location``."""
    from .frontmatter import FrontMatterError, kind_of, parse_yaml, split_front_matter  # only with a skill

    try:
        front, body, first = split_front_matter(text)
        if front is None:
            raise SkillFileError(
                f"{location}: no front matter; the file must start with a '---' line, then "
                "'name: ...' and 'description: ...' lines, then a closing '---' line"
            )
        data = parse_yaml(front, first)
    except FrontMatterError as error:
        raise SkillFileError(f"{location}: front matter is not valid YAML: {error}") from None
    if "name" not in data:
        raise SkillFileError(f'{location}: front matter field "name" is missing (the skill name, a string)')
    name = data["name"]
    if not isinstance(name, str):
        hint = " (put it in quotes)" if isinstance(name, bool | int | float) else ""
        kind = kind_of(name)
        raise SkillFileError(f'{location}: front matter field "name" must be a string, not {kind}{hint}')
    if not name.strip():
        raise SkillFileError(f'{location}: front matter field "name" is empty')
    if "description" not in data:
        raise SkillFileError(
            f'{location}: front matter field "description" is missing (when to use the skill, a string); '
            "without it the skill is not listed for the model, so it cannot be loaded"
        )
    description = data["description"]
    if not isinstance(description, str):
        raise SkillFileError(
            f'{location}: front matter field "description" must be a string, not {kind_of(description)}'
        )
    if not description.strip():
        raise SkillFileError(f'{location}: front matter field "description" is empty')
    return Skill(name.strip(), description, location, body)


# -- discovery ---------------------------------------------------------------------------------------------


#: What this module names of :mod:`opencode_cli.frontmatter`, imported when first asked for: a project
#: without skills never needs the front matter parser.
_FRONT_MATTER = frozenset({"FrontMatterError", "kind_of", "parse_yaml", "split_front_matter"})


def __getattr__(name: str) -> Any:
    """The front matter parser's names (:data:`_FRONT_MATTER`), from :mod:`opencode_cli.frontmatter`."""
    if name in _FRONT_MATTER:
        from . import frontmatter

        return getattr(frontmatter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _flag(env: Mapping[str, str], name: str) -> bool:
    from .flags import parse_bool

    value = env.get(name)
    return False if value is None else parse_bool(name, value)


def _chain(directory: Path, worktree: Path | None) -> list[Path]:
    """``directory`` and its ancestors up to ``worktree``, farthest first (only ``directory`` outside git)."""
    chain = [directory]
    if worktree is not None:
        for parent in directory.parents:
            if not parent.is_relative_to(worktree):
                break
            chain.append(parent)
    return list(reversed(chain))


def roots(
    directory: Path,
    worktree: Path | None,
    env: Mapping[str, str],
    config_dirs: Iterable[Path] = (),
    config: Mapping[str, Any] | None = None,
) -> list[Path]:
    """The directories searched for ``SKILL.md`` files, in load order (missing ones included)."""
    from . import paths

    home = paths.home_dir(env)
    claude = not any(
        _flag(env, name) for name in ("OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS")
    )
    external = [".claude", ".agents"] if claude else [".agents"]
    found: list[Path] = []
    if not _flag(env, "OPENCODE_DISABLE_EXTERNAL_SKILLS"):
        found += [home / name / "skills" for name in external]
        for folder in _chain(directory, worktree):
            found += [folder / name / "skills" for name in external]
    for folder in config_dirs:
        found += [folder / "skill", folder / "skills"]
    for entry in _config_paths(config):
        expanded = str(home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry
        found.append(directory / expanded)
    unique: list[Path] = []
    for folder in found:
        normal = Path(os.path.normpath(folder))
        if normal not in unique:
            unique.append(normal)
    return unique


def _config_paths(config: Mapping[str, Any] | None) -> list[str]:
    table = (config or {}).get("skills")
    if not isinstance(table, Mapping):
        return []
    value = table.get("paths")
    if isinstance(value, str):
        return [value]
    return [entry for entry in value if isinstance(entry, str)] if isinstance(value, list) else []


def skill_files(root: Path) -> Iterator[str]:
    """Every ``SKILL.md`` under ``root`` at any depth, in name order (symbolic links followed once)."""
    if not root.is_dir():
        return
    seen: set[str] = set()
    for folder, subdirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            subdirs[:] = []
            continue
        seen.add(real)
        subdirs.sort()
        if SKILL_FILE in files and os.path.isfile(os.path.join(folder, SKILL_FILE)):
            yield os.path.join(folder, SKILL_FILE)


def discover(
    directory: Path,
    worktree: Path | None,
    env: Mapping[str, str],
    config_dirs: Iterable[Path] = (),
    config: Mapping[str, Any] | None = None,
) -> Skills:
    """Every skill of a project (see the module's docstring for where and in which order)."""
    skills = Skills()
    skills.by_name[BUILTIN.name] = BUILTIN
    seen: set[str] = set()
    for root in roots(directory, worktree, env, config_dirs, config):
        for path in skill_files(root):
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            try:
                skill = load(path)
            except SkillFileError as error:
                skills.problems.append(f"skill skipped: {error}")
                continue
            previous = skills.by_name.pop(skill.name, None)
            if previous is not None and previous.location != BUILTIN_LOCATION:
                skills.problems.append(
                    f'skill "{skill.name}" is defined twice: {skill.location} replaces {previous.location}'
                )
            skills.by_name[skill.name] = skill
    table = (config or {}).get("skills")
    if isinstance(table, Mapping) and table.get("urls"):
        skills.problems.append(
            "config skills.urls is not supported by opencode-tools: download the skills and list their "
            "directory in skills.paths instead"
        )
    return skills


def available_block(skills: Skills) -> str:
    """The ``<available_skills>`` list the ``skill`` tool's description ends with.

    Only skills with a description are listed (the model could not tell when to use the others), sorted
    by name; a skill on disk is located by the ``file://`` URL of its ``SKILL.md``.
    """
    listed = [skill for skill in skills.sorted() if skill.description]
    if not listed:
        return "No skills are available."
    lines = ["<available_skills>"]
    for skill in listed:
        location = "built-in" if skill.directory is None else Path(skill.location).as_uri()
        lines += [
            "  <skill>",
            f"    <name>{skill.name}</name>",
            f"    <description>{skill.description}</description>",
            f"    <location>{location}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


# -- the built-in skill ------------------------------------------------------------------------------------

_BUILTIN_BODY = """\
opencode-tools is configured with TOML files and extended with Python. Use this guide when the user wants
to change how the tools behave, allow or forbid something, or add a tool, a plugin or a skill.

## Configuration files

`opencode.toml` files are merged, later ones winning: `~/.config/opencode/opencode.toml` (global), the file
named by `$OPENCODE_CONFIG`, `opencode.toml` from the git root down to the working directory,
`.opencode/opencode.toml` likewise, then `$OPENCODE_CONFIG_DIR/opencode.toml`. Run `opencode config path`
to see which files are read, `opencode config get KEY` and `opencode config set KEY VALUE` to read and
write keys.

```toml
model = "openai/gpt-5"

[tool_output]          # where tool output is cut (the full text is saved to a file)
max_lines = 2000
max_bytes = 51200

[permission]           # rules: the last one that matches wins
bash = { "*" = "ask", "git status*" = "allow" }
external_directory = { "/srv/data/*" = "allow" }
read = { "*.env" = "deny" }

[agent.reviewer]       # an agent of your own
mode = "subagent"
description = "Reviews changes"
permission = { edit = "deny" }
```

Each permission rule has an action `allow`, `ask` or `deny`; patterns use `*` (anything, `/` included)
and `?`. `opencode permissions check PERMISSION PATTERN` shows which rule decides.

## Tool files

A Python file in `tool/` or `tools/` of a config directory (`.opencode/`, `~/.config/opencode/`) adds
tools. A function decorated with `@tool` and named `default` takes the file's name; any other one is
called `<file>_<function>`. Parameters come from the signature; the docstring is the description.

```python
from opencode_cli import ToolContext, tool


@tool
def default(city: str, ctx: ToolContext) -> str:
    \"\"\"Current weather for a city.\"\"\"
    return f"{city}: sunny"
```

## Plugins

A Python package declares an entry point in the `opencode` group and implements hooks marked with
`opencode_cli.hookimpl`: `register_tools`, `tool_definition`, `tool_execute_before`, `tool_execute_after`.
`opencode plugins list` shows what is loaded.

## Skills

A skill is a directory with a `SKILL.md`: front matter with `name` and `description`, then the
instructions. Put it in `.opencode/skill/<name>/` (or `skills/`), `~/.config/opencode/skills/<name>/`,
`.claude/skills/<name>/`, `.agents/skills/<name>/`, or a directory listed in `skills.paths`. Other files
of the directory (scripts, references) are offered alongside the instructions.

```markdown
---
name: release-notes
description: Write release notes from the git log in the house style.
---
Read the log since the last tag with `git log --oneline`, then ...
```
"""

BUILTIN = Skill(
    name="customize-opencode",
    description=(
        "How to configure and extend opencode-tools: opencode.toml settings, permission rules, agents, tool "
        "files, plugins and skills. Use it when the user asks to change opencode's behaviour or to add a "
        "tool, plugin or skill."
    ),
    location=BUILTIN_LOCATION,
    content=_BUILTIN_BODY,
)
