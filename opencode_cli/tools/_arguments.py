"""The base of the built-ins' parameter models. It imports pydantic, so a tool imports it only where its
model is made (see :mod:`opencode_cli.plain_args` for the calls that never need the model)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Arguments(BaseModel):
    """A built-in's arguments: keys the tool does not know are ignored, as OpenCode's schemas let them be."""

    model_config = ConfigDict(extra="ignore")
