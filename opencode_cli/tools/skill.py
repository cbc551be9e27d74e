"""``skill``: hand the model the instructions of a skill, with a sample of its files (builtin spec §13).

Skills are the project's (:attr:`opencode_cli.generation.Generation.skills`, see :mod:`opencode_cli.skills`);
a tool built without a project finds them from the call's directory and environment. The description
lists the skills that have a description (upstream puts that list in the system prompt, which this
package does not have).

An unknown name fails before anything is asked. Otherwise the ``skill`` permission is asked with the
name as pattern, then up to 10 files of the skill's directory are listed with ripgrep (hidden files
included, links not followed, ``SKILL.md`` and ``.git`` left out; the sample is sorted) and the output is
built. The built-in skill has no directory: its file list is empty.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..errors import ToolError
from ..results import ToolResult
from ..skills import SKILL_FILE, Skill
from . import _ripgrep
from ._skill_prompt import skills_of

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..project import Project

FILE_LIMIT = 10


@functools.cache
def parameters() -> type[BaseModel]:
    """The skill tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field

    from ._arguments import Arguments

    class SkillParameters(Arguments):
        """Arguments of the skill tool."""

        name: str = Field(description="The name of the skill to load, as listed in available_skills")

    return SkillParameters


async def sample_files(skill: Skill, ctx: ToolContext) -> list[str]:
    """Up to :data:`FILE_LIMIT` files of the skill's directory (absolute paths, sorted)."""
    folder = skill.directory
    if folder is None or not os.path.isdir(folder):
        return []

    def parse(line: bytes) -> str:
        relative = _ripgrep.relative_path(line.decode("utf-8", "replace"))
        return os.path.normpath(os.path.join(folder, relative))

    outcome = await _ripgrep.run(
        ["--files", "--hidden", f"--glob=!{SKILL_FILE}", "--glob=!**/.git/**", "."],
        cwd=folder,
        limit=FILE_LIMIT,
        parse=parse,
        abort=ctx.abort,
        env=ctx.env,
    )
    return sorted(_ripgrep.judge(outcome))


def render(skill: Skill, files: list[str]) -> str:
    """The ``<skill_content>`` block the model receives."""
    listing = "\n".join(f"<file>{path}</file>" for path in files)
    return "\n".join(
        [
            f'<skill_content name="{skill.name}">',
            f"# Skill: {skill.name}",
            "",
            skill.content.strip(),
            "",
            f"Base directory for this skill: {skill.directory or skill.location}",
            "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.",
            "Note: file list is sampled.",
            "",
            "<skill_files>",
            listing,
            "</skill_files>",
            "</skill_content>",
        ]
    )


def init(project: Project | None = None) -> dict[str, Any]:
    """The tool's definition, built on first use (``project`` supplies the skills)."""

    async def execute(params: Any, ctx: ToolContext) -> ToolResult:
        """Load the named skill."""
        import asyncio

        skills = await asyncio.to_thread(skills_of, project, ctx)
        skill = skills.get(params.name)
        if skill is None:
            available = ", ".join(skills.names()) or "none"
            raise ToolError(f'Skill "{params.name}" not found. Available skills: {available}')
        await ctx.ask("skill", [params.name], always=[params.name], metadata={})
        files = await sample_files(skill, ctx)
        return ToolResult(
            title=f"Loaded skill: {skill.name}",
            output=render(skill, files),
            metadata={"name": skill.name, "dir": skill.directory or skill.location},
        )

    # the description comes from define(..., description=describer(project))
    return {"parameters_from": parameters, "execute": execute}
