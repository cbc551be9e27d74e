"""Which generation's registry is being built in this context.

While a reload prepares the next generation, its sources read *its* config (the trusted view of the files
as they are now), which is not yet the project's current one. :class:`~opencode_cli.generation.Generation`
sets :data:`BUILDING` around the build; a source that reads settings (a bridge's ``[llm]`` table) asks
:func:`building`. A module of its own so that the built-in plugins need not import the generation.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .generation import Generation
    from .project import Project

#: The generation whose registry is being built in this context (``None``: none is).
BUILDING: ContextVar[Generation | None] = ContextVar("opencode_building_generation", default=None)


def building(project: Project) -> Generation:
    """The generation of ``project`` whose registry is being built here, else its current one: what a
    ``register_tools`` hook that reads the config reads it from."""
    generation = BUILDING.get()
    return generation if generation is not None and generation.project is project else project.generation
